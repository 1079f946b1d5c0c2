/// One self-contained HTML page: no scripts, no external resources; charts are inline SVG.
///   speedup bars per workload (log axis), scaling vs worker count, phase breakdown per case,
///   a task stream per worker (from task_events), then the system description.

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "format_util.hpp"
#include "formats.hpp"
#include "scalebench/stats.hpp"
#include "summary_util.hpp"

namespace sb::results::detail {
namespace {

constexpr const char* kStyle = R"(
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ddd}h3{font-size:1em}
table{border-collapse:collapse;font-size:0.85em;margin:8px 0}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums}
th{background:#f3f3f3}.bad{color:#b00020;font-weight:600}.ok{color:#1b7f3b}
svg{font-size:11px;font-family:inherit}svg text{fill:#333}.note{color:#666;font-size:0.85em}
)";

const std::map<std::string, std::string>& phase_colors() {
  static const std::map<std::string, std::string> c{{"generate", "#4e79a7"},
                                                    {"compute", "#f28e2b"},
                                                    {"communicate", "#59a14f"},
                                                    {"other", "#bab0ac"}};
  return c;
}

std::string phase_color(const std::string& phase) {
  const auto it = phase_colors().find(phase);
  return it != phase_colors().end() ? it->second : "#9c755f";
}

std::string cell_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float())
    return std::isfinite(v.get<double>()) ? fmt::format("{:.6g}", v.get<double>()) : "-";
  if (v.is_null()) return "-";
  return v.dump();
}

