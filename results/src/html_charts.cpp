/// The inline-SVG charts of the HTML page: speedup bars, repeat distributions, scaling, phase
/// breakdown and task streams, each followed by a legend that explains every colour it paints.

#include "html_charts.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "format_util.hpp"
#include "scalebench/stats.hpp"
#include "summary_util.hpp"

namespace sb::results::detail {
namespace {

constexpr const char* kFaster = "#4e79a7";  // speedup >= 1, a repeat of an ok case
constexpr const char* kSlower = "#e15759";  // speedup < 1, a repeat of a case not ok
constexpr const char* kBox = "#c6d7ea";     // quartile box
constexpr const char* kMedian = "#1f3b57";  // median tick
constexpr const char* kRange = "#999999";   // min..max whisker, reference lines

const std::map<std::string, std::string>& phase_colors() {
  static const std::map<std::string, std::string> c{{"generate", "#4e79a7"},
                                                    {"compute", "#f28e2b"},
                                                    {"communicate", "#59a14f"},
                                                    {"other", "#bab0ac"}};
  return c;
}

constexpr double kCharPx = 6.5;  // width of a character at 11px, for the room a label needs

struct LogAxis {
  double lo10 = 0, hi10 = 1;
  double x0 = 0, width = 1;
  [[nodiscard]] double at(double v) const {
    return x0 + (std::log10(v) - lo10) / (hi10 - lo10) * width;
  }
};

/// Whole decades around [vmin, vmax]; with `with_one` the axis also holds 1 (speedups).
LogAxis log_axis(double vmin, double vmax, double x0, double width, bool with_one = true) {
  LogAxis a;
  a.lo10 = std::floor(std::log10(with_one ? std::min(1.0, vmin) : vmin) + 1e-9);
  a.hi10 = std::ceil(std::log10(with_one ? std::max(1.0, vmax) : vmax) - 1e-9);
  if (a.hi10 <= a.lo10) a.hi10 = a.lo10 + 1;
  a.x0 = x0;
  a.width = width;
  return a;
}

/// Vertical grid lines with labels at 1, 2, 5 x 10^k of a log axis.
std::string log_grid(const LogAxis& ax, double y0, double y1, double label_y,
                     std::string (*label)(double)) {
  std::string out;
  for (double e = ax.lo10; e <= ax.hi10 + 1e-9; e += 1) {
    for (double m : {1.0, 2.0, 5.0}) {
      const double v = m * std::pow(10.0, e);
      if (std::log10(v) > ax.hi10 + 1e-9) break;
      const double x = ax.at(v);
      const bool major = m == 1.0;
      out += fmt::format(
          "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.0f}\" y2=\"{2:.0f}\" stroke=\"{3}\"/>\n", x,
          y0, y1, major ? "#bbb" : "#eee");
      if (major || ax.hi10 - ax.lo10 <= 2)
        out += fmt::format("<text x=\"{:.1f}\" y=\"{:.0f}\" text-anchor=\"middle\">{}</text>\n", x,
                           label_y, label(v));
    }
  }
  return out;
}

std::string ratio_tick(double v) {
  return fmt::format("{:g}x", v);
}

/// "1 s", "200 ms", "50 us": tick values (1, 2, 5 x 10^k) need no decimals.
std::string seconds_tick(double v) {
  if (v >= 1.0) return fmt::format("{:g} s", v);
  if (v >= 1e-3) return fmt::format("{:g} ms", std::round(v * 1e6) / 1e3);
  if (v >= 1e-6) return fmt::format("{:g} us", std::round(v * 1e9) / 1e3);
  return fmt::format("{:g} ns", std::round(v * 1e12) / 1e3);
}

/// Row labels of one workload's summary rows: the path, the parameters that differ between the
/// rows (those all share go to `common`, said once above the chart) and how it ran ("1w×2t").
constexpr std::size_t kMaxLabel = 56;
std::vector<std::string> short_labels(const std::vector<const nlohmann::json*>& rows,
                                      const std::string& workload, std::string* common) {
  std::vector<CaseIdParts> parts;
  for (const auto* r : rows) parts.push_back(split_case_id(str(*r, "case"), workload));
  const std::vector<std::string> shared = shared_params(parts);
  common->clear();
  for (const auto& p : shared) *common += (common->empty() ? "" : ",") + p;
  std::vector<std::string> labels;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::string l = parts[i].path;
    std::string own;
    for (const auto& p : parts[i].params)
      if (std::find(shared.begin(), shared.end(), p) == shared.end())
        own += (own.empty() ? "" : ",") + p;
    if (!own.empty()) l += " " + own;
    const std::string device =
        str(*rows[i], "path").find("gpu") != std::string::npos ? "gpu" : "cpu";
    l += " (" +
         parallel_label(device, num(*rows[i], "workers"), num(*rows[i], "threads_per_worker")) +
         ")";
    labels.push_back(elide_middle(l, kMaxLabel));
  }
  return labels;
}

/// Summary rows by workload, in first-seen order.
std::vector<std::pair<std::string, std::vector<const nlohmann::json*>>> by_workload(
    const nlohmann::json& summary) {
  std::vector<std::pair<std::string, std::vector<const nlohmann::json*>>> out;
  for (const auto& r : summary) {
    const std::string wl = str(r, "workload");
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.first == wl; });
    if (it == out.end()) it = out.insert(out.end(), {wl, {}});
    it->second.push_back(&r);
  }
  return out;
}

