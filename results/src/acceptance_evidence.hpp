#pragma once
/// @file acceptance_evidence.hpp
/// (private) What a device record's telemetry says beyond its clocks (verdicts.hpp): the other
/// compute processes that shared its GPU while it ran (the record's interference/gpu_processes)
/// and the energy it took (the record's `energy`). Data, judged by the verdicts.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "summary_util.hpp"

namespace sb::results::detail {

/// Other processes at this share of the GPU's SMs or more make a device busy even when it was
/// not found slow: its figures measured a shared GPU (NVML samples per process utilization).
inline constexpr double kBusySmPercent = 10.0;
/// A device that needs this much more energy than its peers for the same work is flagged.
inline constexpr double kEnergyExcess = 0.15;
/// Energy is compared only over timed repeats this long and with this many counter updates:
/// an energy counter updates every few to 100 ms.
inline constexpr double kEnergyMinSeconds = 1.0;
inline constexpr int kEnergyMinUpdates = 5;

struct Sharing {
  /// The other processes seen during the timed repeats, for people: "python3 (pid 441, root,
  /// 2.1 GiB, 98% SM)".
  std::vector<std::string> during;
  std::vector<std::string> before_only;  ///< seen as the case began, gone when it ran
  double sm_percent = kNaN;              ///< their SM utilization (interference/gpu_others_sm_pct)
  std::string unavailable;               ///< why the processes could not be listed
  std::string note;                      ///< NVML's pids could not be told from the job's
  [[nodiscard]] bool present() const { return !during.empty() && note.empty(); }
  /// Busy: another process computed on the GPU while the device ran and either the device was
  /// slow, or the others took kBusySmPercent of its SMs or more.
  [[nodiscard]] bool busy(bool slow) const {
    return present() && (slow || (std::isfinite(sm_percent) && sm_percent >= kBusySmPercent));
  }
};
[[nodiscard]] Sharing sharing_of(const json& record);
/// "shared with python3 (pid 441, ...) while it ran, others using 97% of its SMs" ("" when
/// nothing to say).
[[nodiscard]] std::string sharing_text(const Sharing& s);

struct Energy {
  bool available = false;
  std::string why;             ///< when not available
  double per_repeat_j = kNaN;  ///< joules per timed repeat (summed over the record's devices)
  double power_w = kNaN;       ///< over the repeats' wall time
  double seconds = kNaN;       ///< the span the counters covered
  bool comparable = false;     ///< long enough, with enough counter updates, to compare
  std::string source;          ///< "nvml", "rapl"
};
[[nodiscard]] Energy energy_of(const json& record);
/// "17.1 J per repeat at 690 W" ("" when unavailable).
[[nodiscard]] std::string energy_text(const Energy& e);

}  // namespace sb::results::detail
