#pragma once
/// @file repeat_telemetry.hpp
/// One worker's readings of one timed repeat, summarized: min / median / max of every signal,
/// the differences of the cumulative counters, and whether the repeat ran throttled (the rule
/// of docs/report-schema.md, "Telemetry"). Workers summarize (telemetry_recorder.hpp); the
/// scheduler combines the summaries of a case's workers into its record.

#include <cstdint>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "scalebench/telemetry_source.hpp"

namespace sb {

struct SignalStats {
  double min = kNoReading;
  double median = kNoReading;
  double max = kNoReading;
};

struct RepeatTelemetry {
  int repeat = 0;   ///< timed repeat, 0-based
  int samples = 0;  ///< readings taken during it (one at its begin and one at its end at least)
  double t_begin = kNoReading;  ///< first reading, s since the case's first timed repeat began
  double t_end = kNoReading;    ///< last reading, same origin
  // Differences between the first and the last reading.
  double wall_s = kNoReading;
  double node_busy_s = kNoReading;
  double steal_s = kNoReading;
  double node_irq_s = kNoReading;
  double own_cpu_s = kNoReading;
  double cgroup_throttled_s = kNoReading;
  double gpu_ecc_corrected = kNoReading;
  double gpu_ecc_uncorrected = kNoReading;
  double gpu_xid = kNoReading;
  double gpu_nvlink_errors = kNoReading;
  double cpu_energy_j = kNoReading;  ///< the node's CPU packages (RAPL), J
  double gpu_energy_j = kNoReading;  ///< the GPU (NVML), J
  /// The fastest of the repeat's vector probes, s: a preempted probe only reads longer.
  double vector_probe_s = kNoReading;
  // Levels.
  SignalStats cpu_mhz;
  SignalStats gpu_sm_mhz;  ///< over the readings where the GPU was not idle, when there are any
  SignalStats gpu_mem_mhz;
  SignalStats gpu_power_w;
  SignalStats gpu_temp_c;
  double gpu_power_limit_w = kNoReading;  ///< median
  double gpu_app_sm_mhz = kNoReading;
  double gpu_retired_pages = kNoReading;  ///< at the last reading
  double gpu_last_xid = kNoReading;
  double gpu_util_pct = kNoReading;  ///< median
  double gpu_others = kNoReading;    ///< the most other processes any reading listed
  SignalStats gpu_others_sm_pct;     ///< their summed SM utilization, percent
  bool gpu_reasons_known = false;
  std::uint64_t gpu_reasons = 0;  ///< clock-event reasons active in any reading (OR)
};

/// The summary of one repeat's readings (in time order; NaN signals are skipped). `origin`:
/// sb::now() time of the case's first timed repeat on this worker.
[[nodiscard]] RepeatTelemetry summarize_repeat(std::span<const TelemetrySample> samples, int repeat,
                                               double origin);

/// SM clock below this share of the application clock makes a repeat throttled.
inline constexpr double kThrottledClockShare = 0.9;

struct Throttle {
  bool throttled = false;
  std::string reason;  ///< "power cap", "SM clock 1410 MHz, 71% of 1980", ...; "" when not
};
/// Throttled: a power, thermal or hardware-slowdown reason was active in a reading, or the
/// median SM clock (readings where the GPU was busy) was more than 10% under the application
/// clock. A repeat without GPU readings is never throttled.
[[nodiscard]] Throttle throttle_of(const RepeatTelemetry& r);

/// "power cap, hardware thermal slowdown" for the throttling bits of `reasons`; "" for none.
[[nodiscard]] std::string throttle_reason_names(std::uint64_t reasons);

/// Flat JSON (NaN as null) and back; `from_json` reads leniently (missing members stay NaN).
[[nodiscard]] nlohmann::json to_json(const RepeatTelemetry& r);
[[nodiscard]] RepeatTelemetry repeat_telemetry_from_json(const nlohmann::json& j);

}  // namespace sb