double label_room(const std::vector<std::string>& labels) {
  std::size_t longest = 0;
  for (const auto& l : labels) longest = std::max(longest, display_width(l));
  return std::max(120.0, kCharPx * static_cast<double>(longest) + 12);
}

/// Quantile q (0..1) of sorted values, linear between neighbours.
double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return kNaN;
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto i = static_cast<std::size_t>(pos);
  if (i + 1 >= sorted.size()) return sorted.back();
  return sorted[i] + (pos - static_cast<double>(i)) * (sorted[i + 1] - sorted[i]);
}

}  // namespace

std::string svg_open(const char* kind, double width, double height, const std::string& more) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" "
      "role=\"img\" class=\"chart\" data-chart=\"{}\"{}>\n",
      width, height, kind, more);
}

std::string html_legend(const std::string& name, const std::vector<LegendKey>& keys) {
  std::string out = fmt::format("<div class=\"legend\" data-legend=\"{}\">", html_escape(name));
  for (const auto& k : keys)
    out += fmt::format(
        "<span class=\"key\"><span class=\"swatch{}\" style=\"background:{}\"></span>{}</span>",
        k.line ? " line" : "", k.color, html_escape(k.text));
  return out + "</div>\n";
}

std::string phase_color(const std::string& phase) {
  const auto it = phase_colors().find(phase);
  return it != phase_colors().end() ? it->second : "#9c755f";
}

std::string phase_meaning(const std::string& phase) {
  if (phase == "generate") return "generate: the workers make their input data";
  if (phase == "compute") return "compute: the workers' kernels on their share";
  if (phase == "communicate") return "communicate: the workers exchange and reduce results";
  if (phase == "other")
    return "other: the part of a repeat's wall time outside the workers' generate, compute and "
           "communicate phases (dispatch, messages, waits)";
  return phase + ": a phase the workload records";
}

