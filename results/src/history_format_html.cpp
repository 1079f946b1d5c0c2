/// `history report --format html`: one self-contained page (no script, no external resource),
/// one inline SVG trend chart per case with its levels and change points marked.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "format_util.hpp"
#include "history_formats.hpp"

namespace sb::results::history {
namespace {

using detail::html_escape;

constexpr const char* kStyle = R"(
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ddd}h3{font-size:1em;margin-bottom:4px}
svg{font-size:11px;font-family:inherit}svg text{fill:#333}.note{color:#666;font-size:0.85em;margin:2px 0 6px}
)";
constexpr const char* kPointColor = "#4e79a7";
constexpr const char* kLevelColor = "#59a14f";
constexpr const char* kStepColor = "#e15759";  // tests/results/check_history_html.py looks for it

constexpr double kWidth = 760, kHeight = 240;
constexpr double kLeft = 76, kRight = 16, kTop = 40, kBottom = 36;

struct Frame {
  std::size_t n = 1;
  double lo = 0, hi = 1;
  [[nodiscard]] double x(double i) const {  // i = point index + 0.5 for a point's centre
    return kLeft + i / static_cast<double>(n) * (kWidth - kLeft - kRight);
  }
  [[nodiscard]] double y(double v) const {
    return kTop + (hi - v) / (hi - lo) * (kHeight - kTop - kBottom);
  }
};

Frame frame_of(const Trend& t) {
  Frame f;
  f.n = std::max<std::size_t>(1, t.points.size());
  double lo = t.points.front().fast_s, hi = lo;
  for (const auto& p : t.points) {
    lo = std::min(lo, p.fast_s);
    hi = std::max(hi, p.fast_s);
  }
  const double pad = std::max(0.05 * (hi - lo), 0.02 * hi);
  f.lo = std::max(0.0, lo - pad);
  f.hi = hi + pad;
  return f;
}

/// "11-22" of "2026-11-22T10:00:00Z" ("" when it is not a time).
std::string month_day(const std::string& utc) {
  return utc.size() >= 10 && utc[4] == '-' && utc[7] == '-' ? utc.substr(5, 5) : std::string();
}

/// The x axis names each run by its commit and, below, its date (every run while there is room,
/// else every k-th).
std::string axes(const HistoryStore& store, const Trend& t, const Frame& f) {
  std::string s = fmt::format(
      "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#999\"/>"
      "<line x1=\"{0}\" y1=\"{2}\" x2=\"{3}\" y2=\"{2}\" stroke=\"#999\"/>\n",
      kLeft, kTop, kHeight - kBottom, kWidth - kRight);
  for (int k = 0; k <= 4; ++k) {
    const double v = f.lo + (f.hi - f.lo) * k / 4.0;
    s += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#eee\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
        kLeft, f.y(v), kWidth - kRight, kLeft - 6, f.y(v) + 4, detail::human_seconds(v));
  }
  const std::size_t every = std::max<std::size_t>(1, (f.n + 7) / 8);  // 12-digit commits fit
  for (std::size_t i = 0; i < f.n && i < t.points.size(); i += every) {
    const HistoryRun& run = store.runs[t.points[i].run];
    const double x = f.x(static_cast<double>(i) + 0.5);
    s += fmt::format(
        "<text class=\"run-label\" x=\"{0:.1f}\" y=\"{1:.1f}\" text-anchor=\"middle\">"
        "<title>run {2}: commit {3}, {4}</title>{5}<tspan x=\"{0:.1f}\" dy=\"12\">{6}</tspan>"
        "</text>\n",
        x, kHeight - kBottom + 13, run.id, html_escape(run.commit), html_escape(run.time_utc),
        html_escape(short_commit(run.commit)), html_escape(month_day(run.time_utc)));
  }
  return s;
}

