/// `history report --format openmetrics`: the OpenMetrics text format, for sites that keep their
/// own dashboards (Prometheus backfill, VictoriaMetrics, Grafana). Every sample carries the
/// run's start time as its timestamp; the commit is a label of scalebench_run_info only, so a
/// case keeps one series per machine.
#include <ctime>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "history_formats.hpp"

namespace sb::results::history {
namespace {

/// Seconds since the epoch of "YYYY-MM-DDTHH:MM:SSZ"; -1 when it does not parse.
double epoch_of(const std::string& utc) {
  std::tm tm{};
  const char* end = ::strptime(utc.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (end == nullptr) return -1;
  return static_cast<double>(::timegm(&tm));
}

std::string label_value(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string labels(const std::vector<std::pair<std::string, std::string>>& kv) {
  std::string s;
  for (const auto& [k, v] : kv)
    s += fmt::format("{}{}=\"{}\"", s.empty() ? "" : ",", k, label_value(v));
  return "{" + s + "}";
}

/// One metric family: header lines, then each series' samples in time order (a series'
/// timestamps must increase, so a second run at the same second is left out).
struct Family {
  std::string name, type, unit, help;
  std::map<std::string, std::vector<std::pair<double, std::string>>> series;  // labels -> (t, v)
  void add(const std::string& labelset, double t, const std::string& value) {
    auto& s = series[labelset];
    if (!s.empty() && t <= s.back().first) return;
    s.emplace_back(t, value);
  }
  [[nodiscard]] std::string text() const {
    std::string out = fmt::format("# TYPE {} {}\n", name, type);
    if (!unit.empty()) out += fmt::format("# UNIT {} {}\n", name, unit);
    out += fmt::format("# HELP {} {}\n", name, help);
    const std::string sample = type == "info" ? name + "_info" : name;
    for (const auto& [l, points] : series)
      for (const auto& [t, v] : points) out += fmt::format("{}{} {} {:.0f}\n", sample, l, v, t);
    return out;
  }
};

}  // namespace

std::string openmetrics(const HistoryStore& store, const std::vector<Trend>& trends) {
  Family fast{"scalebench_case_seconds",
              "gauge",
              "seconds",
              "Mean of the fastest third of a case's timed repeats in one run.",
              {}};
  Family med{"scalebench_case_median_seconds",
             "gauge",
             "seconds",
             "Median of a case's timed repeats in one run.",
             {}};
  Family step{"scalebench_change_point_ratio",
              "gauge",
              "",
              "Relative size of a step found by change-point detection, at the run that starts "
              "the new level (0.08 = 8% slower).",
              {}};
  Family info{
      "scalebench_run", "info", "", "One per run: the commit, host and scalebench version.", {}};
  for (const auto& r : store.runs) {
    const double t = epoch_of(r.time_utc);
    if (t < 0) continue;
    info.add(labels({{"machine", r.machine},
                     {"commit", r.commit},
                     {"host", r.host},
                     {"scalebench_version", r.scalebench_version}}),
             t, "1");
  }
  for (const auto& tr : trends) {
    const std::string l = labels(
        {{"machine", tr.machine}, {"case", tr.key}, {"workload", tr.workload}, {"path", tr.path}});
    for (const auto& p : tr.points) {
      const double t = epoch_of(store.runs[p.run].time_utc);
      if (t < 0) continue;
      fast.add(l, t, fmt::format("{:.9g}", p.fast_s));
      med.add(l, t, fmt::format("{:.9g}", p.median_s));
    }
    for (const auto& c : tr.steps) {
      const double t = epoch_of(store.runs[tr.points[c.index].run].time_utc);
      if (t >= 0) step.add(l, t, fmt::format("{:.6g}", c.change));
    }
  }
  return fast.text() + med.text() + step.text() + info.text() + "# EOF\n";
}

}  // namespace sb::results::history
