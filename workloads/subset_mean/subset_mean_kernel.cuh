#pragma once
/// @file subset_mean_kernel.cuh
/// The fused subset-mean kernel (worker_gpu.cu): generates every normal of one
/// rows x cols block of the n x n matrix and reduces it in the same pass, writing nothing but
/// the block's two sums. Used by the GPU worker, its tests and bench_subset_mean_gpu (device
/// code in fused_kernel.cuh).
///
/// Element (i, j) of the matrix has global index e = i*n + j and value z = normal stream
/// element e (philox.hpp). Its sums: subset = sum of z over i even and j even, full = sum of
/// all z; accumulated in fp64 (per-thread sums, then a fixed-order block and grid reduction, so
/// the result is deterministic for a given device).

#include <cuda_runtime.h>

#include <cstdint>

#include "scalebench/box_muller_tables.hpp"

namespace sb::subset_mean {

/// One block of the matrix.
struct BlockShape {
  std::int64_t n = 0;     ///< matrix order
  std::int64_t row0 = 0;  ///< first row
  std::int64_t col0 = 0;  ///< first column
  std::int64_t rows = 0;
  std::int64_t cols = 0;
};

/// Block of task t with chunk x chunk blocks, blocks_per_row = ceil(n / chunk); the last block
/// row and column are cut at n.
[[nodiscard]] BlockShape task_block(std::int64_t n, std::int64_t chunk, std::int64_t task);

/// Which Box-Muller the kernel uses: the table-driven one (box_muller_tables.cuh), the
/// polynomial one (philox.cuh's box_muller_fast) or CUDA's log/sqrt/sincospi. `philox_only`
/// and `math_only` split the cost for the benchmark, they are not the workload: `philox_only`
/// sums the uniforms (no Box-Muller), `math_only` runs the table Box-Muller on uniforms from a
/// cheap hash (no Philox).
enum class GpuMath { fast = 0, cuda = 1, philox_only = 2, math_only = 3, table = 4 };
inline constexpr int kGpuMaths = 5;

/// What one launch writes (FusedKernel::launch): the block's two sums and when its grid ran, by
/// the GPU's global timer (ns). `end_ns` is written last, after a system-wide fence, and is
/// never 0: a host that reads it non-zero from mapped memory then reads the other fields whole.
struct FusedResult {
  double subset = 0;
  double full = 0;
  unsigned long long start_ns = 0;  ///< when the grid's first CTA began
  unsigned long long end_ns = 0;    ///< when the last CTA wrote the sums
};

namespace detail {
struct FusedParams;   ///< fused_kernel.cuh
struct FusedScratch;  ///< fused_kernel.cuh
}  // namespace detail

/// One compiled variant of the fused kernel: its Box-Muller and its pairs per thread per
/// inner-loop step (1, 2 or 6; every unroll adds the same numbers in the same order), for
/// aligned ([0]) and unaligned ([1]) blocks. The library compiles workload_variant() only;
/// fused_variants.cuh compiles every other one for the benchmarks and tests.
struct FusedVariant {
  GpuMath math = GpuMath::table;
  int unroll = 0;
  void (*launch[2])(unsigned ctas, cudaStream_t stream, bool dependent,
                    const detail::FusedParams& p, double2* partials, detail::FusedScratch* scratch,
                    FusedResult* out) = {};
  /// Resident CTAs of the whole device.
  int (*grid[2])(int device) = {};
};

/// The variant the GPU worker runs: the table Box-Muller, six pairs per step (up to 128
/// registers, two CTAs per SM; bench_subset_mean_gpu BM_SubsetMeanFused compares the others).
[[nodiscard]] const FusedVariant& workload_variant();

/// Launches the fused kernel on one stream. Holds its scratch (per-CTA partials, a ticket and
/// the first CTA's start time), so launches on the same object must go to the same stream (they
/// do: one per worker).
///
/// On sm_90 and later the launches are programmatic dependent launches: a grid lets the next
/// launch on the stream start as soon as all of its CTAs run, so the next block's CTAs fill the
/// SMs that this one's last CTAs leave; each grid waits for its predecessor's end only before it
/// touches the shared partials (an earlier grid has always finished by then). Whatever else is
/// enqueued between two launches (an event record, a copy) makes the second wait in full.
class FusedKernel {
 public:
  FusedKernel(int device, cudaStream_t stream, const FusedVariant& variant = workload_variant());
  ~FusedKernel();
  FusedKernel(const FusedKernel&) = delete;
  FusedKernel& operator=(const FusedKernel&) = delete;

  /// Enqueues the block's sums and times into *out (FusedResult). `out` is device memory or
  /// mapped pinned host memory (a device pointer to it). Asynchronous.
  void launch(const BlockShape& block, std::uint64_t seed, FusedResult* out) const;

  /// Enqueues a write of the GPU's global timer (ns, the clock of FusedResult) into *out.
  void stamp(unsigned long long* out) const;

  /// The workload's pairs per step (workload_variant().unroll).
  static constexpr int kDefaultUnroll = 6;

  /// Resident CTAs of this kernel's variant on aligned blocks.
  [[nodiscard]] int grid() const noexcept { return grids_[0]; }
  [[nodiscard]] int threads() const noexcept { return threads_; }
  [[nodiscard]] const FusedVariant& variant() const noexcept { return variant_; }

 private:
  FusedVariant variant_;
  cudaStream_t stream_;
  int grids_[2] = {};  ///< resident CTAs of the variant on aligned and unaligned blocks
  int grid_ = 0;       ///< the larger: size of `partials_`
  int threads_ = 256;
  bool dependent_launch_ = false;                ///< programmatic dependent launches (sm_90+)
  double* partials_ = nullptr;                   ///< 2 doubles per CTA
  sb::data::BoxMullerTables* tables_ = nullptr;  ///< device copy of the Box-Muller tables
  void* scratch_ = nullptr;  ///< CTAs done (the last one reduces and resets it), first CTA's start
};

}  // namespace sb::subset_mean