/// A table of an array of flat objects (columns: union of keys, first-seen order).
std::string html_records(const json& rows) {
  if (!rows.is_array() || rows.empty()) return "<p class=\"note\">none</p>\n";
  std::vector<std::string> cols;
  for (const auto& r : rows) {
    if (!r.is_object()) continue;
    for (const auto& [k, v] : r.items())
      if (std::find(cols.begin(), cols.end(), k) == cols.end()) cols.push_back(k);
  }
  std::string out = "<table><tr>";
  for (const auto& c : cols) out += "<th>" + html_escape(c) + "</th>";
  out += "</tr>\n";
  for (const auto& r : rows) {
    out += "<tr>";
    for (const auto& c : cols) {
      const json v = r.is_object() ? r.value(c, json()) : json();
      out += std::string(v.is_number() ? "<td class=\"n\">" : "<td>") + html_escape(cell_text(v)) +
             "</td>";
    }
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

/// Key/value table of an object's members.
std::string html_object(const json& obj) {
  if (!obj.is_object() || obj.empty()) return "<p class=\"note\">none</p>\n";
  std::string out = "<table>";
  for (const auto& [k, v] : obj.items())
    out += "<tr><th>" + html_escape(k) + "</th><td>" + html_escape(cell_text(v)) + "</td></tr>";
  return out + "</table>\n";
}

struct LogAxis {
  double lo10 = 0, hi10 = 1;
  double x0 = 0, width = 1;
  [[nodiscard]] double at(double v) const {
    return x0 + (std::log10(v) - lo10) / (hi10 - lo10) * width;
  }
};

LogAxis log_axis(double vmin, double vmax, double x0, double width) {
  LogAxis a;
  a.lo10 = std::floor(std::log10(std::min(1.0, vmin)) + 1e-9);
  a.hi10 = std::ceil(std::log10(std::max(1.0, vmax)) - 1e-9);
  if (a.hi10 <= a.lo10) a.hi10 = a.lo10 + 1;
  a.x0 = x0;
  a.width = width;
  return a;
}

/// "path/k=v,k=v" of a case id "workload/path/k=v,...", split into the path and its parameters.
std::pair<std::string, std::vector<std::string>> id_parts(const std::string& id,
                                                          const std::string& workload) {
  std::string rest = id.rfind(workload + "/", 0) == 0 ? id.substr(workload.size() + 1) : id;
  const std::size_t slash = rest.find('/');
  std::vector<std::string> params;
  if (slash == std::string::npos) return {rest, params};
  const std::string list = rest.substr(slash + 1);
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = list.find(',', start);
    const std::string p = list.substr(start, comma == std::string::npos ? comma : comma - start);
    if (!p.empty()) params.push_back(p);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return {rest.substr(0, slash), params};
}

/// Bar labels of one workload's rows: the path, the parameters that differ between the rows
/// (those all rows share are said once, in the chart's title), and the worker count; at most
/// kMaxLabel characters.
constexpr std::size_t kMaxLabel = 56;
std::vector<std::string> short_labels(const std::vector<const json*>& rows,
                                      const std::string& workload, std::string* common) {
  std::vector<std::pair<std::string, std::vector<std::string>>> parts;
  for (const json* r : rows) parts.push_back(id_parts(str(*r, "case"), workload));
  std::vector<std::string> shared;
  if (!parts.empty())
    for (const auto& p : parts.front().second) {
      bool all = true;
      for (const auto& q : parts)
        all = all && std::find(q.second.begin(), q.second.end(), p) != q.second.end();
      if (all) shared.push_back(p);
    }
  if (common != nullptr) {
    common->clear();
    for (const auto& p : shared) *common += (common->empty() ? "" : ",") + p;
  }
  std::vector<std::string> labels;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::string l = parts[i].first;
    std::string own;
    for (const auto& p : parts[i].second)
      if (std::find(shared.begin(), shared.end(), p) == shared.end())
        own += (own.empty() ? "" : ",") + p;
    if (!own.empty()) l += " " + own;
    l += fmt::format(" ({}w)", rows[i]->value("workers", 0));
    if (l.size() > kMaxLabel) l = l.substr(0, kMaxLabel - 1) + "~";
    labels.push_back(l);
  }
  return labels;
}

std::string tick_label(double v) {
  return fmt::format("{:g}x", v);
}

/// Horizontal bars of speedup vs single-cpu (or vs single-gpu where no CPU reference), one
/// chart per workload, log axis centred on 1x.
std::string speedup_charts(const json& summary) {
  std::map<std::string, std::vector<const json*>> by_workload;
  for (const auto& r : summary) by_workload[str(r, "workload")].push_back(&r);
  std::string out;
  for (const auto& [wl, rows] : by_workload) {
    bool any_cpu = false;
    for (const json* r : rows) any_cpu = any_cpu || std::isfinite(num(*r, "speedup_vs_single_cpu"));
    const char* key = any_cpu ? "speedup_vs_single_cpu" : "speedup_vs_single_gpu";
    std::vector<const json*> shown;
    for (const json* r : rows) {
      const double s = num(*r, key);
      if (std::isfinite(s) && s > 0) shown.push_back(r);
    }
    std::string common;
    const std::vector<std::string> labels = short_labels(shown, wl, &common);
    std::vector<std::pair<std::string, double>> bars;
    std::size_t longest = 0;
    for (std::size_t i = 0; i < shown.size(); ++i) {
      bars.emplace_back(labels[i], num(*shown[i], key));
      longest = std::max(longest, labels[i].size());
    }
    if (bars.empty()) continue;
    double lo = 1, hi = 1;
    for (const auto& b : bars) {
      lo = std::min(lo, b.second);
      hi = std::max(hi, b.second);
    }
    // Room for the longest label at 11px (about 6.5px per character).
    const double left = std::max(120.0, 6.5 * static_cast<double>(longest) + 12);
    const double width = 440, bar_h = 18, gap = 6, top = 24;
    const LogAxis ax = log_axis(lo, hi, left, width);
    const double height = top + bars.size() * (bar_h + gap) + 24;
    out += fmt::format("<h3>{} — speedup vs {}</h3>\n", html_escape(wl),
                       any_cpu ? "single-cpu" : "single-gpu");
    if (!common.empty()) out += fmt::format("<p class=\"note\">{}</p>\n", html_escape(common));
    out += fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" "
        "role=\"img\" class=\"chart\" data-chart=\"speedup\">\n",
        left + width + 80, height);
    for (double e = ax.lo10; e <= ax.hi10 + 1e-9; e += 1) {
      for (double m : {1.0, 2.0, 5.0}) {
        const double v = m * std::pow(10.0, e);
        if (std::log10(v) > ax.hi10 + 1e-9) break;
        const double x = ax.at(v);
        const bool major = m == 1.0;
        out += fmt::format(
            "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2:.0f}\" stroke=\"{3}\"/>\n", x,
            top - 4, height - 20, major ? "#bbb" : "#eee");
        if (major || ax.hi10 - ax.lo10 <= 2)
          out += fmt::format("<text x=\"{:.1f}\" y=\"{:.0f}\" text-anchor=\"middle\">{}</text>\n",
                             x, height - 6, tick_label(v));
      }
    }
    const double x1 = ax.at(1.0);
    for (std::size_t i = 0; i < bars.size(); ++i) {
      const double y = top + i * (bar_h + gap);
      const double xv = ax.at(bars[i].second);
      out += fmt::format("<text x=\"{:.0f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n",
                         left - 6, y + bar_h * 0.7, html_escape(bars[i].first));
      out += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.0f}\" "
          "fill=\"{}\"><title>{}: {}</title></rect>\n",
          std::min(x1, xv), y, std::max(1.0, std::abs(xv - x1)), bar_h,
          bars[i].second >= 1 ? "#4e79a7" : "#e15759", html_escape(bars[i].first),
          human_ratio(bars[i].second));
      out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", std::max(x1, xv) + 4,
                         y + bar_h * 0.7, human_ratio(bars[i].second));
    }
    out += fmt::format(
        "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2:.0f}\" stroke=\"#333\"/>\n", x1,
        top - 4, height - 20);
    out += "</svg>\n";
  }
  return out.empty() ? "<p class=\"note\">no speedups (no single-cpu or single-gpu reference with "
                       "the same parameters)</p>\n"
                     : out;
}