std::string speedup_charts(const nlohmann::json& summary) {
  std::string out;
  for (const auto& [wl, rows] : by_workload(summary)) {
    bool any_cpu = false;
    for (const auto* r : rows) any_cpu = any_cpu || std::isfinite(num(*r, "speedup_vs_single_cpu"));
    const char* key = any_cpu ? "speedup_vs_single_cpu" : "speedup_vs_single_gpu";
    std::vector<const nlohmann::json*> shown;
    for (const auto* r : rows) {
      const double s = num(*r, key);
      if (std::isfinite(s) && s > 0) shown.push_back(r);
    }
    if (shown.empty()) continue;
    std::string common;
    const std::vector<std::string> labels = short_labels(shown, wl, &common);
    double lo = 1, hi = 1;
    for (const auto* r : shown) {
      lo = std::min(lo, num(*r, key));
      hi = std::max(hi, num(*r, key));
    }
    const double left = label_room(labels);
    const double width = 440, bar_h = 18, gap = 6, top = 24;
    const LogAxis ax = log_axis(lo, hi, left, width);
    const double height = top + static_cast<double>(shown.size()) * (bar_h + gap) + 24;
    out += fmt::format("<h3>{} — speedup vs {}</h3>\n", html_escape(wl),
                       any_cpu ? "single-cpu" : "single-gpu");
    if (!common.empty()) out += fmt::format("<p class=\"note\">{}</p>\n", html_escape(common));
    out += svg_open("speedup", left + width + 80, height);
    out += log_grid(ax, top - 4, height - 20, height - 6, ratio_tick);
    const double x1 = ax.at(1.0);
    for (std::size_t i = 0; i < shown.size(); ++i) {
      const double s = num(*shown[i], key);
      const double y = top + static_cast<double>(i) * (bar_h + gap);
      const double xv = ax.at(s);
      out += fmt::format("<text x=\"{:.0f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n",
                         left - 6, y + bar_h * 0.7, html_escape(labels[i]));
      out += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.0f}\" "
          "fill=\"{}\"><title>{}: {}</title></rect>\n",
          std::min(x1, xv), y, std::max(1.0, std::abs(xv - x1)), bar_h, s >= 1 ? kFaster : kSlower,
          html_escape(labels[i]), human_ratio(s));
      out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", std::max(x1, xv) + 4,
                         y + bar_h * 0.7, human_ratio(s));
    }
    out += fmt::format(
        "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2:.0f}\" stroke=\"#333\"/>\n", x1,
        top - 4, height - 20);
    out += "</svg>\n";
  }
  if (out.empty())
    return "<p class=\"note\">no speedups (no single-cpu or single-gpu reference with the same "
           "parameters)</p>\n";
  return out + html_legend("speedup", {{kFaster, "faster than the reference (1x or more)"},
                                       {kSlower, "slower than the reference (below 1x)"},
                                       {"#333333", "1x: as fast as the reference", true}});
}

