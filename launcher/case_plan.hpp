#pragma once
/// @file case_plan.hpp
/// Turns what the user asked for (preset, workloads, paths, --param overrides, a suite file)
/// into the ordered list of cases of a run. Pure: tested without MPI.

#include <string>
#include <vector>

#include "scalebench/workload.hpp"

namespace sb {

/// One group of cases: a workload with its paths and parameter overrides.
struct CaseRequest {
  std::string workload;
  std::string preset;               ///< empty: the run's preset
  std::vector<ExecPath> paths;      ///< empty: the run's paths
  std::vector<std::string> params;  ///< "key=value" (workload-local) or "workload.key=value"
};

struct RunRequest {
  std::string preset = "small";
  std::vector<std::string> workloads;  ///< empty: all
  std::vector<ExecPath> paths;         ///< empty: all four
  std::vector<std::string> params;     ///< --param workload.key=value
  int repeats = 5;
  int warmup = 1;
  std::vector<CaseRequest> cases;  ///< from a suite file; when non-empty, replaces workloads
};

/// Presets every workload knows.
[[nodiscard]] const std::vector<std::string>& preset_names();

/// Parses a comma-separated path list (canonical names or aliases). Throws sb::UsageError.
[[nodiscard]] std::vector<ExecPath> parse_paths(const std::string& list);

/// The cases, in order: per workload (suite order), per variant, paths single-cpu, multi-cpu,
/// single-gpu, multi-gpu (so the single-cpu case is each group's reference). Throws
/// sb::UsageError with one line for unknown workloads/presets/keys and bad values.
[[nodiscard]] std::vector<CaseSpec> plan_cases(const RunRequest& request);

/// "subset-mean/multi-cpu/chunk=2000,n=20000,seed=42"
[[nodiscard]] std::string case_id(const std::string& workload, ExecPath path, const Params& p);

}  // namespace sb
