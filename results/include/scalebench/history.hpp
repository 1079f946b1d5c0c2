#pragma once
/// @file history.hpp
/// `scalebench history`: a store of runs and each case's trend over them with its change points
/// (change_points.hpp). A store is a SQLite file (the default) or a PostgreSQL database (a
/// `postgresql://` URI), both with the schema of docs/history-schema.md; an HDF5 store of an
/// earlier scalebench is still read, and `history import` copies it into a new store.
///
/// A run is keyed by the commit under test, its start time, its host and the fingerprint of its
/// hardware (system_identity.hpp). Trends are per (machine, case): runs from different hardware
/// are never mixed. A case's value in a run is the mean of the fastest third of its timed
/// repeats (the gate's statistic, docs/ci.md), repeats marked throttled left out.

#include <cstddef>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalebench/change_points.hpp"

namespace sb::results {

/// The schema of SQLite and PostgreSQL stores (docs/history-schema.md). HDF5 stores are
/// version 1.
inline constexpr int kHistoryVersion = 2;

struct HistoryCase {
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  std::string key;  ///< workload/path/k=v,... (canonical path, sorted parameters), then
                    ///< /DEVICE for an each-gpu or each-node record
  std::string workload;
  std::string path;
  std::string params;  ///< k=v,k=v
  std::string device;  ///< "node0:gpu1" for an each-gpu or each-node record, else empty
  std::string status;
  std::size_t repeats = 0;     ///< timed repeats kept
  std::vector<double> totals;  ///< those repeats, seconds (empty when read without samples)
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
  std::string scheduler;  ///< local, slurm, pbs, ... (empty when the report did not say)
  std::string job_id;     ///< batch job id; empty when local
  long long nodes = 0;    ///< 0 when unknown
  long long workers = 0;  ///< 0 when unknown
  std::string status;     ///< the run's status (ok, failed, stopped by SIGTERM, ...)
  std::string report;     ///< file name the run came from
  std::string added_utc;
  std::vector<HistoryCase> cases;
};

/// Runs sorted by time (then id).
struct HistoryStore {
  std::vector<HistoryRun> runs;
};

/// Where a store lives, as `history` commands name it: a PostgreSQL URI (postgresql:// or
/// postgres://, optionally with ?schema=NAME) or a file path.
struct HistoryLocation {
  enum class Kind { sqlite, postgresql, hdf5 };
  Kind kind = Kind::sqlite;
  std::string spec;   ///< as given
  std::string label;  ///< as messages print it: a URI's password replaced by ***
};

/// What `spec` names. A path that exists is an HDF5 store of an earlier scalebench or a SQLite
/// store by its first bytes; a new path is a SQLite store. Throws sb::UsageError for a folder,
/// something that is not a regular file, or a file that is neither; with `for_writing`, also
/// for an HDF5 store (saying how to import it) and for a new store named .h5.
[[nodiscard]] HistoryLocation locate_history(const std::string& spec, bool for_writing);

/// Reads a store (`samples`: every run's repeat times too, HistoryCase::totals; without them
/// only each case's statistics). Throws sb::UsageError when it is missing or not a history
/// store, sb::EnvironmentError when it cannot be reached.
[[nodiscard]] HistoryStore read_history(const std::string& spec, bool samples = false);

/// Result of add_history_runs.
struct HistoryAdded {
  std::vector<bool> added;  ///< per run given: false when the store held it already
  std::size_t runs = 0;     ///< runs in the store after the add
};

/// Adds `runs` to the store in one transaction (created when missing): all of them or, on any
/// error or a kill, none. Safe with any number of concurrent writers: each takes the store's
/// write lock (SQLite: BEGIN IMMEDIATE, waiting up to two minutes for another writer;
/// PostgreSQL: an advisory lock), so ids follow the order of the adds and a run is stored once:
/// one already there (same commit, time, host and machine) is left alone. Runs keep their
/// added_utc when it is set (an import), else get the time of the add.
HistoryAdded add_history_runs(const std::string& spec, std::vector<HistoryRun> runs);

/// The run a report model describes; `commit` overrides the report's git_sha when not empty.
[[nodiscard]] HistoryRun history_run(const nlohmann::json& report, const std::string& report_name,
                                     const std::string& commit = {});
/// The parameters of a params text "k=v,k=v" in order (a piece without '=' continues the value
/// before it: a value with commas).
[[nodiscard]] std::vector<std::pair<std::string, std::string>> history_params(
    const std::string& text);

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
  std::string params;  ///< k=v,k=v
  std::string device;
  std::vector<TrendPoint> points;  ///< runs where the case finished ok, in time order
  std::vector<ChangePoint> steps;  ///< ChangePoint::index indexes `points`
};

/// Trends of the cases whose key matches `pattern` (shell glob; empty: all), machine by machine
/// in order of first appearance, cases by key.
[[nodiscard]] std::vector<Trend> history_trends(const HistoryStore& store,
                                                const std::string& pattern = {},
                                                const ChangePointOptions& options = {});

/// "table", "markdown", "json", "html" (self-contained page with charts) or "openmetrics".
/// Throws sb::UsageError for another format.
[[nodiscard]] std::string format_history(const HistoryStore& store,
                                         const std::vector<Trend>& trends,
                                         const std::string& format);
/// The formats format_history accepts.
[[nodiscard]] const std::vector<std::string>& history_formats();

}  // namespace sb::results
