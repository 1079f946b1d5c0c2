#pragma once
/// @file history.hpp
/// `scalebench history`: a store of runs, one HDF5 file (docs/report-schema.md, "History
/// store"), and each case's trend over the runs with its change points (change_points.hpp).
///
/// A run is keyed by the commit under test, its start time, its host and the fingerprint of its
/// hardware (system_identity.hpp). Trends are per (machine, case): runs from different hardware
/// are never mixed. A case's value in a run is the mean of the fastest third of its timed
/// repeats (the gate's statistic, docs/ci.md), repeats marked throttled left out.

#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalebench/change_points.hpp"

namespace sb::results {

inline constexpr int kHistoryVersion = 1;

struct HistoryCase {
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  std::string key;  ///< workload/path/k=v,... (canonical path, sorted parameters), then
                    ///< /DEVICE for an each-gpu or each-node record
  std::string workload;
  std::string path;
  std::string params;  ///< k=v,k=v
  std::string status;
  std::vector<double> totals;  ///< timed repeats, seconds
  double fast_s = kNaN;        ///< mean of the fastest third of `totals`
  double median_s = kNaN;
};

struct HistoryRun {
  long long id = 0;  ///< 1, 2, ... in the order runs were added
  std::string commit;
  std::string time_utc;  ///< the report's start_utc
  std::string host;
  std::string machine;       ///< hardware_fingerprint
  std::string machine_text;  ///< hardware_description
  std::string scalebench_version;
  std::string preset;
  std::string report;  ///< file name the run came from
  std::string added_utc;
  std::vector<HistoryCase> cases;
};

/// Runs sorted by time (then id).
struct HistoryStore {
  std::vector<HistoryRun> runs;
};

/// Reads a store. Throws sb::UsageError when the file is missing or not a history store.
[[nodiscard]] HistoryStore read_history(const std::string& path);
/// Writes a store crash-safely (temporary file, fsync, rename). Throws sb::UsageError.
void write_history(const HistoryStore& store, const std::string& path);

/// The run a report model describes; `commit` overrides the report's git_sha when not empty.
[[nodiscard]] HistoryRun history_run(const nlohmann::json& report, const std::string& report_name,
                                     const std::string& commit = {});
/// Adds `run` in time order and gives it the next id; false (store unchanged) when the store
/// already holds a run of the same commit, time, host and machine.
bool add_history_run(HistoryStore& store, HistoryRun run);

struct TrendPoint {
  std::size_t run = 0;  ///< index into HistoryStore::runs
  double fast_s = 0;
  double median_s = 0;
  std::size_t repeats = 0;
};

/// One case on one machine over the runs, with the steps found in it.
struct Trend {
  std::string machine;
  std::string machine_text;
  std::string key;
  std::string workload;
  std::string path;
  std::vector<TrendPoint> points;  ///< runs where the case finished ok, in time order
  std::vector<ChangePoint> steps;  ///< ChangePoint::index indexes `points`
};

/// Trends of the cases whose key matches `pattern` (shell glob; empty: all), machine by machine
/// in order of first appearance, cases by key.
[[nodiscard]] std::vector<Trend> history_trends(const HistoryStore& store,
                                                const std::string& pattern = {},
                                                const ChangePointOptions& options = {});

/// "table", "markdown", "html" (self-contained page with charts) or "openmetrics".
/// Throws sb::UsageError for another format.
[[nodiscard]] std::string format_history(const HistoryStore& store,
                                         const std::vector<Trend>& trends,
                                         const std::string& format);
/// The formats format_history accepts.
[[nodiscard]] const std::vector<std::string>& history_formats();

}  // namespace sb::results
