/// The interconnect charts of the HTML page, drawn from what a case's metrics hold (the comms
/// workload's, docs/workloads.md): bus bandwidth against message size, one line per case of a
/// size sweep (metrics `sizes` with `busbw_gbps`), the link's nominal rate drawn where the case
/// states one; and the pair matrix as a heat map (metrics `bandwidth_gbps`, `labels`, `links`),
/// each link coloured by its bandwidth over the median of the links of its kind, the rule that
/// names slow links.

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "format_util.hpp"
#include "html_charts.hpp"
#include "scalebench/stats.hpp"
#include "summary_util.hpp"

namespace sb::results::detail {
namespace {

constexpr const char* kCeiling = "#555555";
const std::vector<std::string>& line_colors() {
  static const std::vector<std::string> c{"#4e79a7", "#f28e2b", "#59a14f", "#e15759",
                                          "#76b7b2", "#edc948", "#b07aa1", "#9c755f"};
  return c;
}

/// Heat-map classes: a link's bandwidth over its kind's median (0.8: the slow-link rule).
struct Band {
  double at_least;
  const char* color;
  const char* text;
};
const std::vector<Band>& bands() {
  static const std::vector<Band> b{
      {0.95, "#1a9850", "at least 95% of the median of its kind's other links"},
      {0.8, "#a6d96a", "80-95%"},
      {0.5, "#fdae61", "50-80%: a slow link"},
      {0.0, "#d73027", "below 50%: a slow link"}};
  return b;
}
constexpr const char* kDiagonal = "#eeeeee";
constexpr const char* kUnmeasured = "#ffffff";

std::string bytes_tick(double v) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  return fmt::format("{:g} {}", v, units[u]);
}

bool has_sweep(const json& c) {
  const json& s = sub(sub(c, "metrics"), "sizes");
  return s.is_array() && !s.empty() && s[0].is_object() && s[0].contains("busbw_gbps");
}

bool has_matrix(const json& c) {
  const json& m = sub(c, "metrics");
  return sub(m, "bandwidth_gbps").is_array() && sub(m, "labels").is_array() &&
         sub(m, "links").is_array();
}

/// One chart per path: busbw against log2(bytes), a line per case.
std::string sweep_chart(const std::string& path, const std::vector<const json*>& cases) {
  double bmin = 1e300, bmax = 0, ymax = 0;
  for (const json* c : cases) {
    const json& m = sub(*c, "metrics");
    for (const auto& r : sub(m, "sizes")) {
      const double b = num(r, "bytes"), y = num(r, "busbw_gbps");
      if (!(b > 0) || !std::isfinite(y)) continue;
      bmin = std::min(bmin, b);
      bmax = std::max(bmax, b);
      ymax = std::max(ymax, y);
    }
    ymax = std::max(ymax, num(m, "ceiling_value", 0.0) / 1e9);
  }
  if (!(bmax > 0)) return {};
  if (bmax <= bmin) bmax = bmin * 2;
  // Five steps of 1, 2 or 5 x 10^k up to the largest figure.
  double step = ymax > 0 ? std::pow(10.0, std::floor(std::log10(ymax / 5))) : 0.2;
  for (const double m : {1.0, 2.0, 5.0, 10.0})
    if (ymax <= 5 * m * step + 1e-12) {
      step *= m;
      break;
    }
  ymax = 5 * step;
  const double left = 64, right = 20, top = 22, plot_w = 640, plot_h = 240, bottom = 40;
  const double width = left + plot_w + right, height = top + plot_h + bottom;
  const double l0 = std::log2(bmin), l1 = std::log2(bmax);
  auto x_of = [&](double b) { return left + (std::log2(b) - l0) / (l1 - l0) * plot_w; };
  auto y_of = [&](double g) { return top + plot_h - g / ymax * plot_h; };
  std::string out =
      svg_open("busbw", width, height, fmt::format(" data-path=\"{}\"", html_escape(path)));
  // Axes: powers of 4 on x, five steps on y.
  for (double e = std::ceil(l0); e <= l1 + 1e-9; e += 1) {
    if (static_cast<long long>(e) % 2 != 0 && l1 - l0 > 12) continue;
    const double x = x_of(std::exp2(e));
    out += fmt::format(
        "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.0f}\" y2=\"{2:.0f}\" "
        "stroke=\"#eee\"/>\n",
        x, top, top + plot_h);
    if (static_cast<long long>(e) % (l1 - l0 > 12 ? 4 : 2) == 0)
      out += fmt::format("<text x=\"{:.1f}\" y=\"{:.0f}\" text-anchor=\"middle\">{}</text>\n", x,
                         top + plot_h + 14, bytes_tick(std::exp2(e)));
  }
  for (int k = 0; k <= 5; ++k) {
    const double g = ymax * k / 5, y = y_of(g);
    out += fmt::format(
        "<line x1=\"{:.0f}\" x2=\"{:.0f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" "
        "stroke=\"{}\"/>\n",
        left, left + plot_w, y, y, k == 0 ? "#999" : "#eee");
    out += fmt::format("<text x=\"{:.0f}\" y=\"{:.1f}\" text-anchor=\"end\">{:g}</text>\n",
                       left - 4, y + 4, std::round(g / step * 1e6) / 1e6 * step);
  }
  out += fmt::format(
      "<text x=\"{:.0f}\" y=\"{:.0f}\" text-anchor=\"middle\">message size "
      "(bytes, log scale)</text>\n",
      left + plot_w / 2, height - 6);
  out += "<text x=\"4\" y=\"12\">busbw (GB/s)</text>\n";
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string& color = line_colors()[i % line_colors().size()];
    const json& m = sub(*cases[i], "metrics");
    std::string points;
    std::string dots;
    for (const auto& r : sub(m, "sizes")) {
      const double b = num(r, "bytes"), y = num(r, "busbw_gbps");
      if (!(b > 0) || !std::isfinite(y)) continue;
      points += fmt::format("{:.1f},{:.1f} ", x_of(b), y_of(y));
      dots += fmt::format(
          "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.5\" fill=\"{}\"><title>{}: {} busbw "
          "{:.3g} GB/s</title></circle>\n",
          x_of(b), y_of(y), color, html_escape(str(sub(*cases[i], "params"), "op")), bytes_tick(b),
          y);
    }
    out += fmt::format(
               "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" "
               "points=\"{}\"/>\n",
               color, points) +
           dots;
    const double ceiling = num(m, "ceiling_value");
    if (std::isfinite(ceiling) && ceiling > 0)
      out += fmt::format(
          "<line x1=\"{:.0f}\" x2=\"{:.0f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
          "stroke-dasharray=\"5 3\"><title>{} {:.3g} GB/s</title></line>\n",
          left, left + plot_w, y_of(ceiling / 1e9), y_of(ceiling / 1e9), kCeiling,
          html_escape(str(m, "ceiling")), ceiling / 1e9);
  }
  return out + "</svg>\n";
}

