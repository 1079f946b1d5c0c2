#pragma once
/// @file participant_plan.hpp
/// How many of a multi-* path's workers a case runs on (Workload::plan_workers): a problem too
/// small for more workers to help runs on the first few, and its record says so.

#include <string>

#include <nlohmann/json.hpp>

#include "scalebench/workload.hpp"

namespace sb::detail {

struct ParticipantPlan {
  int workers = 1;    ///< the first `workers` of the path's workers, in rank order
  int available = 1;  ///< the path's workers
  std::string why;    ///< the workload's reason when workers < available
};

/// The plan for `spec` on `available` workers. All of them on single-* and each-* paths,
/// without a plan_workers, with fewer than the workload's min_workers, or when `automatic` is
/// false (SCALEBENCH_PARTICIPANTS=all); otherwise the workload's count, kept within
/// [max(1, min_workers), available].
[[nodiscard]] ParticipantPlan plan_participants(const Workload& wl, const CaseSpec& spec,
                                                int available, bool automatic);

/// Adds a plan with fewer workers than available to a case record: `workers_available` and
/// `workers_plan` in its metrics, and a note for the summary ("fewer workers (1 of 4 GPUs):
/// WHY"). Does nothing for a plan that uses every worker.
void record_participant_plan(nlohmann::json& rec, const ParticipantPlan& plan, bool gpu);

}  // namespace sb::detail
