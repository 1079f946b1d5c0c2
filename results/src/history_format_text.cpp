// `history show` / `history report`: text and Markdown trends, and the format dispatcher.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "format_util.hpp"
#include "history_formats.hpp"
#include "scalebench/error.hpp"
#include "scalebench/history.hpp"

namespace sb::results {
namespace {

std::string pct(double change) {
  return std::isfinite(change) ? fmt::format("{:+.1f}%", change * 100.0) : "";
}

/// Machines in order of their first trend, with how many runs each has.
std::vector<std::pair<std::string, std::size_t>> machine_runs(const HistoryStore& store,
                                                              const std::vector<Trend>& trends) {
  std::vector<std::pair<std::string, std::size_t>> out;
  for (const auto& t : trends) {
    bool known = false;
    for (const auto& m : out) known = known || m.first == t.machine;
    if (known) continue;
    std::size_t n = 0;
    for (const auto& r : store.runs) n += r.machine == t.machine ? 1 : 0;
    out.emplace_back(t.machine, n);
  }
  return out;
}

const ChangePoint* step_at(const Trend& t, std::size_t i) {
  for (const auto& s : t.steps)
    if (s.index == i) return &s;
  return nullptr;
}

std::vector<std::vector<std::string>> rows_of(const HistoryStore& store, const Trend& t) {
  std::vector<std::vector<std::string>> rows{
      {"#", "time", "commit", "fastest third", "median", "repeats", "change", "step"}};
  for (std::size_t i = 0; i < t.points.size(); ++i) {
    const TrendPoint& p = t.points[i];
    const HistoryRun& run = store.runs[p.run];
    const double change =
        i > 0 ? p.fast_s / t.points[i - 1].fast_s - 1.0 : std::numeric_limits<double>::quiet_NaN();
    const ChangePoint* s = step_at(t, i);
    rows.push_back({std::to_string(i + 1), run.time_utc, history::short_commit(run.commit),
                    detail::human_seconds(p.fast_s), detail::human_seconds(p.median_s),
                    std::to_string(p.repeats), pct(change),
                    s != nullptr ? "<- " + history::step_text(*s) : ""});
  }
  return rows;
}

std::string render(const HistoryStore& store, const std::vector<Trend>& trends, bool markdown) {
  static const std::vector<bool> right{true, false, false, true, true, true, true, false};
  std::string out = markdown ? "## scalebench history\n\n" : "";
  for (const auto& [m, n] : machine_runs(store, trends)) {
    out += fmt::format("{}machine {}: {} ({} run{})\n\n", markdown ? "### " : "", m,
                       history::machine_text_of(trends, m), n, n == 1 ? "" : "s");
    for (const auto& t : trends) {
      if (t.machine != m) continue;
      out += fmt::format("{}{}\n", markdown ? "**" + t.key + "**: " : t.key + ": ",
                         history::trend_summary(store, t));
      if (t.points.empty()) {
        out += '\n';
        continue;
      }
      out += (markdown ? '\n' + detail::render_markdown(rows_of(store, t), right)
                       : detail::render_aligned(rows_of(store, t), right)) +
             '\n';
    }
  }
  if (trends.empty()) out += "no case in the store matches\n";
  return out;
}

}  // namespace

namespace history {

std::string short_commit(const std::string& commit) {
  return commit.size() > 12 ? commit.substr(0, 12) : commit;
}

std::string step_text(const ChangePoint& s) {
  return fmt::format("step {:+.1f}% ({} -> {})", s.change * 100.0, detail::human_seconds(s.before),
                     detail::human_seconds(s.after));
}

std::string machine_text_of(const std::vector<Trend>& trends, const std::string& machine) {
  for (const auto& t : trends)
    if (t.machine == machine) return t.machine_text;
  return "";
}

std::string trend_summary(const HistoryStore& store, const Trend& t) {
  if (t.points.empty()) return "never finished ok";
  std::string s = fmt::format("{} run{}, last {}", t.points.size(), t.points.size() == 1 ? "" : "s",
                              detail::human_seconds(t.points.back().fast_s));
  if (t.steps.empty()) return s + "; no step";
  for (const auto& c : t.steps) {
    const HistoryRun& run = store.runs[t.points[c.index].run];
    s += fmt::format("; {} at #{} (commit {}, {})", step_text(c), c.index + 1,
                     short_commit(run.commit), run.time_utc);
  }
  return s;
}

}  // namespace history

const std::vector<std::string>& history_formats() {
  static const std::vector<std::string> f{"table", "markdown", "json", "html", "openmetrics"};
  return f;
}

std::string format_history(const HistoryStore& store, const std::vector<Trend>& trends,
                           const std::string& format) {
  if (format == "table") return render(store, trends, false);
  if (format == "markdown") return render(store, trends, true);
  if (format == "json") return history::json_text(store, trends);
  if (format == "html") return history::html(store, trends);
  if (format == "openmetrics") return history::openmetrics(store, trends);
  throw UsageError(fmt::format(
      "unknown history format '{}'; use one of table, markdown, json, html, openmetrics", format));
}

}  // namespace sb::results
