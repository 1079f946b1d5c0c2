#pragma once
/// @file verdicts.hpp
/// Node acceptance: is every device as fast as it should be, and if not, which one and why
/// (docs/acceptance.md). One verdict per device and case, from two references, both used:
///  - its peers: the same case on the other devices of the same model in the run. With three
///    peers or more, slow means slower than their median by more than the larger of 3.5 robust
///    standard deviations (1.4826 MAD) and 5%; with two, slower than the median of the three
///    devices (itself included) by more than 10%; with one, slower than it by more than 10%;
///  - a reference file (references.hpp): slower than its median_s by more than its tolerance.
/// Then, the cause first:
///  - `failed`: the case failed, timed out or did not run on the device, or the device
///    reported uncorrected ECC errors or XID errors while it ran;
///  - `unhealthy`: NVLink errors (CRC, replay, recovery) grew while it ran;
///  - `busy`: another process computed on its GPU while it ran (named: pid, name, user, memory,
///    SM share), and the device was slow or the others took 10% of its SMs or more
///    (acceptance_evidence.hpp); throttle reasons then count as that process's doing;
///  - `throttled`: slow, and the device ran throttled (power, thermal or hardware slowdown
///    reasons, an SM clock under 90% of its application clock, or the cgroup's CPU quota held
///    it back); or it slowed down for thermal or hardware reasons, slow or not;
///  - `slow`: slow otherwise;
///  - `inefficient`: not slow, but it needed 15% more energy per repeat than its peers' median
///    for the same work (compared over 1 s of timed repeats or more);
///  - `not judged`: nothing to compare it with (no peer, no reference);
///  - `ok`: otherwise.
/// Then one row per GPU and direction of its host link (host_link_verdicts.hpp) and one per GPU
/// of its health fields (health_verdicts.hpp: `unhealthy`, `ok` or `not judged`), from
/// /system/host_links and /system/gpu_health. Pure: tested on synthetic fleets; the rows are
/// data (no formatting), merged across reports by fleet-wide judging.

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalebench/references.hpp"

namespace sb::results {

/// Peers needed for the robust (median / MAD) rule; fewer use kSmallFleetThreshold.
inline constexpr std::size_t kRobustPeers = 3;
inline constexpr double kRobustZ = 3.5;               ///< MAD-based standard deviations
inline constexpr double kRelativeFloor = 0.05;        ///< never slow within 5% of the peers
inline constexpr double kSmallFleetThreshold = 0.10;  ///< one or two peers
/// The verdict of a row that compared the device with nothing (no peer, no reference).
inline constexpr const char* kNotJudged = "not judged";
/// `run --check`'s exit code when no verdict is not ok but a device was not judged at all (the
/// code `compare` gives an inconclusive comparison): such a run judged nothing of that device.
inline constexpr int kExitNotJudged = 5;

/// One row per device record of the model (single-gpu, each-gpu and each-node cases), in case
/// order: {"host", "device" (GPU ordinal; -1 for a node), "case" (the planned case's id),
/// "verdict" (above), "value" (its median time, s), "expected" (s: the
/// peers' median, else the reference's), "reason" (one line), "model", "path", "workload",
/// "record" (the record's id), "peers" (how many), "reference_s" (NaN when none),
/// "throttled_repeats", "link" (empty), "unit" ("s")}; then the host-link rows ("case"
/// "link/host-to-device", "unit" "B/s") and the health rows ("case" "health", "unit" ""), and
/// one row per link of every pair
/// matrix (comms, op=pairs), judged against the other links of its kind: "device" its source
/// GPU (-1: a CPU worker), "link" ("GPU 3 -> GPU 5"), "value" and "expected" in B/s ("unit"
/// "B/s"), "model" the link's kind (NVLink, PCIe, ...), verdict ok or slow.
[[nodiscard]] nlohmann::json judge_devices(const nlohmann::json& model,
                                           const ReferenceSet& references);

/// The model's verdicts: its "verdicts" member (stored by `scalebench run`), else
/// judge_devices with no reference file.
[[nodiscard]] nlohmann::json verdicts_of(const nlohmann::json& model);

/// Whether a verdict row is a link's (else a device's).
[[nodiscard]] bool is_link_verdict(const nlohmann::json& v);
/// A row's `value` or `expected` for people: "24.1 ms", "41.0 GB/s" for a link, "2 findings".
[[nodiscard]] std::string verdict_value_text(const nlohmann::json& v, const char* key);
/// "GPU 2", "node", or "link GPU 3 -> GPU 5".
[[nodiscard]] std::string verdict_device_text(const nlohmann::json& v);

/// Whether a verdict fails acceptance: anything but ok and not judged.
[[nodiscard]] bool verdict_not_ok(const std::string& verdict);
/// Rows of `verdicts` whose verdict fails acceptance (verdict_not_ok).
[[nodiscard]] std::size_t count_not_ok(const nlohmann::json& verdicts);
/// Devices (host, GPU ordinal or -1) whose every workload row is `not judged`: nothing in the
/// run judged their speed (health and host-link rows do not count).
[[nodiscard]] std::vector<std::pair<std::string, long long>> unjudged_devices(
    const nlohmann::json& verdicts);

/// The verdicts for a terminal: "all N devices ok (K cases)" when so; otherwise one line per
/// device that is not ok ("slow  GPU 2 on node7  subset-mean/each-gpu/...  24.1 ms, expected
/// 21.1 ms: REASON") and a tally; a device nothing judged gets a `not judged` entry, and the
/// first line says "N of M devices ok, K not judged" instead of "all ... ok".
[[nodiscard]] std::string format_verdicts_text(const nlohmann::json& verdicts);

}  // namespace sb::results
