#pragma once
/// @file gpu_runtime.hpp
/// Host-visible entry points of the GPU side of the runtime. In a build without CUDA they exist
/// too (gpu_runtime_unavailable.cpp): cuda_built() is false and visible GPUs are 0, so GPU paths
/// are recorded as skipped.

#include <mpi.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

namespace sb {

struct GpuContext;

/// True when this binary was compiled with the CUDA paths.
[[nodiscard]] bool cuda_built() noexcept;

/// GPUs this process may use (respects CUDA_VISIBLE_DEVICES); 0 without CUDA or a driver.
/// Never throws; `why` (if given) receives the reason when 0, in words a user can act on.
[[nodiscard]] int visible_gpu_count(std::string* why = nullptr) noexcept;

/// Why CUDA found no GPU, for people: `no_driver` when CUDA reported an insufficient driver or
/// none, `no_device` when the driver sees no device; `cuda_text` is CUDA's own message. Looks at
/// /proc/driver/nvidia/version to tell "no NVIDIA driver on this machine" from "the driver is
/// older than this CUDA runtime needs".
enum class NoGpu { no_driver, no_device, other };
[[nodiscard]] std::string explain_no_gpu(
    NoGpu kind, const std::string& cuda_text,
    const std::string& driver_version_file = "/proc/driver/nvidia/version");

struct GpuContextDeleter {
  void operator()(GpuContext* ctx) const noexcept;
};
using GpuContextPtr = std::unique_ptr<GpuContext, GpuContextDeleter>;

/// Timings of GPU start-up on one worker, reported apart from cases. A phase that ran on a
/// thread of its own while the worker did something else has a `_wait_s` smaller than its
/// `_init_s`: the part the worker's main thread still waited for.
struct GpuStartup {
  double cuda_init_s = 0;        ///< cudaSetDevice + context creation + properties + stream
  double nccl_init_s = 0;        ///< ncclCommInitRank over the GPU workers + one warm-up all-reduce
  double cuda_wait_s = 0;        ///< the main thread's wait for the context and the libraries
  double nccl_wait_s = 0;        ///< of nccl_init_s, the time the main thread waited for
  double gpu_libraries_s = 0;    ///< loading cuBLAS and cuSOLVER, beside the context if early
  bool cuda_early = false;       ///< the context came from start_gpu_context_early
  bool nccl_overlapped = false;  ///< the caller measured the ceilings while NCCL came up
};

/// Binds this worker to GPU `device` (an ordinal among the visible ones), creates its stream
/// and, when `gpu_workers` has more than one rank, a NCCL communicator over `gpu_workers`
/// (unique id made by its rank 0 and broadcast over MPI). Collective over gpu_workers. One
/// step after the other; the runtime overlaps them instead with the functions below.
[[nodiscard]] GpuContextPtr create_gpu_context(int device, MPI_Comm gpu_workers,
                                               GpuStartup* timing);

/// A GPU context being made ahead of time on a thread of its own (start_gpu_context_early).
struct GpuEarlyContext;
struct GpuEarlyContextDeleter {
  /// Joins the thread; a context it made that create_gpu_device_context did not adopt is
  /// released (cudaDeviceReset of that device).
  void operator()(GpuEarlyContext* early) const noexcept;
};
using GpuEarlyContextPtr = std::unique_ptr<GpuEarlyContext, GpuEarlyContextDeleter>;

/// Starts cudaSetDevice(device), the creation of its primary context (cudaFree(0)) and
/// cudaGetDeviceProperties on a new thread and returns at once, so that the context comes up
/// while the caller does something else (MPI_Init). Errors are kept, not thrown: the adopter
/// (create_gpu_device_context) then makes the context itself and throws the typed error there.
/// Null without CUDA, for device < 0, or when no thread can be started. Never throws.
[[nodiscard]] GpuEarlyContextPtr start_gpu_context_early(int device) noexcept;

/// The first half of create_gpu_context: binds this worker to GPU `device` (an ordinal among
/// the visible ones) and creates its stream; no NCCL. When `early` made the context of the same
/// device without error, it is joined and adopted (timing->cuda_early); otherwise the context
/// is made here, as create_gpu_context makes it (same typed errors). Not collective.
[[nodiscard]] GpuContextPtr create_gpu_device_context(int device, GpuEarlyContextPtr early,
                                                      GpuStartup* timing);

/// A NCCL communicator being made on a thread of its own (start_gpu_communicator).
struct GpuCommStart;
struct GpuCommStartDeleter {
  /// Joins the thread when it has finished; otherwise detaches it (a peer that never came
  /// must not keep an exiting rank from MPI_Abort). The thread keeps its own state alive.
  void operator()(GpuCommStart* start) const noexcept;
};
using GpuCommStartPtr = std::unique_ptr<GpuCommStart, GpuCommStartDeleter>;

/// The second half of create_gpu_context, split so the caller can work meanwhile (measure the
/// ceilings). Collective over `gpu_workers`, on the calling thread: its rank 0 makes the NCCL
/// unique id and broadcasts it (MPI stays on the calling thread). Then a new thread runs
/// ncclCommInitRank and one warm-up all-reduce on a stream of its own, and this returns.
/// Returns null when `gpu_workers` is MPI_COMM_NULL or has a single rank (no communicator).
/// Throws the typed NCCL error when the unique id could not be made.
[[nodiscard]] GpuCommStartPtr start_gpu_communicator(const GpuContext& ctx, MPI_Comm gpu_workers);

/// Waits for start_gpu_communicator's thread and installs the communicator in `ctx` (nccl,
/// nccl_rank, nccl_size); fills timing->nccl_init_s and nccl_wait_s. Rethrows
/// the error the thread met (sb::Error from SB_NCCL_CHECK / SB_CUDA_CHECK, same type). A null
/// `start` does nothing.
void finish_gpu_communicator(GpuContext& ctx, GpuCommStartPtr start, GpuStartup* timing);

/// Points ctx.nccl (nccl_rank, nccl_size) at the NCCL communicator of a multi-gpu case on
/// `size` GPU workers, `case_comm` being their MPI communicator (its ranks in the GPU workers'
/// order): over every GPU worker when `size` is their number (ctx's nccl_all_size_), otherwise
/// over the first `size` of them. Each is made when a case first needs it (ncclCommInitRank,
/// untimed: before make_worker; one all-reduce after it under SCALEBENCH_NCCL_WARMUP=1) and
/// kept for the worker's life (the case record's `setup_s` includes the making). Collective
/// over `case_comm`. Nothing for size <= 1.
void select_gpu_communicator(GpuContext& ctx, MPI_Comm case_comm, int size);

/// Waits for everything queued on ctx's GPU, the legacy default stream included
/// (cudaDeviceSynchronize). The runtime calls it after a GPU case's make_worker: set-up may use
/// cudaMemcpy or cudaMemset, whose work the worker's non-blocking stream does not wait for.
void wait_for_gpu_setup(GpuContext& ctx);

/// Records that `size` GPU workers exist, this worker being `rank` among them, so that
/// select_gpu_communicator makes their communicator when a case first needs it.
void set_gpu_workers(GpuContext& ctx, int rank, int size);

/// Description of this worker's GPU for /system: name, uuid, memory, SMs, clocks, driver, ...
[[nodiscard]] nlohmann::json describe_gpu(const GpuContext& ctx);

/// Library versions known to the GPU side (CUDA runtime and driver, NCCL, cuSOLVER, cuBLAS).
[[nodiscard]] nlohmann::json gpu_library_versions();

}  // namespace sb

