#pragma once
/// @file identity.hpp
/// Who a GPU worker is for the pair matrix and the sweep's link ceiling: its host and its GPU's
/// number as nvidia-smi prints it (NVML's index; the CUDA ordinal where NVML is missing).

#include "comms/link.hpp"
#include "scalebench/workload.hpp"

namespace sb::comms::gpu {

[[nodiscard]] Identity identity(const CaseEnv& env);

/// The nominal rate of this worker's slowest link to the case's other workers when every one
/// is an NVLink of this node (NV<n> x nvlink_rate_per_link), else 0; and that link's NVLink
/// count (0 when not NVLink).
struct LinkCeiling {
  double bytes_per_s = 0;
  int nvlinks = 0;
};
[[nodiscard]] LinkCeiling link_ceiling(const CaseEnv& env, const std::vector<Link>& links);

}  // namespace sb::comms::gpu