/// Speedup against parallel units: CPU cases at workers x threads cores, GPU cases at GPUs.
std::string scaling_chart(const json& model, const json& summary) {
  const json& cases = sub(model, "cases");
  struct Point {
    double x, y;
    std::string label;
  };
  // Parameters whose values differ between a workload's cases (groupby's query) split its
  // series: one line per variant.
  std::map<std::string, std::map<std::string, std::set<std::string>>> values;  // wl -> k -> v
  std::map<std::string, std::size_t> count;
  for (const auto& c : cases.is_array() ? cases : json::array()) {
    const std::string wl = str(c, "workload");
    ++count[wl];
    const json& ps = sub(c, "params");
    if (ps.is_object())
      for (const auto& [k, v] : ps.items())
        values[wl][k].insert(v.is_string() ? v.get<std::string>() : v.dump());
  }
  auto variant = [&](const json& c) {
    const std::string wl = str(c, "workload");
    const json& ps = sub(c, "params");
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
    const json& r = summary[i];
    const json& c = cases[i];
    const bool gpu = case_device(c) == "gpu";
    const double s = num(r, gpu ? "speedup_vs_single_gpu" : "speedup_vs_single_cpu");
    if (!std::isfinite(s) || s <= 0) continue;
    const double w = std::max(1.0, num(c, "workers", 1.0));
    const double units = gpu ? w : w * std::max(1.0, num(c, "threads_per_worker", 1.0));
    series[fmt::format("{} {}{}", str(c, "workload"), gpu ? "GPU" : "CPU", variant(c))].push_back(
        {units, s, case_label(c)});
  }
  if (series.empty()) return "<p class=\"note\">no scaling data</p>\n";
  double xmax = 2, ymin = 1, ymax = 2;
  for (const auto& [k, pts] : series)
    for (const auto& p : pts) {
      xmax = std::max(xmax, p.x);
      ymin = std::min(ymin, p.y);
      ymax = std::max(ymax, p.y);
    }
  std::size_t longest = 0;
  for (const auto& [k, pts] : series) longest = std::max(longest, k.size());
  const double legend = std::max(220.0, 6.5 * static_cast<double>(longest) + 40);
  const double left = 60, top = 16, w = 480, h = 300;
  const double lx = std::log2(xmax);
  auto X = [&](double x) { return left + std::log2(x) / lx * w; };
  const LogAxis ya = log_axis(ymin, std::max(ymax, xmax), 0, h);
  auto Y = [&](double y) { return top + h - (std::log10(y) - ya.lo10) / (ya.hi10 - ya.lo10) * h; };
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" "
      "role=\"img\" class=\"chart\" data-chart=\"scaling\">\n",
      left + w + legend, top + h + 44);
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
        left, left + w, Y(v), left - 4, Y(v) + 4, tick_label(v));
  }
  out += fmt::format(
      "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#999\" "
      "stroke-dasharray=\"4 3\"><title>ideal</title></line>\n",
      X(1), Y(1), X(xmax), Y(xmax));
  out += fmt::format(
      "<text x=\"{:.0f}\" y=\"{:.0f}\" text-anchor=\"middle\">parallel units (CPU: workers x "
      "threads; GPU: GPUs)</text>\n",
      left + w / 2, top + h + 34);
  static const char* const colors[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
                                       "#59a14f", "#edc948", "#b07aa1", "#ff9da7"};
  std::size_t k = 0;
  for (auto& [name, pts] : series) {
    const char* col = colors[k % 8];
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
    out += fmt::format(
        "<rect x=\"{:.0f}\" y=\"{:.0f}\" width=\"10\" height=\"10\" fill=\"{}\"/><text "
        "x=\"{:.0f}\" y=\"{:.0f}\">{}</text>\n",
        left + w + 16, top + k * 16, col, left + w + 30, top + k * 16 + 9, html_escape(name));
    ++k;
  }
  return out + "</svg>\n";
}