std::string distribution_charts(const nlohmann::json& model, const nlohmann::json& summary) {
  const nlohmann::json& cases = sub(model, "cases");
  std::string out;
  for (const auto& [wl, rows] : by_workload(summary)) {
    std::vector<const nlohmann::json*> shown;
    std::vector<std::vector<double>> totals;
    for (const auto* r : rows) {
      std::size_t i = 0;  // the row's case: summary rows follow the cases
      while (i < summary.size() && &summary[i] != r) ++i;
      if (!cases.is_array() || i >= cases.size()) continue;
      std::vector<double> t;
      for (double v : phase_times(cases[i], "total"))
        if (v > 0) t.push_back(v);
      if (t.empty()) continue;
      shown.push_back(r);
      totals.push_back(std::move(t));
    }
    if (shown.empty()) continue;
    std::string common;
    const std::vector<std::string> labels = short_labels(shown, wl, &common);
    double lo = 1e300, hi = 0;
    for (const auto& t : totals)
      for (double v : t) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
    const double left = label_room(labels);
    const double width = 440, row_h = 22, top = 8;
    const LogAxis ax = log_axis(lo, hi, left, width, false);
    const double height = top + static_cast<double>(shown.size()) * row_h + 30;
    out += fmt::format("<h3>{} — total time of every repeat</h3>\n", html_escape(wl));
    if (!common.empty()) out += fmt::format("<p class=\"note\">{}</p>\n", html_escape(common));
    out += svg_open("distribution", left + width + 80, height);
    out += log_grid(ax, top, height - 24, height - 8, seconds_tick);
    for (std::size_t i = 0; i < shown.size(); ++i) {
      std::vector<double> t = totals[i];
      std::sort(t.begin(), t.end());
      const double yc = top + static_cast<double>(i) * row_h + row_h / 2;
      const double q1 = quantile(t, 0.25), q3 = quantile(t, 0.75), med = quantile(t, 0.5);
      out += fmt::format("<text x=\"{:.0f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n",
                         left - 6, yc + 4, html_escape(labels[i]));
      out += fmt::format(
          "<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\"/>\n",
          ax.at(t.front()), ax.at(t.back()), yc, yc, kRange);
      out += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.0f}\" fill=\"{}\" "
          "stroke=\"{}\"><title>quartiles {} .. {}</title></rect>\n",
          ax.at(q1), yc - 7, std::max(1.0, ax.at(q3) - ax.at(q1)), 14.0, kBox, kFaster,
          human_seconds(q1), human_seconds(q3));
      out += fmt::format(
          "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\" stroke=\"{3}\" "
          "stroke-width=\"2\"><title>median {4}</title></line>\n",
          ax.at(med), yc - 8, yc + 8, kMedian, human_seconds(med));
      const bool ok = str(*shown[i], "status") == "ok";
      const std::vector<double>& raw = totals[i];  // repeat order, for the titles
      for (std::size_t k = 0; k < raw.size(); ++k) {
        const double jitter = (static_cast<double>(k % 5) - 2.0) * 1.6;
        out += fmt::format(
            "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.8\" fill=\"{}\" fill-opacity=\"0.8\">"
            "<title>repeat {}: {}</title></circle>\n",
            ax.at(raw[k]), yc + jitter, ok ? kFaster : kSlower, k, human_seconds(raw[k]));
      }
      out += fmt::format("<text x=\"{:.0f}\" y=\"{:.1f}\">{}</text>\n", left + width + 6, yc + 4,
                         human_seconds(med));
    }
    out += "</svg>\n";
  }
  if (out.empty()) return "<p class=\"note\">no timed repeats</p>\n";
  return out + html_legend("distribution",
                           {{kFaster, "one timed repeat of an ok case: its total wall time"},
                            {kSlower, "one timed repeat of a case that is not ok"},
                            {kBox, "middle half of the repeats (first to third quartile)"},
                            {kMedian, "median repeat (also the figure on the right)", true},
                            {kRange, "fastest to slowest repeat", true}});
}

