#pragma once
/// @file case_telemetry.hpp
/// (runtime internals) The scheduler's side of telemetry: the summaries each worker of a case
/// sent after its timed repeats (telemetry_recorder.hpp), combined into the case record's
/// per-repeat `throttled` flags, its `telemetry` (per repeat and worker, and a time series) and
/// its `interference` (the layout results/include/scalebench/interference.hpp reads).

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sb::detail {

/// One worker's telemetry of a case, as the scheduler received it.
struct WorkerTelemetry {
  int case_rank = 0;
  std::string host;
  int gpu = -1;         ///< the node's GPU ordinal, -1 for a CPU worker
  nlohmann::json data;  ///< TelemetryRecorder::finish_case() plus "cpus"
};

/// The scheduler's own CPU time during each timed repeat: it shares its node with workers and
/// counts as the job's, not as another process's.
struct SchedulerCpu {
  std::string host;
  std::vector<double> own_cpu_s;  ///< per timed repeat
};

struct CaseTelemetry {
  std::vector<bool> throttled;       ///< per timed repeat: any worker throttled in it
  std::vector<std::string> reasons;  ///< per timed repeat: why ("" when not throttled)
  nlohmann::json telemetry;          ///< the record's "telemetry" (null without readings)
  nlohmann::json interference;       ///< the record's "interference" (null without readings)
  /// The record's "energy" for a GPU case and for a CPU case (case_energy.hpp); add_telemetry
  /// keeps the one of the record's device.
  nlohmann::json energy_gpu, energy_cpu;
};

/// Readings of the time series one worker keeps, for a case of `workers` workers: a case's
/// series stays under about 4096 readings whatever its size (32 to 512 per worker).
[[nodiscard]] int series_points(int workers);

/// Combines the workers' telemetry of a case with `repeats` timed repeats.
///  - a repeat is throttled when any worker's readings in it are (repeat_telemetry.hpp);
///  - interference per node: the node's busy CPU time (median over its workers' readings)
///    minus the CPU time of the job's own ranks on it (its workers, and the scheduler on its
///    node), over the repeats' wall time times the node's CPUs; the case's figure is its
///    busiest node's. Steal time counts as other processes'. The CPU clock is min / median /
///    max over every worker and repeat; cgroup_throttled_s is the most any node was held back;
///  - the GPUs' other compute processes join the interference (case_gpu_processes.hpp), and the
///    energy is combined for either kind of case (case_energy.hpp).
[[nodiscard]] CaseTelemetry combine_telemetry(const std::vector<WorkerTelemetry>& workers,
                                              const SchedulerCpu& scheduler, std::size_t repeats);

/// Puts `t` into the case record: repeats[i].throttled (and throttle_reason where throttled),
/// "telemetry" and "interference" when there were readings, and "energy" (the record's
/// `device` picks the GPUs' or the CPUs').
void add_telemetry(nlohmann::json& rec, const CaseTelemetry& t);

}  // namespace sb::detail