/// The median bandwidth of the other links of the same kind as link k (NaN with fewer than two):
/// the slow-link rule's reference (workloads/comms/link_health.hpp).
double peers_median(const json& links, std::size_t k) {
  std::vector<double> v;
  const std::string kind = str(links[k], "kind");
  for (std::size_t j = 0; j < links.size(); ++j) {
    const double g = num(links[j], "bandwidth_gbps");
    if (j != k && g > 0 && str(links[j], "kind") == kind) v.push_back(g);
  }
  return v.size() >= 2 ? median(v) : kNaN;
}
constexpr const char* kAlone = "#c6d7ea";

std::string matrix_chart(const json& c, bool* alone) {
  const json& m = sub(c, "metrics");
  const json& labels = sub(m, "labels");
  const json& bw = sub(m, "bandwidth_gbps");
  const std::size_t n = labels.size();
  if (n < 2 || bw.size() != n) return {};
  const json& links = sub(m, "links");
  std::map<std::pair<int, int>, std::size_t> link_of;
  for (std::size_t k = 0; k < links.size(); ++k)
    link_of[{static_cast<int>(num(links[k], "src")), static_cast<int>(num(links[k], "dst"))}] = k;
  // Rows: "k: name"; columns: k (the case rank), so any name fits.
  std::vector<std::string> rows;
  std::size_t longest = 0;
  for (std::size_t i = 0; i < n; ++i) {
    rows.push_back(elide_middle(
        fmt::format("{}: {}", i, labels[i].is_string() ? labels[i].get<std::string>() : ""), 32));
    longest = std::max(longest, display_width(rows.back()));
  }
  const double room = 8 + 6.5 * static_cast<double>(longest);
  const double cell = n <= 8 ? 44 : n <= 16 ? 30 : std::max(6.0, 640.0 / static_cast<double>(n));
  const bool numbers = n <= 16;
  const double left = room, top = 34;
  const double width = std::max(left + cell * static_cast<double>(n) + 10, 330.0);
  const double height = top + cell * static_cast<double>(n) + 24;
  std::string out = svg_open("pair-matrix", width, height);
  out += fmt::format("<text x=\"{:.0f}\" y=\"12\" text-anchor=\"middle\">to (receiver)</text>\n",
                     left + cell * static_cast<double>(n) / 2);
  if (numbers)
    for (std::size_t j = 0; j < n; ++j)
      out += fmt::format("<text x=\"{:.1f}\" y=\"{:.0f}\" text-anchor=\"middle\">{}</text>\n",
                         left + cell * (static_cast<double>(j) + 0.5), top - 6, j);
  for (std::size_t i = 0; i < n; ++i) {
    const std::string name = labels[i].is_string() ? labels[i].get<std::string>() : "";
    if (numbers || i % std::max<std::size_t>(1, static_cast<std::size_t>(11.0 / cell) + 1) == 0)
      out +=
          fmt::format("<text x=\"{:.0f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", left - 4,
                      top + cell * (static_cast<double>(i) + 0.5) + 4, html_escape(rows[i]));
    for (std::size_t j = 0; j < n; ++j) {
      const double x = left + cell * static_cast<double>(j);
      const double y = top + cell * static_cast<double>(i);
      const double g = bw[i].is_array() && j < bw[i].size() && bw[i][j].is_number()
                           ? bw[i][j].get<double>()
                           : 0.0;
      std::string color = i == j ? kDiagonal : kUnmeasured;
      std::string title = i == j ? "the same worker" : "not measured";
      const auto it = link_of.find({static_cast<int>(i), static_cast<int>(j)});
      if (i != j && it != link_of.end() && g > 0) {
        const json& link = links[it->second];
        const std::string kind = str(link, "kind");
        const double med = peers_median(links, it->second);
        const double ratio = g / med;
        color = kAlone;
        if (std::isfinite(ratio)) {
          for (const Band& b : bands())
            if (ratio >= b.at_least) {
              color = b.color;
              break;
            }
        } else {
          *alone = true;
        }
        title =
            fmt::format("{} -> {}: {:.3g} GB/s, {:.3g} us ({}{}){}", name, str(link, "dst_name"), g,
                        num(link, "latency_us"), kind,
                        str(link, "topology").empty() ? "" : " " + str(link, "topology"),
                        std::isfinite(ratio)
                            ? fmt::format("; {:.0f}% of the median of its {} peers, {:.3g} GB/s",
                                          ratio * 100, kind, med)
                            : std::string("; fewer than two peers of its kind"));
      }
      out += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\" "
          "stroke=\"#fff\"><title>{}</title></rect>\n",
          x, y, cell, cell, color, html_escape(title));
      if (numbers && i != j && g > 0)
        out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{:.3g}</text>\n",
                           x + cell / 2, y + cell / 2 + 4, g);
    }
  }
  out += fmt::format(
      "<text x=\"{:.0f}\" y=\"{:.0f}\" text-anchor=\"middle\">GB/s from the row's "
      "worker to the column's</text>\n",
      width / 2, height - 6);
  return out + "</svg>\n";
}

}  // namespace

