/// The node-acceptance charts of the HTML page: the node x GPU heat map of the verdicts and the
/// telemetry timelines of each case with its throttled repeats marked, each followed by a legend
/// that explains every colour it paints (tests/results/check_html_render.py).

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "format_util.hpp"
#include "html_charts.hpp"
#include "scalebench/verdicts.hpp"
#include "summary_util.hpp"

namespace sb::results::detail {
namespace {

constexpr const char* kOk = "#59a14f";
constexpr const char* kInefficient = "#edc948";
constexpr const char* kSlow = "#f28e2b";
constexpr const char* kThrottled = "#b07aa1";
constexpr const char* kBusy = "#4e79a7";
constexpr const char* kUnhealthy = "#9c755f";
constexpr const char* kFailed = "#e15759";
constexpr const char* kNotJudged = "#bab0ac";
constexpr const char* kNone = "#e8e8e8";     // no verdict for that cell
constexpr const char* kMissing = "#555555";  // a fleet's node that left no report
constexpr const char* kShade = "#f6c9c4";    // a throttled repeat on a timeline
constexpr double kCharPx = 6.5;

/// A cell shows its device's worst verdict; ok outranks `not judged` (something judged it).
int severity(const std::string& v) {
  static const std::map<std::string, int> rank{
      {"not judged", 0}, {"ok", 1},   {"inefficient", 2}, {"slow", 3},
      {"throttled", 4},  {"busy", 5}, {"unhealthy", 6},   {"failed", 7}};
  const auto it = rank.find(v);
  return it == rank.end() ? 7 : it->second;
}

const char* verdict_color(const std::string& v) {
  switch (severity(v)) {
    case 0:
      return kNotJudged;
    case 1:
      return kOk;
    case 2:
      return kInefficient;
    case 3:
      return kSlow;
    case 4:
      return kThrottled;
    case 5:
      return kBusy;
    case 6:
      return kUnhealthy;
    default:
      return kFailed;
  }
}

/// One signal of a case's timeline.
struct Signal {
  const char* key;    ///< series column, or repeat-table column for per-repeat signals
  const char* title;  ///< panel label
  const char* color;
  bool per_repeat = false;
  double scale = 1.0;
  bool percent = false;  ///< drawn on 0..100 (a share), not scaled to its range
};

const std::vector<Signal>& gpu_signals() {
  static const std::vector<Signal> s{
      {"gpu_sm_mhz", "SM clock, MHz", "#4e79a7"},
      {"gpu_others_sm_pct_median", "other processes' SM use, %", "#9c755f", true, 1.0, true},
      {"gpu_power_w", "power, W", "#f28e2b"},
      {"gpu_temp_c",
       "temperature, \xC2\xB0"
       "C",
       "#e15759"}};
  return s;
}

const std::vector<Signal>& cpu_signals() {
  static const std::vector<Signal> s{
      {"cpu_mhz", "CPU clock, MHz", "#76b7b2"},
      {"other_cpu_fraction", "others' CPU use, %", "#9c755f", true, 100.0, true}};
  return s;
}

/// Points (t, value) of one worker's signal.
using Line = std::vector<std::pair<double, double>>;

std::map<int, Line> lines_of(const json& telemetry, const Signal& s) {
  std::map<int, Line> out;
  if (s.per_repeat) {
    for (const auto& r : sub(telemetry, "repeats")) {
      const double v = num(r, s.key), t0 = num(r, "t_begin"), t1 = num(r, "t_end");
      if (!std::isfinite(v) || !std::isfinite(t0) || !std::isfinite(t1)) continue;
      auto& l = out[static_cast<int>(num(r, "worker", 0))];
      l.emplace_back(t0, v * s.scale);
      l.emplace_back(t1, v * s.scale);
    }
    return out;
  }
  const json& series = sub(telemetry, "series");
  const json& t = sub(series, "t");
  const json& v = sub(series, s.key);
  const json& w = sub(series, "worker");
  if (!t.is_array() || !v.is_array() || v.size() != t.size()) return out;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (!t[i].is_number() || !v[i].is_number()) continue;
    const int worker = i < w.size() && w[i].is_number() ? w[i].get<int>() : 0;
    out[worker].emplace_back(t[i].get<double>(), v[i].get<double>() * s.scale);
  }
  return out;
}

std::string one_timeline(const json& c) {
  const json& tel = sub(c, "telemetry");
  const bool gpu = case_device(c) == "gpu";
  std::vector<Signal> signals;
  std::vector<std::map<int, Line>> data;
  double tmax = 0;
  for (const auto& s : gpu ? gpu_signals() : cpu_signals()) {
    auto lines = lines_of(tel, s);
    bool any = false;
    for (const auto& [w, l] : lines)
      for (const auto& [t, v] : l) {
        any = true;
        tmax = std::max(tmax, t);
      }
    if (!any) continue;
    signals.push_back(s);
    data.push_back(std::move(lines));
  }
  if (signals.empty()) return {};
  if (!(tmax > 0)) tmax = 1e-3;
  constexpr double left = 130, width = 560, panel = 56, gap = 14, top = 8;
  const double height = top + signals.size() * (panel + gap) + 18;
  std::string out = fmt::format("<h3>{}</h3>\n", html_escape(case_label(c)));
  out += svg_open("telemetry", left + width + 70, height);
  auto x = [&](double t) { return left + std::clamp(t / tmax, 0.0, 1.0) * width; };
  // Throttled repeats: shaded across every panel.
  bool shaded = false;
  for (const auto& r : sub(tel, "repeats")) {
    const auto it = r.find("throttled");
    if (it == r.end() || !it->is_boolean() || !it->get<bool>()) continue;
    const double t0 = num(r, "t_begin"), t1 = num(r, "t_end");
    if (!std::isfinite(t0) || !std::isfinite(t1)) continue;
    shaded = true;
    out += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.0f}\" width=\"{:.1f}\" height=\"{:.0f}\" fill=\"{}\">"
        "<title>repeat {} throttled: {}</title></rect>\n",
        x(t0), top, std::max(1.0, x(t1) - x(t0)), height - top - 18, kShade,
        static_cast<long long>(num(r, "repeat", 0)), html_escape(str(r, "throttle_reason")));
  }
  for (std::size_t p = 0; p < signals.size(); ++p) {
    const double y0 = top + p * (panel + gap);
    double lo = signals[p].percent ? 0.0 : INFINITY, hi = signals[p].percent ? 100.0 : -INFINITY;
    for (const auto& [w, l] : data[p])
      for (const auto& [t, v] : l) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
    if (hi - lo < 1e-9) {
      lo -= 1;
      hi += 1;
    }
    auto y = [&](double v) { return y0 + panel - (v - lo) / (hi - lo) * panel; };
    out += fmt::format(
        "<line x1=\"{0:.0f}\" x2=\"{0:.0f}\" y1=\"{1:.0f}\" y2=\"{2:.0f}\" stroke=\"#bbb\"/>"
        "<line x1=\"{0:.0f}\" x2=\"{3:.0f}\" y1=\"{2:.0f}\" y2=\"{2:.0f}\" stroke=\"#bbb\"/>\n",
        left, y0, y0 + panel, left + width);
    out += fmt::format("<text x=\"{:.0f}\" y=\"{:.0f}\">{}</text>\n", 4.0, y0 + panel / 2 + 4,
                       html_escape(signals[p].title));
    out += fmt::format(
        "<text x=\"{0:.0f}\" y=\"{1:.0f}\" text-anchor=\"end\">{2:.4g}</text>"
        "<text x=\"{0:.0f}\" y=\"{3:.0f}\" text-anchor=\"end\">{4:.4g}</text>\n",
        left - 4, y0 + 9, hi, y0 + panel, lo);
    for (const auto& [w, l] : data[p]) {
      std::string pts;
      for (const auto& [t, v] : l) pts += fmt::format("{:.1f},{:.1f} ", x(t), y(v));
      out += fmt::format(
          "<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\">"
          "<title>worker {}: {}</title></polyline>\n",
          pts, signals[p].color, w, html_escape(signals[p].title));
    }
  }
  out += fmt::format(
      "<text x=\"{:.0f}\" y=\"{:.0f}\">0</text><text x=\"{:.0f}\" y=\"{:.0f}\" "
      "text-anchor=\"end\">{}</text>\n",
      left, height - 4, left + width, height - 4, html_escape("time " + human_seconds(tmax)));
  out += "</svg>\n";
  std::vector<LegendKey> keys;
  for (const auto& s : signals) keys.push_back({s.color, s.title, true});
  if (shaded)
    keys.push_back({kShade, "a repeat that ran throttled (left out of the median by default)"});
  return out + html_legend("telemetry", keys);
}

}  // namespace

