#pragma once
/// @file gpu_health.hpp
/// (runtime internals) A GPU's health fields beyond its error counters, as DCGM's deployment and
/// PCIe/NVLink checks look at them: row remapping, the PCIe link against its maximum, NVLink
/// link states and error counters, persistence and compute mode, ECC mode, application clocks,
/// the power limit, the InfoROM, driver, VBIOS and NUMA node. nvml_health.cpp reads them
/// (read_gpu_health); health_rows turns them into the rows of /system/gpu_health, every field
/// present for every GPU, its value or "unavailable" with NVML's reason. Judging them (against
/// the device's maximum, its peers and the fleet) is results/'s: verdicts.hpp.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sb::detail {

/// A value NVML gave, or why it did not ("NVML: Not Supported").
template <class T>
struct Reading {
  std::optional<T> value;
  std::string why = "not read";
  void set(T v) {
    value = std::move(v);
    why.clear();
  }
  void fail(std::string reason) {
    value.reset();
    why = std::move(reason);
  }
};

struct NvlinkErrors {
  double crc = 0;       ///< CRC flit and data errors (NVLink5: effective errors)
  double replay = 0;    ///< replays
  double recovery = 0;  ///< recoveries (NVLink5: recovery events)
};

struct GpuHealthRaw {
  Reading<unsigned> pcie_gen, pcie_width;  ///< the current link
  bool pcie_under_load = false;            ///< read while a host copy ran (idle links slow down)
  Reading<unsigned> pcie_gen_max;          ///< the most the GPU and its slot allow
  Reading<unsigned> pcie_gen_gpu_max;      ///< the GPU's own maximum
  Reading<unsigned> pcie_width_max;
  Reading<unsigned> remapped_correctable, remapped_uncorrectable;
  Reading<bool> remap_pending, remap_failed;
  /// Per NVLink (0..17) that NVML knows: true up, false down. Empty with `nvlink_why` set when
  /// NVML reports none (a GPU without NVLink, a VM that hides them).
  std::vector<std::pair<unsigned, bool>> nvlinks;
  std::string nvlink_why = "not read";
  Reading<NvlinkErrors> nvlink_errors;
  Reading<bool> persistence;
  Reading<int> compute_mode;  ///< nvmlComputeMode_t
  Reading<bool> ecc_current, ecc_pending;
  Reading<unsigned> app_sm_mhz, app_sm_default_mhz, app_mem_mhz, app_mem_default_mhz;
  Reading<double> power_limit_w, power_default_w;
  Reading<bool> inforom_valid;
  Reading<std::string> driver, vbios;
  Reading<int> numa_node;  ///< -1: the platform has no NUMA affinity for it
};

/// The fields of /system/gpu_health, in this order, for every GPU.
[[nodiscard]] const std::vector<std::string>& health_field_names();

/// One row per field of health_field_names():
///   {"field", "value" (text for people, "unavailable" when NVML did not give it), "number"
///    (the judged figure, null when none), "expected" (what it should be: the maximum, the
///    default, null when none), "detail" (NVML's reason when unavailable, else what the numbers
///    are)}.
[[nodiscard]] nlohmann::json health_rows(const GpuHealthRaw& h);

}  // namespace sb::detail