std::string link_charts(const json& model) {
  const json& cases = sub(model, "cases");
  if (!cases.is_array()) return {};
  std::string out;
  // Sweeps: one chart per path, one line per case.
  std::vector<std::pair<std::string, std::vector<const json*>>> paths;
  for (const auto& c : cases) {
    if (str(c, "status") != "ok" || !has_sweep(c)) continue;
    const std::string p = str(c, "path");
    auto it = std::find_if(paths.begin(), paths.end(), [&](const auto& e) { return e.first == p; });
    if (it == paths.end()) it = paths.insert(paths.end(), {p, {}});
    it->second.push_back(&c);
  }
  for (const auto& [path, list] : paths) {
    const std::string chart = sweep_chart(path, list);
    if (chart.empty()) continue;
    out += fmt::format("<h3>Bus bandwidth against message size, {}</h3>\n", html_escape(path));
    out += chart;
    std::vector<LegendKey> keys;
    bool ceiling = false;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const json& params = sub(*list[i], "params");
      const std::string op = str(params, "op");
      keys.push_back(
          {line_colors()[i % line_colors().size()],
           (op.empty() ? case_label(*list[i]) : op) + " (" + case_parallel_label(*list[i]) + ")",
           true});
      ceiling = ceiling || num(sub(*list[i], "metrics"), "ceiling_value") > 0;
    }
    if (ceiling) keys.push_back({kCeiling, "the link's nominal rate (efficiency's ceiling)", true});
    out += html_legend("busbw", keys);
  }
  for (const auto& c : cases) {
    if (str(c, "status") != "ok" || !has_matrix(c)) continue;
    bool alone = false;
    const std::string chart = matrix_chart(c, &alone);
    if (chart.empty()) continue;
    out += fmt::format("<h3>Pair matrix, {} ({})</h3>\n", html_escape(str(c, "path")),
                       html_escape(case_parallel_label(c)));
    out += chart;
    std::vector<LegendKey> keys;
    for (const Band& b : bands()) keys.push_back({b.color, b.text});
    keys.push_back({kDiagonal, "the same worker"});
    if (alone) keys.push_back({kAlone, "fewer than two other links of its kind: not compared"});
    out += html_legend("pair-matrix", keys);
  }
  return out;
}

}  // namespace sb::results::detail