std::string verdict_heatmap(const nlohmann::json& model) {
  const json verdicts = verdicts_of(model);
  // A merged fleet's nodes that never reported (merge.hpp) get a row of their own.
  std::map<std::string, std::string> missing;
  for (const auto& m : sub(sub(model, "fleet"), "missing"))
    if (!str(m, "node").empty()) missing[str(m, "node")] = str(m, "reason");
  if ((!verdicts.is_array() || verdicts.empty()) && missing.empty())
    return "<p class=\"note\">no device judged</p>\n";
  // Worst verdict and every reason per (host, device).
  std::map<std::pair<std::string, int>, std::pair<std::string, std::string>> cells;
  std::set<std::string> hosts;
  int max_gpu = -1;
  bool nodes = false;
  for (const auto& v : verdicts) {
    if (is_link_verdict(v)) continue;  // links have the pair matrix's heat map
    const std::string host = str(v, "host");
    const int dev = static_cast<int>(num(v, "device", -1));
    hosts.insert(host);
    max_gpu = std::max(max_gpu, dev);
    nodes = nodes || dev < 0;
    auto& cell = cells[{host, dev}];
    const std::string verdict = str(v, "verdict");
    if (cell.first.empty() || severity(verdict) > severity(cell.first)) cell.first = verdict;
    cell.second += (cell.second.empty() ? "" : "\n") + str(v, "verdict") + " " + str(v, "case") +
                   ": " + str(v, "reason");
  }
  for (const auto& [host, why] : missing) hosts.insert(host);
  nodes = nodes || (max_gpu < 0 && !missing.empty());
  std::vector<int> cols;
  if (nodes) cols.push_back(-1);
  for (int g = 0; g <= max_gpu; ++g) cols.push_back(g);
  std::size_t longest = 4;
  for (const auto& h : hosts) longest = std::max(longest, display_width(h));
  const double left = 10 + longest * kCharPx, cw = 44, ch = 20, top = 22;
  std::string out = svg_open("verdicts", left + cols.size() * cw + 10, top + hosts.size() * ch + 6);
  for (std::size_t j = 0; j < cols.size(); ++j)
    out += fmt::format("<text x=\"{:.1f}\" y=\"14\" text-anchor=\"middle\">{}</text>\n",
                       left + j * cw + cw / 2,
                       cols[j] < 0 ? std::string("node") : fmt::format("GPU {}", cols[j]));
  bool empty_cell = false;
  std::size_t i = 0;
  for (const auto& h : hosts) {
    const double y = top + i++ * ch;
    out += fmt::format("<text x=\"4\" y=\"{:.1f}\">{}</text>\n", y + 14, html_escape(h));
    if (const auto m = missing.find(h); m != missing.end()) {
      out += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.0f}\" height=\"{:.0f}\" fill=\"{}\" "
          "stroke=\"#fff\" data-verdict=\"missing\"><title>{}</title></rect>\n",
          left, y, cw * static_cast<double>(cols.size()), ch, kMissing,
          html_escape(h + ": missing (" + m->second + ")"));
      continue;
    }
    for (std::size_t j = 0; j < cols.size(); ++j) {
      const auto it = cells.find({h, cols[j]});
      const bool have = it != cells.end();
      empty_cell = empty_cell || !have;
      out += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.0f}\" height=\"{:.0f}\" fill=\"{}\" "
          "stroke=\"#fff\" data-verdict=\"{}\"><title>{}</title></rect>\n",
          left + j * cw, y, cw, ch, have ? verdict_color(it->second.first) : kNone,
          have ? it->second.first : "none",
          html_escape(have ? h + (cols[j] < 0 ? "" : fmt::format(" GPU {}", cols[j])) + "\n" +
                                 it->second.second
                           : "not measured"));
    }
  }
  out += "</svg>\n";
  std::set<int> shown;
  for (const auto& [key, cell] : cells) shown.insert(severity(cell.first));
  const std::vector<std::pair<int, LegendKey>> all_keys{
      {1, {kOk, "ok: as fast as its peers and its reference, healthy"}},
      {2, {kInefficient, "inefficient: 15% more energy than its peers for the same work"}},
      {3, {kSlow, "slow: slower than its peers or its reference"}},
      {4,
       {kThrottled,
        "throttled: slow and ran throttled, or slowed down for thermal or hardware reasons"}},
      {5, {kBusy, "busy: another process computed on the GPU while it ran (named)"}},
      {6,
       {kUnhealthy,
        "unhealthy: a health field out of order (PCIe link, row remapping, NVLink, clocks, ...)"}},
      {7, {kFailed, "failed: the case failed on it, or GPU errors (XID, uncorrected ECC)"}},
      {0, {kNotJudged, "not judged: no peer of its model and no reference"}}};
  std::vector<LegendKey> keys;
  // Every colour the map paints, and the three a reader looks for first.
  for (const auto& [sev, key] : all_keys)
    if (shown.count(sev) != 0 || sev == 1 || sev == 3 || sev == 7) keys.push_back(key);
  if (empty_cell) keys.push_back({kNone, "no verdict: that device ran no judged case"});
  if (!missing.empty())
    keys.push_back({kMissing, "missing: the node's job left no report (never ran, or killed)"});
  return out + html_legend("verdicts", keys);
}

