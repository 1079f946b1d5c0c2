#pragma once
/// @file case_plan.hpp
/// Turns what the user asked for (preset, workloads, paths, --param overrides and sweeps, a
/// suite file) into the ordered list of cases of a run. Pure: tested without MPI.

#include <map>
#include <string>
#include <vector>

#include "ab_request.hpp"
#include "scalebench/workload.hpp"

namespace sb {

/// One group of cases: a workload with its paths and parameter overrides.
struct CaseRequest {
  std::string workload;
  std::string preset;               ///< empty: the run's preset
  std::vector<ExecPath> paths;      ///< empty: the run's paths
  std::vector<std::string> params;  ///< "key=value" of this workload (value may be a sweep)
};

struct RunRequest {
  std::string preset = "small";
  /// Workloads run with the run's settings. Empty: all, unless `cases` holds groups (a suite
  /// file's [[case]] tables), which then run alone.
  std::vector<std::string> workloads;
  std::vector<ExecPath> paths;            ///< empty: all four
  std::vector<std::string> suite_params;  ///< a suite file's [params]: "workload.key=value"
  std::vector<std::string> params;        ///< --param workload.key=value (over suite_params)
  int repeats = 5;                        ///< the fixed count (not under auto_repeats)
  int warmup = 1;
  /// `--repeats auto` (repeat_rule.hpp): each case takes min_repeats..max_repeats repeats,
  /// stopping once the median's spread is under target_spread or max_time_s has passed.
  bool auto_repeats = false;
  int min_repeats = kAutoMinRepeats;
  int max_repeats = kAutoMaxRepeats;
  double max_time_s = kAutoMaxTime;
  double target_spread = kAutoTargetSpread;
  /// Which of the limits were given (an A/B run has its own defaults, ab_runner.hpp).
  bool min_repeats_set = false;
  bool max_repeats_set = false;
  bool max_time_set = false;
  bool target_spread_set = false;
  std::vector<CaseRequest> cases;  ///< a suite file's [[case]] tables, after `workloads`
  /// A suite file's `plugins` (relative paths made relative to the suite file's folder); the
  /// launcher loads them before it plans (plugin_options.hpp).
  std::vector<std::string> plugins;
  /// An A/B run's sides and settings (a suite file's [baseline], [current] and [ab]).
  AbRequest ab;
  /// A weak scaling study's growth (`run --scale-factor`): every case's problem grown this many
  /// times by its workload's rule (Workload::weak_scale); 1: as given.
  double scale_factor = 1.0;
};

/// Limits of a run's settings, checked before anything starts.
inline constexpr int kMaxRepeats = 100000;
inline constexpr int kMaxWarmup = 10000;
inline constexpr std::size_t kMaxCases = 10000;

/// Presets every workload knows.
[[nodiscard]] const std::vector<std::string>& preset_names();

/// Parses a comma-separated path list (canonical names or aliases). Throws sb::UsageError.
[[nodiscard]] std::vector<ExecPath> parse_paths(const std::string& list);

/// The values of one --param value: itself; a comma list "a,b,c"; or a range of numbers
/// "lo:hi" (step 1), "lo:hi:step" or "lo:hi:+step" (arithmetic), "lo:hi:*f" or "lo:hi:xf"
/// (geometric), each ending at the last value <= hi. Throws sb::UsageError (naming `what`) on a
/// malformed range or more than 1000 values.
[[nodiscard]] std::vector<std::string> sweep_values(const std::string& value,
                                                    const std::string& what);

/// The cases, in order: per group (workloads, then suite [[case]] tables), per value of the
/// swept parameters (their cartesian product, in the order the parameters were given), per
/// variant, paths single-cpu, multi-cpu, single-gpu, multi-gpu (so the single-cpu case is each
/// group's reference). Throws sb::UsageError with one line for unknown workloads, presets,
/// keys, a key given twice with --param, and bad values. `notes` (if given) receives one line
/// per parameter that applies to no planned case. With a scale factor other than 1, every case's
/// parameters are grown by its workload's weak_scale rule (refused, one line, for a workload
/// without one), and `scaling_ids` (if given) receives each case's id at the factor 1.
[[nodiscard]] std::vector<CaseSpec> plan_cases(
    const RunRequest& request, std::vector<std::string>* notes = nullptr,
    std::map<std::string, std::string>* scaling_ids = nullptr);

/// "subset-mean/multi-cpu/chunk=2000,n=20000,seed=42"
[[nodiscard]] std::string case_id(const std::string& workload, ExecPath path, const Params& p);

}  // namespace sb
