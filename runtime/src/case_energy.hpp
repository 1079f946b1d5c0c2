#pragma once
/// @file case_energy.hpp
/// (runtime internals) A case's energy from its workers' telemetry (case_telemetry.hpp): the
/// GPUs' energy counters (NVML) in GPU cases, the nodes' CPU packages (RAPL) in CPU cases; per
/// timed repeat and over the case, with the average power, or why it is unavailable. Work per
/// joule is results/'s (it needs the case's work).

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "case_telemetry.hpp"

namespace sb::detail {

/// The record's "energy" for a case of `repeats` timed repeats; `gpu`: a GPU case.
///  - every GPU counts (each worker reads its own); a node's CPU packages count once (its
///    workers read the same counter: per repeat the median of their readings);
///  - available: {"source": "nvml"|"rapl", "available": true, "devices", "per_repeat_j" (J per
///    timed repeat, summed over the devices; null where a device had no reading),
///    "joules" (their sum), "repeats_measured", "joules_per_repeat", "power_w" (joules over the
///    repeats' wall time), "span": {"joules", "seconds", "t_begin_unix", "t_end_unix",
///    "updates"} (the counters from the first timed reading to the last: what an outside power
///    reading over the same interval must agree with)};
///  - unavailable: {"source", "available": false, "why"};
///  - null when no worker sent telemetry.
[[nodiscard]] nlohmann::json combine_energy(const std::vector<WorkerTelemetry>& workers, bool gpu,
                                            std::size_t repeats);

}  // namespace sb::detail