/// Median share of generate / compute / communicate / other in each case's total time.
std::string phase_chart(const json& model) {
  const json& cases = sub(model, "cases");
  struct Bar {
    std::string label;
    double total;
    std::vector<std::pair<std::string, double>> parts;
  };
  std::vector<Bar> bars;
  for (const auto& c : cases.is_array() ? cases : json::array()) {
    const double total = median(phase_times(c, "total"));
    if (!std::isfinite(total) || total <= 0) continue;
    Bar b{case_label(c), total, {}};
    double used = 0;
    for (const char* p : {"generate", "compute", "communicate"}) {
      const double v = median(phase_times(c, p));
      if (std::isfinite(v) && v > 0) {
        b.parts.emplace_back(p, v);
        used += v;
      }
    }
    if (total > used) b.parts.emplace_back("other", total - used);
    bars.push_back(std::move(b));
  }
  if (bars.empty()) return "<p class=\"note\">no timed cases</p>\n";
  // Room for the longest case id at 11px (about 6.5px per character), at most 600px; longer
  // ids are cut with "~" (the summary table above has them whole).
  std::size_t longest = 0;
  for (const Bar& b : bars) longest = std::max(longest, b.label.size());
  const double left = std::clamp(6.5 * static_cast<double>(longest) + 12, 120.0, 600.0);
  const auto max_chars = static_cast<std::size_t>((left - 12) / 6.5);
  for (Bar& b : bars)
    if (b.label.size() > max_chars) b.label = b.label.substr(0, max_chars - 1) + "~";
  const double w = 480, bar_h = 16, gap = 5, top = 22;
  const double height = top + bars.size() * (bar_h + gap) + 8;
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" "
      "role=\"img\" class=\"chart\" data-chart=\"phases\">\n",
      left + w + 90, height);
  double lx = left;
  for (const char* p : {"generate", "compute", "communicate", "other"}) {
    out += fmt::format(
        "<rect x=\"{:.0f}\" y=\"2\" width=\"10\" height=\"10\" fill=\"{}\"/><text x=\"{:.0f}\" "
        "y=\"11\">{}</text>\n",
        lx, phase_color(p), lx + 14, p);
    lx += 110;
  }
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const double y = top + i * (bar_h + gap);
    const Bar& b = bars[i];
    out += fmt::format("<text x=\"{:.0f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", left - 6,
                       y + bar_h * 0.75, html_escape(b.label));
    double x = left;
    const double sum = std::max(b.total, [&] {
      double s = 0;
      for (const auto& pt : b.parts) s += pt.second;
      return s;
    }());
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
  return out + "</svg>\n";
}