std::string scaling_chart(const nlohmann::json& model, const nlohmann::json& summary) {
  const nlohmann::json& cases = sub(model, "cases");
  struct Point {
    double x, y;
    std::string label;
  };
  // Parameters whose values differ between a workload's cases (groupby's query) split its
  // series: one line per variant.
  std::map<std::string, std::map<std::string, std::set<std::string>>> values;  // wl -> k -> v
  std::map<std::string, std::size_t> count;
  for (const auto& c : cases.is_array() ? cases : nlohmann::json::array()) {
    const std::string wl = str(c, "workload");
    ++count[wl];
    const nlohmann::json& ps = sub(c, "params");
    if (ps.is_object())
      for (const auto& [k, v] : ps.items())
        values[wl][k].insert(v.is_string() ? v.get<std::string>() : v.dump());
  }
  auto variant = [&](const nlohmann::json& c) {
    const std::string wl = str(c, "workload");
    const nlohmann::json& ps = sub(c, "params");
    std::string out;
    if (!ps.is_object()) return out;
    for (const auto& [k, v] : ps.items()) {
      std::size_t with = 0;
      for (const auto& d : cases)
        if (str(d, "workload") == wl && sub(d, "params").is_object() &&
            sub(d, "params").contains(k))
          ++with;
      if (values[wl][k].size() > 1 || with < count[wl])
        out +=
            (out.empty() ? " " : ",") + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
    }
    return out;
  };
  std::map<std::string, std::vector<Point>> series;
  for (std::size_t i = 0; i < summary.size() && i < cases.size(); ++i) {
    const nlohmann::json& r = summary[i];
    const nlohmann::json& c = cases[i];
    const bool gpu = case_device(c) == "gpu";
    const double s = num(r, gpu ? "speedup_vs_single_gpu" : "speedup_vs_single_cpu");
    if (!std::isfinite(s) || s <= 0) continue;
    const double w = std::max(1.0, num(c, "workers", 1.0));
    const double units = gpu ? w : w * std::max(1.0, num(c, "threads_per_worker", 1.0));
    series[fmt::format("{} {}{}", str(c, "workload"), gpu ? "GPU" : "CPU", variant(c))].push_back(
        {units, s, case_label(c) + " (" + case_parallel_label(c) + ")"});
  }
  if (series.empty()) return "<p class=\"note\">no scaling data</p>\n";
  double xmax = 2, ymin = 1, ymax = 2;
  for (const auto& [k, pts] : series)
    for (const auto& p : pts) {
      xmax = std::max(xmax, p.x);
      ymin = std::min(ymin, p.y);
      ymax = std::max(ymax, p.y);
    }
  const double left = 60, top = 16, w = 480, h = 300;
  const double lx = std::log2(xmax);
  auto X = [&](double x) { return left + std::log2(x) / lx * w; };
  const LogAxis ya = log_axis(ymin, std::max(ymax, xmax), 0, h);
  auto Y = [&](double y) { return top + h - (std::log10(y) - ya.lo10) / (ya.hi10 - ya.lo10) * h; };
  std::string out = svg_open("scaling", left + w + 20, top + h + 44);
  for (double x = 1; x <= xmax * 1.0001; x *= 2) {
    out += fmt::format(
        "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#eee\"/>"
        "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4:g}</text>\n",
        X(x), top, top + h, top + h + 14, x);
  }
  for (double e = ya.lo10; e <= ya.hi10 + 1e-9; e += 1) {
    const double v = std::pow(10.0, e);
    out += fmt::format(
        "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#eee\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
        left, left + w, Y(v), left - 4, Y(v) + 4, ratio_tick(v));
  }
  out += fmt::format(
      "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
      "stroke-dasharray=\"4 3\"><title>ideal</title></line>\n",
      X(1), Y(1), X(xmax), Y(xmax), kRange);
  out += fmt::format(
      "<text x=\"{:.0f}\" y=\"{:.0f}\" text-anchor=\"middle\">parallel units (CPU: workers "
      "\xC3\x97 threads; GPU: GPUs)</text>\n",
      left + w / 2, top + h + 34);
  static const char* const colors[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
                                       "#59a14f", "#edc948", "#b07aa1", "#ff9da7"};
  std::vector<LegendKey> keys;
  std::size_t k = 0;
  for (auto& [name, pts] : series) {
    const char* col = colors[k++ % 8];
    std::sort(pts.begin(), pts.end(), [](const Point& a, const Point& b) { return a.x < b.x; });
    std::string poly;
    for (const auto& p : pts) poly += fmt::format("{:.1f},{:.1f} ", X(p.x), Y(p.y));
    out += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>\n",
                       poly, col);
    for (const auto& p : pts)
      out += fmt::format(
          "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\"><title>{}: "
          "{}</title></circle>\n",
          X(p.x), Y(p.y), col, html_escape(p.label), human_ratio(p.y));
    keys.push_back({col, name});
  }
  keys.push_back({kRange, "ideal: speedup equal to the parallel units", true});
  return out + "</svg>\n" + html_legend("scaling", keys);
}

