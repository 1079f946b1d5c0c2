#pragma once
/// @file case_gpu_processes.hpp
/// (runtime internals) The other compute processes a case's GPU workers saw on their GPUs
/// (gpu_process_census.hpp), combined for the case record's "interference".

#include <vector>

#include <nlohmann/json.hpp>

#include "case_telemetry.hpp"

namespace sb::detail {

/// The other compute processes the case's GPU workers saw (gpu_process_census.hpp), for the
/// record's "interference": {"gpu_processes": [{"host", "gpu", "pid", "name", "user", "command",
/// "memory_bytes", "sm_util_max", "sm_util_median", "seen_before", "readings",
/// "of_readings"}...], "gpu_other_processes" (the most any reading listed), "gpu_others_sm_pct"
/// (their SM utilization: per repeat the largest of the workers' medians, then the median over
/// the repeats; null when never sampled), "gpu_processes_unavailable" (why, when a worker could
/// not list them), "gpu_processes_note"}; an empty object in CPU cases.
[[nodiscard]] nlohmann::json combine_gpu_processes(const std::vector<WorkerTelemetry>& workers,
                                                   std::size_t repeats);

}  // namespace sb::detail