/// Task stream of one case: one row per worker, one rectangle per task phase (first repeat).
std::string task_stream(const json& c, std::size_t max_events) {
  const json& te = sub(c, "task_events");
  auto col = [&](const char* k) -> const json& { return sub(te, k); };
  const json& rep = col("repeat");
  const json& worker = col("worker");
  const json& start = col("start");
  const json& end = col("end");
  if (!worker.is_array() || !start.is_array() || !end.is_array()) return {};
  const std::size_t n = std::min({worker.size(), start.size(), end.size()});
  if (n == 0) return {};
  auto at = [](const json& arr, std::size_t i, double dflt) {
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
  const double height = top + wl.size() * row_h + 30;
  auto X = [&](double t) { return left + (t - t0) / (t1 - t0) * w; };
  std::string out = fmt::format("<h3>{}</h3>\n", html_escape(case_label(c)));
  out += fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" "
      "role=\"img\" class=\"chart\" data-chart=\"task-stream\">\n",
      left + w + 40, height);
  for (std::size_t k = 0; k < wl.size(); ++k)
    out += fmt::format("<text x=\"{:.0f}\" y=\"{:.1f}\" text-anchor=\"end\">worker {}</text>\n",
                       left - 6, top + k * row_h + row_h * 0.7, wl[k]);
  for (int k = 0; k <= 4; ++k) {
    const double t = t0 + (t1 - t0) * k / 4;
    out += fmt::format(
        "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2:.0f}\" stroke=\"#eee\"/>"
        "<text x=\"{0:.1f}\" y=\"{3:.0f}\" text-anchor=\"middle\">{4}</text>\n",
        X(t), top, top + wl.size() * row_h, height - 14, human_seconds(t - t0));
  }
  const json& phase = col("phase");
  const json& task = col("task");
  for (std::size_t i : idx) {
    const auto wk = static_cast<long long>(at(worker, i, 0));
    const std::size_t row =
        static_cast<std::size_t>(std::lower_bound(wl.begin(), wl.end(), wk) - wl.begin());
    const std::string ph = (phase.is_array() && i < phase.size() && phase[i].is_string())
                               ? phase[i].get<std::string>()
                               : "compute";
    const double s = at(start, i, 0), e = at(end, i, 0);
    out += fmt::format(
        "<rect x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.0f}\" "
        "fill=\"{}\"><title>worker {} task {} {} {}</title></rect>\n",
        X(s), top + row * row_h + 2, std::max(0.5, X(e) - X(s)), row_h - 4, phase_color(ph), wk,
        static_cast<long long>(at(task, i, -1)), html_escape(ph), human_seconds(e - s));
  }
  out += "</svg>\n";
  if (idx.size() >= max_events)
    out += fmt::format("<p class=\"note\">first {} events shown</p>\n", max_events);
  return out;
}