std::string phase_chart(const nlohmann::json& model) {
  const nlohmann::json& cases = sub(model, "cases");
  struct Bar {
    std::string label;
    double total;
    std::vector<std::pair<std::string, double>> parts;
  };
  std::vector<Bar> bars;
  std::vector<std::string> used;  // phases drawn, for the legend
  for (const auto& c : cases.is_array() ? cases : nlohmann::json::array()) {
    const double total = median(phase_times(c, "total"));
    if (!std::isfinite(total) || total <= 0) continue;
    Bar b{case_label(c) + " (" + case_parallel_label(c) + ")", total, {}};
    double sum = 0;
    for (const char* p : {"generate", "compute", "communicate"}) {
      const double v = median(phase_times(c, p));
      if (std::isfinite(v) && v > 0) {
        b.parts.emplace_back(p, v);
        sum += v;
      }
    }
    if (total > sum) b.parts.emplace_back("other", total - sum);
    for (const auto& pt : b.parts)
      if (std::find(used.begin(), used.end(), pt.first) == used.end()) used.push_back(pt.first);
    bars.push_back(std::move(b));
  }
  if (bars.empty()) return "<p class=\"note\">no timed cases</p>\n";
  // Room for the longest label, at most 600px; longer ones are cut in the middle (the summary
  // table has them whole).
  std::size_t longest = 0;
  for (const Bar& b : bars) longest = std::max(longest, display_width(b.label));
  const double left = std::clamp(kCharPx * static_cast<double>(longest) + 12, 120.0, 600.0);
  const auto max_chars = static_cast<std::size_t>((left - 12) / kCharPx);
  for (Bar& b : bars) b.label = elide_middle(b.label, max_chars);
  const double w = 480, bar_h = 16, gap = 5, top = 4;
  const double height = top + static_cast<double>(bars.size()) * (bar_h + gap) + 8;
  std::string out = svg_open("phases", left + w + 90, height);
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const double y = top + static_cast<double>(i) * (bar_h + gap);
    const Bar& b = bars[i];
    out += fmt::format("<text x=\"{:.0f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", left - 6,
                       y + bar_h * 0.75, html_escape(b.label));
    double x = left;
    double sum = b.total;
    double parts = 0;
    for (const auto& pt : b.parts) parts += pt.second;
    sum = std::max(sum, parts);
    for (const auto& [p, v] : b.parts) {
      const double bw = v / sum * w;
      out += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.0f}\" "
          "fill=\"{}\"><title>{} {} ({:.1f}%)</title></rect>\n",
          x, y, bw, bar_h, phase_color(p), p, human_seconds(v), 100 * v / sum);
      x += bw;
    }
    out += fmt::format("<text x=\"{:.0f}\" y=\"{:.1f}\">{}</text>\n", left + w + 6,
                       y + bar_h * 0.75, human_seconds(b.total));
  }
  out += "</svg>\n";
  std::vector<LegendKey> keys;
  for (const char* p : {"generate", "compute", "communicate", "other"})
    if (std::find(used.begin(), used.end(), p) != used.end())
      keys.push_back({phase_color(p), phase_meaning(p)});
  return out + html_legend("phases", keys);
}