std::string levels(const Trend& t, const Frame& f) {
  std::vector<std::size_t> bounds{0};
  for (const auto& c : t.steps) bounds.push_back(c.index);
  bounds.push_back(t.points.size());
  std::string s;
  for (std::size_t k = 0; k + 1 < bounds.size(); ++k) {
    const double v = k == 0 ? (t.steps.empty() ? std::numeric_limits<double>::quiet_NaN()
                                               : t.steps.front().before)
                            : t.steps[k - 1].after;
    if (!std::isfinite(v)) continue;
    s += fmt::format(
        "<line class=\"level\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" "
        "stroke=\"{}\" stroke-width=\"2\" opacity=\"0.8\"/>\n",
        f.x(static_cast<double>(bounds[k])), f.y(v), f.x(static_cast<double>(bounds[k + 1])),
        f.y(v), kLevelColor);
  }
  return s;
}

std::string points(const Trend& t, const Frame& f) {
  std::string line, dots;
  for (std::size_t i = 0; i < t.points.size(); ++i) {
    const double x = f.x(static_cast<double>(i) + 0.5), y = f.y(t.points[i].fast_s);
    line += fmt::format("{}{:.1f},{:.1f}", line.empty() ? "" : " ", x, y);
    dots += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\"/>\n", x, y,
                        kPointColor);
  }
  return fmt::format(
             "<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" "
             "opacity=\"0.6\"/>\n",
             line, kPointColor) +
         dots;
}

std::string steps(const HistoryStore& store, const Trend& t, const Frame& f) {
  std::string s;
  for (std::size_t k = 0; k < t.steps.size(); ++k) {
    const ChangePoint& c = t.steps[k];
    const double x = std::round(f.x(static_cast<double>(c.index)));
    const HistoryRun& run = store.runs[t.points[c.index].run];
    const std::string label = fmt::format("{:+.1f}% at {} ({})", c.change * 100.0,
                                          short_commit(run.commit), month_day(run.time_utc));
    const bool left = x > kWidth / 2;
    s += fmt::format(
        "<line class=\"change-point\" data-point=\"{}\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" "
        "stroke=\"{}\" stroke-width=\"3\" stroke-dasharray=\"6 3\" shape-rendering=\"crispEdges\"/>"
        "<text x=\"{}\" y=\"{}\" text-anchor=\"{}\" style=\"fill:{}\">{}</text>\n",
        c.index + 1, x, kTop - 18, x, kHeight - kBottom, kStepColor, left ? x - 5 : x + 5,
        k % 2 == 0 ? kTop - 22 : kTop - 8, left ? "end" : "start", kStepColor, html_escape(label));
  }
  return s;
}

std::string chart(const HistoryStore& store, const Trend& t) {
  const Frame f = frame_of(t);
  return fmt::format(
             "<svg class=\"chart\" data-chart=\"history\" data-change-points=\"{}\" "
             "width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\">\n",
             t.steps.size(), kWidth, kHeight, kWidth, kHeight, html_escape(t.key)) +
         axes(store, t, f) + levels(t, f) + points(t, f) + steps(store, t, f) + "</svg>\n";
}

}  // namespace

std::string html(const HistoryStore& store, const std::vector<Trend>& trends) {
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<title>scalebench history</title><style>{}</style></head><body>\n"
      "<h1>scalebench history</h1>\n<p class=\"note\">{} run(s). Each point is the mean of the "
      "fastest third of a case's timed repeats in one run; green lines are the levels found by "
      "change-point detection, red dashed lines the runs where a case stepped up or down.</p>\n",
      kStyle, store.runs.size());
  std::string machine;
  for (const auto& t : trends) {
    if (t.machine != machine) {
      machine = t.machine;
      out += fmt::format("<h2>machine {}</h2>\n<p class=\"note\">{}</p>\n", html_escape(machine),
                         html_escape(t.machine_text));
    }
    out += fmt::format("<h3>{}</h3>\n<p class=\"note\">{}</p>\n", html_escape(t.key),
                       html_escape(trend_summary(store, t)));
    if (!t.points.empty()) out += chart(store, t);
  }
  if (trends.empty()) out += "<p>No case in the store matches.</p>\n";
  return out + "</body></html>\n";
}

}  // namespace sb::results::history
