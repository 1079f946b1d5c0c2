#pragma once
/// @file worker_plan.hpp
/// How many workers a multi-* groupby case uses (Workload::plan_workers).

#include "groupby/config.hpp"
#include "scalebench/exec_path.hpp"
#include "scalebench/workload.hpp"

namespace sb::groupby {

/// A reduction query (by-name, by-id) uses no more workers than it has tasks: a worker without
/// one would only wait for the combine. On GPUs a case runs on one GPU unless `available`
/// GPUs save at least 10% by a cost model (docs/workloads.md, "Fewer workers for small
/// problems"; its constants from `tools/gpu-campaign.sh sizes` on H100): the rows' time on one GPU
/// (per row: by-name 0.31 ns, by-id 0.47, by-key 0.38) split over the GPUs, plus the combine
/// between them (by-name, by-id 0.1 ms; by-key's exchange of rows 0.3 ms).
[[nodiscard]] WorkerPlan plan_workers(const Config& c, Device device, int available);

}  // namespace sb::groupby
