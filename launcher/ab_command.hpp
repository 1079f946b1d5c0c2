#pragma once
/// @file ab_command.hpp
/// `scalebench run --baseline ...`: an A/B run (docs/ci.md, "The A/B gate"). The run's
/// options plan the cases; ab_sides.hpp resolves both sides before any job starts; the jobs run
/// side by side (ab_runner.hpp); the report holds the current side as its cases and the
/// baseline side, the sides' descriptions and the turns under /ab; the run ends with the gate's
/// comparison of the two sides and its exit code (compare.hpp).

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "ab_request.hpp"
#include "ab_runner.hpp"
#include "ab_sides.hpp"
#include "case_plan.hpp"
#include "job_runner.hpp"
#include "progress.hpp"
#include "run_report.hpp"

namespace sb {

/// Everything an A/B run needs, checked.
struct AbPlan {
  std::array<AbSide, 2> sides;
  std::array<std::vector<CaseSpec>, 2> cases;  ///< with each side's param: overrides
  int block = 0;
  std::uint64_t seed = 0;
  results::CompareOptions compare;
};

/// Checks the A/B request of `req` against the planned `cases` and resolves the sides (probes
/// their rank programs). `rank_exe`: this build's scalebench-rank. `target_spread_given`:
/// --target-spread or the suite's target_spread (an A/B run stops on its decision instead).
/// Throws sb::UsageError (exit 2) with one line.
[[nodiscard]] AbPlan plan_ab(const RunRequest& req, const std::vector<CaseSpec>& cases,
                             const std::string& rank_exe, bool target_spread_given);

/// `run --list` of an A/B run: the sides, after the cases.
void print_ab_plan(const AbPlan& plan);

/// Runs it: both sides' records go to `report` (the current side's as its cases, the
/// baseline's under /ab) and their progress to `progress`; writes the report after each
/// record. Returns the run's result (jobs, stop signal) and prints nothing.
[[nodiscard]] AbRunResult run_ab(const AbPlan& plan, const RunRequest& req,
                                 const JobRunnerOptions& jo, RunReport& report, Progress& progress,
                                 const std::function<void()>& write);

/// The gate's comparison of the report's two sides, printed (table, to stdout's width); its
/// exit code (0, 1, 4, 5).
[[nodiscard]] int print_ab_outcome(const nlohmann::json& model, const AbPlan& plan, bool wide);

}  // namespace sb