std::string verdict_table(const nlohmann::json& model) {
  const json verdicts = verdicts_of(model);
  if (!verdicts.is_array() || verdicts.empty()) return {};
  const bool all = verdicts.size() <= 64;
  std::string out = fmt::format("<p>{}</p>\n", html_escape(format_verdicts_text(verdicts).substr(
                                                   0, format_verdicts_text(verdicts).find('\n'))));
  out +=
      "<div class=\"scroll\"><table id=\"verdicts\"><tr><th>verdict</th><th>host</th>"
      "<th>device</th><th>case</th><th>value</th><th>expected</th><th>reason</th></tr>\n";
  for (const auto& v : verdicts) {
    const std::string verdict = str(v, "verdict");
    if (!all && verdict == "ok") continue;
    out += fmt::format(
        "<tr><td class=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td>"
        "<td class=\"n\">{}</td><td>{}</td></tr>\n",
        verdict == "ok"           ? "ok"
        : verdict == "not judged" ? "skip"
                                  : "bad",
        html_escape(verdict), html_escape(str(v, "host")), html_escape(verdict_device_text(v)),
        html_escape(str(v, "case")), verdict_value_text(v, "value"),
        verdict_value_text(v, "expected"), html_escape(str(v, "reason")));
  }
  return out + "</table></div>\n";
}

std::string telemetry_charts(const nlohmann::json& model, std::size_t max_cases) {
  std::string out;
  std::size_t shown = 0, with = 0;
  const json& cases = sub(model, "cases");
  for (std::size_t i = 0; i < (cases.is_array() ? cases.size() : 0); ++i) {
    if (sub(sub(cases[i], "telemetry"), "series").empty()) continue;
    ++with;
    if (shown >= max_cases) continue;
    const std::string one = one_timeline(cases[i]);
    if (one.empty()) continue;
    out += one;
    ++shown;
  }
  if (with > shown)
    out += fmt::format(
        "<p class=\"note\">{} more case(s) with telemetry: the report holds "
        "their series (/cases/*/telemetry)</p>\n",
        with - shown);
  return out.empty() ? "<p class=\"note\">no telemetry recorded</p>\n" : out;
}

}  // namespace sb::results::detail