namespace sb {

/// docs/specification.md §11 ceilings of this worker's GPU, measured in well under a second: a
/// large device-to-device copy (bytes read + written per second) and a cuBLAS fp64 GEMM rate.
/// Returns ceiling entries {scope "gpu", kind "copy_bandwidth"|"fp64_gemm", value, unit, ...};
/// empty without CUDA.
[[nodiscard]] nlohmann::json measure_gpu_ceilings(GpuContext& ctx);

/// Host-to-device and device-to-host copy bandwidth of this worker's GPU from pinned host
/// memory (nvbandwidth's host_to_device_memcpy_ce and device_to_host_memcpy_ce): `bytes` each
/// way, the best of five after a warm-up copy, timed with CUDA events. `while_copying` runs on
/// this thread while a train of copies is on the link (to read the PCIe link under load); it may
/// be empty. The host buffer is allocated on this thread, so it lies on the NUMA node the
/// worker's memory policy gives it: `host_numa_node` says which (-1: unknown).
struct HostCopyBandwidth {
  double h2d_bytes_per_s = 0;  ///< 0 when not measured
  double d2h_bytes_per_s = 0;
  double bytes = 0;
  int host_numa_node = -1;
  std::string error;  ///< why it was not measured (empty when it was)
};
[[nodiscard]] HostCopyBandwidth measure_host_copy_bandwidth(
    GpuContext& ctx, std::size_t bytes, const std::function<void()>& while_copying);

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
