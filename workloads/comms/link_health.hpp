#pragma once
/// @file link_health.hpp
/// Naming the bad links of a pair matrix: each link is compared with the other links of its
/// kind (link.hpp) in the same matrix, the way an admin reads p2pBandwidthLatencyTest or
/// nccl-tests across a node's GPUs, so that one slow NVLink among fast ones stands out while
/// PCIe and network links are never held to NVLink speeds.

#include <string>
#include <vector>

#include "comms/link.hpp"

namespace sb::comms {

struct LinkFigure {
  std::string src;  ///< "GPU 3", "node7 GPU 3", "node7", "worker 2"
  std::string dst;
  LinkKind kind = LinkKind::network;
  double bandwidth = 0;  ///< bytes per second
  double latency_s = 0;
};

/// A link is slow when its bandwidth is below this fraction of the median of its peers (the
/// other links of its kind); serial measurements of healthy links of one kind agree far closer.
inline constexpr double kSlowBandwidthFraction = 0.8;
/// ... or when its latency is above this multiple of its peers' median, and by kLatencyMargin.
inline constexpr double kSlowLatencyFactor = 2.0;
inline constexpr double kLatencyMargin = 2e-6;
/// Fewest peers a link is compared with (fewer: no median worth the name).
inline constexpr int kMinPeers = 2;

/// What the comparison with its peers says of one link.
struct LinkHealth {
  bool slow = false;
  int peers = 0;              ///< links of its kind it was compared with
  double peer_bandwidth = 0;  ///< their median, B/s (0: too few peers)
  double peer_latency_s = 0;  ///< their median latency
  std::string reason;         ///< "41.0 GB/s, median of its 55 NVLink peers 370 GB/s", ...
};

/// Each link against the other links of its kind, in the order of `links`.
[[nodiscard]] std::vector<LinkHealth> judge_links(const std::vector<LinkFigure>& links);

/// One note per slow link, in the summary's "WHAT (FIGURE): WHY" form, e.g.
/// "slow link GPU 3 -> GPU 5 (41.0 GB/s): median of its 55 NVLink peers 370 GB/s".
[[nodiscard]] std::vector<std::string> slow_link_notes(const std::vector<LinkFigure>& links);

/// "370 GB/s", "41.0 GB/s", "912 MB/s" (three significant digits).
[[nodiscard]] std::string rate_text(double bytes_per_s);

}  // namespace sb::comms
