#pragma once
/// @file nvml_processes.hpp
/// (runtime internals) The compute processes on one GPU through NVML (nvml_library.hpp): pid and
/// memory (nvmlDeviceGetComputeRunningProcesses, MPS clients too), each one's SM utilization
/// (nvmlDeviceGetProcessUtilization) and the GPU's (nvmlDeviceGetUtilizationRates), named from
/// /proc (else NVML). A telemetry source of them is make_gpu_process_telemetry
/// (telemetry_source.hpp).

#include "gpu_process_census.hpp"
#include "nvml_library.hpp"

namespace sb::detail {

/// One reading of `d`'s processes. `newest_us`: the newest utilization sample's time stamp seen
/// so far (0 at first), updated; a process's utilization is its latest sample of the last
/// second and a half of samples. `ab_mark`: an A/B run's mark (JobPlan::ab_run), which marks
/// the other side's ranks (GpuProcess::other_side); empty otherwise. Never throws.
[[nodiscard]] ProcessSnapshot read_process_snapshot(const NvmlLibrary& nvml, nvmlDevice_t d,
                                                    unsigned long long& newest_us,
                                                    const std::string& ab_mark = {}) noexcept;

/// "python3 (pid 441, root, 2.1 GiB, 98% SM)": one process for people.
[[nodiscard]] std::string describe_process(const GpuProcess& p);

}  // namespace sb::detail
