#pragma once
/// @file gpu_runtime.hpp
/// Host-visible entry points of the GPU side of the runtime. In a build without CUDA they exist
/// too (gpu_runtime_unavailable.cpp): cuda_built() is false and visible GPUs are 0, so GPU paths
/// are recorded as skipped.

#include <mpi.h>

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

namespace sb {

struct GpuContext;

/// True when this binary was compiled with the CUDA paths.
[[nodiscard]] bool cuda_built() noexcept;

/// GPUs this process may use (respects CUDA_VISIBLE_DEVICES); 0 without CUDA or a driver.
/// Never throws; `why` (if given) receives the reason when 0.
[[nodiscard]] int visible_gpu_count(std::string* why = nullptr) noexcept;

struct GpuContextDeleter {
  void operator()(GpuContext* ctx) const noexcept;
};
using GpuContextPtr = std::unique_ptr<GpuContext, GpuContextDeleter>;

/// Timings of GPU start-up on one worker, reported apart from cases.
struct GpuStartup {
  double cuda_init_s = 0;  ///< cudaSetDevice + context creation + handles
  double nccl_init_s = 0;  ///< ncclCommInitRank over the GPU workers
};

/// Binds this worker to GPU `device` (an ordinal among the visible ones), creates its stream
/// and, when `gpu_workers` has more than one rank, a NCCL communicator over `gpu_workers`
/// (unique id made by its rank 0 and broadcast over MPI). Collective over gpu_workers.
[[nodiscard]] GpuContextPtr create_gpu_context(int device, MPI_Comm gpu_workers,
                                               GpuStartup* timing);

/// Description of this worker's GPU for /system: name, uuid, memory, SMs, clocks, driver, ...
[[nodiscard]] nlohmann::json describe_gpu(const GpuContext& ctx);

/// Library versions known to the GPU side (CUDA runtime and driver, NCCL, cuSOLVER, cuBLAS).
[[nodiscard]] nlohmann::json gpu_library_versions();

}  // namespace sb

namespace sb {

/// SPEC section 11 ceilings of this worker's GPU, measured in well under a second: a large
/// device-to-device copy (bytes read + written per second) and a cuBLAS fp64 GEMM rate.
/// Returns ceiling entries {scope "gpu", kind "copy_bandwidth"|"fp64_gemm", value, unit, ...};
/// empty without CUDA.
[[nodiscard]] nlohmann::json measure_gpu_ceilings(GpuContext& ctx);

}  // namespace sb

namespace sb {

/// Free and total memory of a worker's GPU, in bytes (cudaMemGetInfo on its device), and the
/// device's ordinal. In a build without CUDA: all zero.
struct GpuMemoryInfo {
  int device = -1;
  double free_bytes = 0;
  double total_bytes = 0;
};
[[nodiscard]] GpuMemoryInfo gpu_memory_info(const GpuContext& ctx);

}  // namespace sb
