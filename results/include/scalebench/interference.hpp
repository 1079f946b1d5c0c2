#pragma once
/// @file interference.hpp
/// How busy the machine was while a case measured, and how much slowdown that explains: the
/// regression gate's verdict policy (docs/ci.md, "Verdicts").
///
/// A case record may carry (written by the runtime; absent in older reports):
///   "interference": {"other_cpu_fraction": f,     share of the node's cores used by other
///                                                 processes while the timed repeats ran (0..1)
///                    "cpu_mhz": {"median": ...},  CPU clock while it ran ("mean" also read)
///                    "cgroup_throttled_s": s,     time the cgroup's CPU quota held it back
///                    "vector_probe_s": s}         the vector units' probe (telemetry_source.hpp),
///                                                 the median repeat's slowest worker's
///
/// Other processes holding a share d of the cores more than in the baseline can slow a case by
/// up to 1/(1 - 2d) - 1: a parallel case waits at every barrier for its slowest thread, so a
/// core it shares costs it about twice that core's share (tests/gate: busy_machine).
/// A throttled share t of the timed wall time explains t/(1 - t); a clock lower by a factor c
/// explains c - 1. A vector probe 10% or more slower says the cores' vector units were shared
/// (a virtual machine's host): a thread sharing them runs up to twice as long, so it explains
/// +100% (or c - 1 for a probe c times slower, if more). The explanation is the largest.

#include <limits>
#include <string>

#include <nlohmann/json.hpp>

namespace sb::results {

/// A vector probe this much slower than another run's (or its peers') says the cores' vector
/// units were shared or slower: 10%, where quiet runs' probes stay within 3% of each other
/// (docs/performance.md, "Node acceptance": one vector reading).
inline constexpr double kSlowVectorProbe = 0.10;

/// The interference record of one case, read leniently (missing members are NaN).
struct Interference {
  bool recorded = false;  ///< the case carried an "interference" object
  double other_cpu_fraction = std::numeric_limits<double>::quiet_NaN();
  double cpu_mhz = std::numeric_limits<double>::quiet_NaN();
  double throttled_share = std::numeric_limits<double>::quiet_NaN();  ///< of the timed wall time
  double vector_probe_s = std::numeric_limits<double>::quiet_NaN();
};

/// Reads case["interference"]; `timed_s` is the sum of the timed repeats (for the throttled
/// share).
[[nodiscard]] Interference read_interference(const nlohmann::json& case_record, double timed_s);

/// How much busier the machine was in one run than in the other.
struct Busier {
  bool busy = false;      ///< enough to matter: +5% of the cores, +2% throttled, -5% clock, or a
                          ///< vector probe 10% slower
  double explains = 0.0;  ///< the relative slowdown it can explain (0.4 = +40%)
  std::string reason;     ///< "40% of the cores taken by other processes", ...
};

/// How much busier `run` was than `reference` (both of the same case). Not busy when `run`
/// has no record.
[[nodiscard]] Busier busier_than(const Interference& run, const Interference& reference);

/// Other processes' share of the cores from which the two sides of an A/B run, measured turn
/// by turn, no longer tell a change from chance: a side's fastest repeats are then those that
/// happened to meet a quiet moment, and the two sides meet them unevenly.
inline constexpr double kAbBusyShare = 0.25;

/// How busy the sides of an A/B case were (`baseline`, `current`: their records): busy when
/// other processes took at least kAbBusyShare of the cores in either side's turns, explaining
/// up to 1 / (1 - 2H) - 1 (2H capped at 0.9) for the greater share H, on either side by chance.
/// One side's turns busier than the other's is chance, but chance is what the change may then
/// be: a CI runner's A/A gate met 41% in the current side's turns and under a quarter in the
/// baseline's, and the fastest thirds differed by +236%.
[[nodiscard]] Busier busy_in_either(const Interference& baseline, const Interference& current);

}  // namespace sb::results
