#pragma once
/// @file nvml_health.hpp
/// (runtime internals) A GPU's health fields read through NVML (gpu_health.hpp): every entry
/// point resolved at run time (nvml_library.hpp); a field the driver, the GPU or a virtual
/// machine does not expose keeps NVML's reason and becomes "unavailable", never ok.

#include <optional>
#include <string>
#include <vector>

#include "gpu_health.hpp"
#include "nvml_library.hpp"

namespace sb::detail {

/// Every field of `d` except the current PCIe link, which read_pcie_link reads (under load).
[[nodiscard]] GpuHealthRaw read_gpu_health(const NvmlLibrary& nvml, nvmlDevice_t d) noexcept;

/// The current PCIe generation and width into `h` (`under_load`: a copy to or from the host is
/// running).
void read_pcie_link(const NvmlLibrary& nvml, nvmlDevice_t d, bool under_load,
                    GpuHealthRaw& h) noexcept;

/// The NVLink error counters summed over `links` (CRC flit and data, replay, recovery; NVLink5's
/// effective errors and recovery events where the older counters are gone); nullopt with `why`
/// when NVML gives none of them.
[[nodiscard]] std::optional<NvlinkErrors> read_nvlink_errors(const NvmlLibrary& nvml,
                                                             nvmlDevice_t d,
                                                             const std::vector<unsigned>& links,
                                                             std::string& why) noexcept;

}  // namespace sb::detail