namespace {

/// Task stream of one case: one row per worker, one rectangle per task phase (first repeat).
/// `phases` collects the phases drawn.
std::string task_stream(const nlohmann::json& c, std::size_t max_events,
                        std::vector<std::string>* phases) {
  const nlohmann::json& te = sub(c, "task_events");
  auto col = [&](const char* k) -> const nlohmann::json& { return sub(te, k); };
  const nlohmann::json& rep = col("repeat");
  const nlohmann::json& worker = col("worker");
  const nlohmann::json& start = col("start");
  const nlohmann::json& end = col("end");
  if (!worker.is_array() || !start.is_array() || !end.is_array()) return {};
  const std::size_t n = std::min({worker.size(), start.size(), end.size()});
  if (n == 0) return {};
  auto at = [](const nlohmann::json& arr, std::size_t i, double dflt) {
    return (arr.is_array() && i < arr.size() && arr[i].is_number()) ? arr[i].get<double>() : dflt;
  };
  // the first timed repeat (0); the earliest recorded one when there is no repeat 0
  double first_rep = 1e300;
  bool has_zero = false;
  for (std::size_t i = 0; i < n; ++i) {
    first_rep = std::min(first_rep, at(rep, i, 0));
    has_zero = has_zero || at(rep, i, 0) == 0;
  }
  if (has_zero) first_rep = 0;
  std::vector<std::size_t> idx;
  std::set<long long> workers;
  double t0 = 1e300, t1 = -1e300;
  for (std::size_t i = 0; i < n && idx.size() < max_events; ++i) {
    if (at(rep, i, 0) != first_rep) continue;
    const double s = at(start, i, NAN), e = at(end, i, NAN);
    if (!std::isfinite(s) || !std::isfinite(e)) continue;
    idx.push_back(i);
    workers.insert(static_cast<long long>(at(worker, i, 0)));
    t0 = std::min(t0, s);
    t1 = std::max(t1, e);
  }
  if (idx.empty() || !(t1 > t0)) return {};
  const std::vector<long long> wl(workers.begin(), workers.end());
  // The right margin holds half of the last tick's label ("54.23 ms").
  const double left = 80, w = 800, row_h = 18, top = 8;
  const double height = top + static_cast<double>(wl.size()) * row_h + 30;
  auto X = [&](double t) { return left + (t - t0) / (t1 - t0) * w; };
  std::string out = fmt::format("<h3>{} ({})</h3>\n", html_escape(case_label(c)),
                                html_escape(case_parallel_label(c)));
  out += svg_open("task-stream", left + w + 40, height);
  for (std::size_t k = 0; k < wl.size(); ++k)
    out += fmt::format("<text x=\"{:.0f}\" y=\"{:.1f}\" text-anchor=\"end\">worker {}</text>\n",
                       left - 6, top + static_cast<double>(k) * row_h + row_h * 0.7, wl[k]);
  for (int k = 0; k <= 4; ++k) {
    const double t = t0 + (t1 - t0) * k / 4;
    out += fmt::format(
        "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2:.0f}\" stroke=\"#eee\"/>"
        "<text x=\"{0:.1f}\" y=\"{3:.0f}\" text-anchor=\"middle\">{4}</text>\n",
        X(t), top, top + static_cast<double>(wl.size()) * row_h, height - 14,
        human_seconds(t - t0));
  }
  const nlohmann::json& phase = col("phase");
  const nlohmann::json& task = col("task");
  for (std::size_t i : idx) {
    const auto wk = static_cast<long long>(at(worker, i, 0));
    const auto row =
        static_cast<std::size_t>(std::lower_bound(wl.begin(), wl.end(), wk) - wl.begin());
    const std::string ph = (phase.is_array() && i < phase.size() && phase[i].is_string())
                               ? phase[i].get<std::string>()
                               : "compute";
    if (std::find(phases->begin(), phases->end(), ph) == phases->end()) phases->push_back(ph);
    const double s = at(start, i, 0), e = at(end, i, 0);
    out += fmt::format(
        "<rect x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.0f}\" "
        "fill=\"{}\"><title>worker {} task {} {} {}</title></rect>\n",
        X(s), top + static_cast<double>(row) * row_h + 2, std::max(0.5, X(e) - X(s)), row_h - 4,
        phase_color(ph), wk, static_cast<long long>(at(task, i, -1)), html_escape(ph),
        human_seconds(e - s));
  }
  out += "</svg>\n";
  if (idx.size() >= max_events)
    out += fmt::format("<p class=\"note\">first {} events shown</p>\n", max_events);
  return out;
}

}  // namespace

std::string task_streams(const nlohmann::json& model, std::size_t max_cases,
                         std::size_t max_events) {
  std::string out;
  std::size_t shown = 0;
  std::vector<std::string> phases;
  const nlohmann::json& cases = sub(model, "cases");
  for (const auto& c : cases.is_array() ? cases : nlohmann::json::array()) {
    if (shown >= max_cases) break;
    const std::string s = task_stream(c, max_events, &phases);
    if (!s.empty()) {
      out += s;
      ++shown;
    }
  }
  if (shown == 0) return "<p class=\"note\">no task events recorded</p>\n";
  std::vector<LegendKey> keys;
  for (const auto& p : phases) keys.push_back({phase_color(p), phase_meaning(p)});
  return out + html_legend("task-stream", keys);
}

}  // namespace sb::results::detail
