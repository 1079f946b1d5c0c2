/// The sections of a merged report's HTML page (merge.hpp): the fleet's nodes with the command
/// that re-submits those not ok or missing, and the scaling study's table and chart (speedup
/// against the node count, ideal scaling dashed), each chart followed by its legend.

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "format_util.hpp"
#include "html_charts.hpp"
#include "scalebench/fleet.hpp"
#include "summary_util.hpp"

namespace sb::results::detail {
namespace {

constexpr const char* kIdeal = "#999999";

const std::vector<const char*>& palette() {
  static const std::vector<const char*> p{"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1",
                                          "#76b7b2", "#edc948", "#9c755f", "#ff9da7", "#bab0ac"};
  return p;
}

std::string fleet_row(const json& r) {
  const std::string status = str(r, "status");
  return fmt::format(
      "<tr><td>{}</td><td class=\"{}\">{}</td><td>{}</td><td class=\"n\">{}</td><td>{}</td>"
      "<td>{}</td><td>{}</td></tr>\n",
      html_escape(str(r, "host")), status == "ok" ? "ok" : "bad", html_escape(status),
      html_escape(str(r, "verdict")),
      status == "missing" ? std::string("-")
                          : fmt::format("{} of {}", static_cast<long long>(num(r, "not_ok", 0)),
                                        static_cast<long long>(num(r, "devices", 0))),
      html_escape(str(r, "worst")), html_escape(str(r, "report")), html_escape(str(r, "job_id")));
}

}  // namespace

std::string fleet_section(const nlohmann::json& model) {
  const json rows = fleet_nodes(model);
  const std::string text = format_fleet_text(model);
  std::string out =
      fmt::format("<p id=\"fleet-tally\">{}</p>\n", html_escape(text.substr(0, text.find('\n'))));
  const std::string head =
      "<tr><th>node</th><th>status</th><th>verdict</th><th>devices not ok</th><th>worst device"
      "</th><th>report</th><th>job</th></tr>\n";
  std::string bad, ok;
  std::size_t n_ok = 0;
  for (const auto& r : rows) {
    if (str(r, "status") == "ok") {
      ok += fleet_row(r);
      ++n_ok;
    } else {
      bad += fleet_row(r);
    }
  }
  out += "<div class=\"scroll\"><table id=\"fleet\">" + head + bad;
  // Many ok nodes fold away under the table of those that need a look.
  if (n_ok <= 64 || bad.empty()) {
    out += ok + "</table></div>\n";
  } else {
    out += fmt::format(
        "</table></div>\n<details><summary>{} ok nodes</summary>\n<div class=\"scroll\"><table>"
        "{}{}</table></div></details>\n",
        n_ok, head, ok);
  }
  if (const std::string cmd = str(sub(model, "fleet"), "resubmit"); !cmd.empty())
    out += "<p>Re-submit the failed and missing nodes:</p>\n<pre id=\"resubmit\">" +
           html_escape(cmd) + "</pre>\n";
  for (const auto& d : sub(sub(model, "fleet"), "duplicates"))
    if (d.is_string()) out += "<p class=\"note\">" + html_escape(d.get<std::string>()) + "</p>\n";
  return out;
}

std::string scaling_section(const nlohmann::json& model) {
  const json& s = sub(model, "scaling");
  const json& rows = sub(s, "rows");
  if (!rows.is_array() || rows.empty()) return "<p class=\"note\">no scaling data</p>\n";
  const std::string mode = str(s, "mode", "strong");
  std::string out = fmt::format(
      "<p>{} scaling: {}</p>\n", mode == "weak" ? "Weak" : "Strong",
      mode == "weak" ? "the problem grows with the node count by its workload's rule; speedup is "
                       "the work per second against the fewest nodes', efficiency that over the "
                       "node ratio (ideal: 100%)."
                     : "the same problem on more nodes; speedup is the fewest nodes' median time "
                       "over this one, efficiency that over the node ratio (ideal: 100%).");
  out +=
      "<div class=\"scroll\"><table id=\"scaling\"><tr><th>case</th><th>nodes</th><th>workers"
      "</th><th>median</th><th>speedup</th><th>ideal</th><th>efficiency</th><th>status</th></tr>\n";
  // Series for the chart: per case, (nodes, speedup).
  std::vector<std::pair<std::string, std::vector<std::pair<double, double>>>> series;
  double max_nodes = 1, min_nodes = 1e300, max_y = 1, min_y = 1;
  for (const auto& r : rows) {
    const std::string key = str(r, "case");
    const std::string device = str(r, "path") == "multi-gpu" ? "gpu" : "cpu";
    const double eff = num(r, "efficiency");
    out += fmt::format(
        "<tr><td>{}</td><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{}</td><td "
        "class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n{}\">{}</td><td>{}</td></tr>\n",
        html_escape(key), static_cast<long long>(num(r, "nodes", 0)),
        html_escape(parallel_label(device, num(r, "workers"), num(r, "threads_per_worker"))),
        human_seconds(num(r, "median_s")), human_ratio(num(r, "speedup")),
        std::isfinite(num(r, "ideal")) ? fmt::format("{:g}x", num(r, "ideal")) : "-",
        std::isfinite(eff) && eff < 0.5 ? " warn" : "", human_percent(eff),
        html_escape(str(r, "status")));
    const double n = num(r, "nodes", 0), sp = num(r, "speedup"), ideal = num(r, "ideal");
    if (!(n > 0) || !std::isfinite(sp) || sp <= 0) continue;
    auto it =
        std::find_if(series.begin(), series.end(), [&](const auto& p) { return p.first == key; });
    if (it == series.end()) it = series.insert(series.end(), {key, {}});
    it->second.emplace_back(n, sp);
    max_nodes = std::max(max_nodes, n);
    min_nodes = std::min(min_nodes, n);
    max_y = std::max({max_y, sp, std::isfinite(ideal) ? ideal : 1.0});
    min_y = std::min(min_y, sp);
  }
  out += "</table></div>\n";
  if (series.empty()) return out + "<p class=\"note\">no case ran ok at two node counts</p>\n";
  // Log-2 axes: node counts double; the ideal is the diagonal.
  const double left = 56, top = 14, w = 460, h = 260;
  const double x_lo = std::log2(min_nodes), x_hi = std::max(x_lo + 1, std::log2(max_nodes));
  const double y_lo = std::floor(std::log2(min_y)),
               y_hi = std::max(y_lo + 1, std::ceil(std::log2(max_y)));
  auto X = [&](double n) { return left + (std::log2(n) - x_lo) / (x_hi - x_lo) * w; };
  auto Y = [&](double y) { return top + h - (std::log2(y) - y_lo) / (y_hi - y_lo) * h; };
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" role=\"img\" "
      "class=\"chart\" data-chart=\"scaling-study\">\n",
      left + w + 24, top + h + 40);
  for (double e = std::ceil(x_lo); e <= x_hi + 1e-9; e += 1)
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.0f}\" y2=\"{2:.0f}\" stroke=\"#eee\"/>"
        "<text x=\"{0:.1f}\" y=\"{3:.0f}\" text-anchor=\"middle\">{4:g}</text>\n",
        X(std::pow(2.0, e)), top, top + h, top + h + 14, std::pow(2.0, e));
  for (double e = y_lo; e <= y_hi + 1e-9; e += 1)
    svg += fmt::format(
        "<line x1=\"{0:.0f}\" x2=\"{1:.0f}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#eee\"/>"
        "<text x=\"{3:.0f}\" y=\"{4:.1f}\" text-anchor=\"end\">{5:g}x</text>\n",
        left, left + w, Y(std::pow(2.0, e)), left - 4, Y(std::pow(2.0, e)) + 4, std::pow(2.0, e));
  svg += fmt::format(
      "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
      "stroke-dasharray=\"4 3\"><title>ideal: speedup = node ratio</title></line>\n",
      X(min_nodes), Y(1.0), X(max_nodes), Y(max_nodes / min_nodes), kIdeal);
  svg += fmt::format(
      "<text x=\"{:.0f}\" y=\"{:.0f}\" text-anchor=\"middle\">nodes (speedup against the fewest "
      "nodes; efficiency in each point's title)</text>\n",
      left + w / 2, top + h + 32);
  std::vector<LegendKey> keys;
  for (std::size_t i = 0; i < series.size(); ++i) {
    const char* color = palette()[i % palette().size()];
    std::string pts;
    for (const auto& [n, sp] : series[i].second) pts += fmt::format("{:.1f},{:.1f} ", X(n), Y(sp));
    svg += fmt::format(
        "<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.8\"/>\n", pts, color);
    const double n0 = series[i].second.front().first;
    for (const auto& [n, sp] : series[i].second)
      svg += fmt::format(
          "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\"><title>{}: {:g} nodes, "
          "speedup {}, efficiency {}</title></circle>\n",
          X(n), Y(sp), color, html_escape(series[i].first), n, human_ratio(sp),
          human_percent(sp / (n / n0)));
    keys.push_back({color, elide_middle(series[i].first, 96)});
  }
  svg += "</svg>\n";
  keys.push_back({kIdeal, "ideal: speedup equal to the node ratio (efficiency 100%)", true});
  return out + svg + html_legend("scaling-study", keys);
}

}  // namespace sb::results::detail
