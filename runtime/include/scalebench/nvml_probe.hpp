#pragma once
/// @file nvml_probe.hpp
/// GPU descriptions through NVML, loaded at run time (dlopen "libnvidia-ml.so.1"), so the same
/// binary runs on machines without an NVIDIA driver. Plain C++: usable from every build.

#include <string>

#include <nlohmann/json.hpp>

namespace sb {

/// One entry per GPU that NVML sees (NVML order, which ignores CUDA_VISIBLE_DEVICES; match
/// GPUs by `pci_bus_id` or `uuid`):
///   {index, name, uuid, memory_bytes, sm_clock_max_mhz, mem_clock_max_mhz, driver, pci_bus_id,
///    power_limit_w, nvlink: [{link, active, remote_pci_bus_id}, ...]}
/// Fields NVML cannot give are left out. An empty array, never an exception, when NVML or the
/// driver is missing.
[[nodiscard]] nlohmann::json probe_gpus_nvml();

/// The GPU-to-GPU connection matrix as `nvidia-smi topo -m` prints it: for each pair NV<n>
/// (n NVLinks), PIX, PXB, PHB, NODE or SYS, and X on the diagonal. Empty when NVML is missing.
[[nodiscard]] std::string nvml_topology_matrix();

}  // namespace sb
