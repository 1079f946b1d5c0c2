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

/// The probe_gpus_nvml entry of the one GPU at PCI bus id `pci_bus_id` ("0000:19:00.0", any
/// case), opening that GPU alone (NVML attaches GPUs lazily, per handle): what a worker needs
/// to describe its own GPU without every worker of a node attaching every GPU of it. An empty
/// object when NVML, the driver or that GPU is missing.
[[nodiscard]] nlohmann::json probe_gpu_nvml(const std::string& pci_bus_id);

/// The NVIDIA driver's version string ("580.95.05"); empty without NVML. Opens no GPU.
[[nodiscard]] std::string nvml_driver_version();

/// The GPU-to-GPU connection matrix as `nvidia-smi topo -m` prints it: for each pair NV<n>
/// (n NVLinks), PIX, PXB, PHB, NODE or SYS, and X on the diagonal. Empty when NVML is missing.
[[nodiscard]] std::string nvml_topology_matrix();

}  // namespace sb