std::string summary_table(const json& summary) {
  std::string out =
      "<table><tr><th>case</th><th>status</th><th>reps</th><th>median</th><th>min</th><th>max</th>"
      "<th>stddev</th><th>throughput</th><th>vs 1cpu</th><th>vs "
      "1gpu</th><th>efficiency</th></tr>\n";
  for (const auto& r : summary) {
    const std::string status = str(r, "status");
    out += fmt::format(
        "<tr><td>{}</td><td class=\"{}\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>"
        "<td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td "
        "class=\"n\">{}</td>"
        "<td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\" title=\"{}\">{}</td></tr>\n",
        html_escape(str(r, "case")), status == "ok" ? "ok" : "bad", html_escape(status),
        r.value("repeats", 0), human_seconds(num(r, "median_s")), human_seconds(num(r, "min_s")),
        human_seconds(num(r, "max_s")), human_seconds(num(r, "stddev_s")),
        html_escape(human_rate(num(r, "throughput"), str(r, "throughput_unit"))),
        human_ratio(num(r, "speedup_vs_single_cpu")), human_ratio(num(r, "speedup_vs_single_gpu")),
        html_escape(str(r, "ceiling")), human_percent(num(r, "efficiency")));
  }
  return out + "</table>\n";
}

std::string validation_section(const json& model) {
  std::string out;
  const json& cases = sub(model, "cases");
  for (const auto& c : cases.is_array() ? cases : json::array()) {
    const json& v = sub(c, "validation");
    const std::string status = str(c, "status");
    const bool bad = status != "ok" || validation_failed(c);
    out += fmt::format("<details{}><summary class=\"{}\">{} — {}{}</summary>\n", bad ? " open" : "",
                       bad ? "bad" : "ok", html_escape(case_label(c)), html_escape(status),
                       str(c, "message").empty() ? "" : ": " + html_escape(str(c, "message")));
    out += html_records(v);
    out += "</details>\n";
  }
  return out;
}

}  // namespace

std::string format_html(const json& model, const json& summary) {
  const json& a = sub(model, "attrs");
  const json& sys = sub(model, "system");
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  out += fmt::format("<title>scalebench report {}</title>\n", html_escape(str(a, "start_utc")));
  out += std::string("<style>") + kStyle + "</style></head><body>\n";
  out += "<h1>scalebench report</h1>\n" + html_object(a);
  out += "<h2>Summary</h2>\n" + summary_table(summary);
  out +=
      "<p class=\"note\">Speedups compare throughput (work per second at the median time) "
      "with the single-cpu / single-gpu case of the same workload and parameters. Efficiency: "
      "achieved bytes/s or flop/s over the measured ceiling (GPU copy bandwidth or fp64 GEMM; "
      "CPU STREAM triad or DGEMM; times workers).</p>\n";
  out += "<h2>Speedup</h2>\n" + speedup_charts(summary);
  out += "<h2>Scaling</h2>\n" + scaling_chart(model, summary);
  out += "<h2>Phase breakdown (median per phase)</h2>\n" + phase_chart(model);
  out += "<h2>Task streams (first timed repeat)</h2>\n";
  std::size_t shown = 0;
  const json& cases = sub(model, "cases");
  for (const auto& c : cases.is_array() ? cases : json::array()) {
    if (shown >= 24) break;
    const std::string s = task_stream(c, 5000);
    if (!s.empty()) {
      out += s;
      ++shown;
    }
  }
  if (shown == 0) out += "<p class=\"note\">no task events recorded</p>\n";
  out += "<h2>Validation</h2>\n" + validation_section(model);
  out += "<h2>System</h2>\n<h3>Nodes</h3>\n" + html_records(sub(sys, "nodes"));
  out += "<h3>GPUs</h3>\n" + html_records(sub(sys, "gpus"));
  out += "<h3>Ceilings</h3>\n" + html_records(sub(sys, "ceilings"));
  out += "<h3>Versions</h3>\n" + html_object(sub(sys, "versions"));
  out += "<h3>Start-up</h3>\n" + html_object(sub(model, "startup"));
  if (sys.contains("topology"))
    out += "<h3>Topology</h3>\n<pre>" + html_escape(cell_text(sys["topology"])) + "</pre>\n";
  out += "</body></html>\n";
  return out;
}

}  // namespace sb::results::detail
