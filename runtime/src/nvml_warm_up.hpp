#pragma once
/// @file nvml_warm_up.hpp
/// (runtime internals) NVML initialized ahead of the GPU description.

#include <memory>
#include <thread>

#include "nvml_library.hpp"

namespace sb::detail {

/// Loads and initializes NVML on a thread of its own and keeps it initialized while this
/// lives. A GPU worker starts one before MPI_Init, beside its CUDA context, so that the GPU
/// description's and the telemetry's own NvmlLibrary find NVML up (nvmlInit of an initialized
/// NVML only counts up): /system/startup `describe_gpu_s`. Never throws; without NVML or a
/// thread it does nothing.
class NvmlWarmUp {
 public:
  NvmlWarmUp() noexcept;
  ~NvmlWarmUp();
  NvmlWarmUp(const NvmlWarmUp&) = delete;
  NvmlWarmUp& operator=(const NvmlWarmUp&) = delete;

 private:
  std::unique_ptr<NvmlLibrary> lib_;
  std::thread thread_;
};

}  // namespace sb::detail
