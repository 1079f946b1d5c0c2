#pragma once
/// @file subset_mean_kernel.cuh
/// The fused subset-mean kernel (subset_mean_gpu.cu): generates every normal of one
/// rows x cols block of the n x n matrix and reduces it in the same pass, writing nothing but
/// the block's two sums. Used by the GPU worker, its tests and bench_subset_mean_gpu.
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
/// and `math_only` are diagnostics for the benchmark's cost split, not the workload:
/// `philox_only` sums the uniforms (no Box-Muller), `math_only` runs the table Box-Muller on
/// uniforms from a cheap hash (no Philox).
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
  FusedKernel(int device, cudaStream_t stream);
  ~FusedKernel();
  FusedKernel(const FusedKernel&) = delete;
  FusedKernel& operator=(const FusedKernel&) = delete;

  /// Enqueues the block's sums and times into *out (FusedResult). `out` is device memory or
  /// mapped pinned host memory (a device pointer to it). Asynchronous. `unroll` (1, 2 or 6):
  /// pairs per thread per inner-loop step, a tuning knob (kDefaultUnroll is the measured best);
  /// every unroll adds the same numbers in the same order.
  void launch(const BlockShape& block, std::uint64_t seed, FusedResult* out,
              GpuMath math = GpuMath::table, int unroll = kDefaultUnroll) const;

  /// Enqueues a write of the GPU's global timer (ns, the clock of FusedResult) into *out.
  void stamp(unsigned long long* out) const;

  /// Six pairs per step, interleaved in one basic block, up to 128 registers (two CTAs per
  /// SM): 26.6-26.7 ms on the seed preset with the table Box-Muller against 28.9-29.0 for two
  /// pairs (63 registers, four CTAs), 27.8 for four and 27.1-27.2 for eight pairs per step
  /// (H200, 2026-11-22, bench_subset_mean_gpu).
  static constexpr int kDefaultUnroll = 6;
  static constexpr int kUnrolls = 3;  ///< 1, 2 and 6

  /// Resident CTAs of the polynomial kernel on aligned blocks, unroll 1 (a reference size).
  [[nodiscard]] int grid() const noexcept { return grids_[0]; }
  [[nodiscard]] int threads() const noexcept { return threads_; }

 private:
  cudaStream_t stream_;
  int grids_[2 * kGpuMaths * kUnrolls] = {};  ///< resident CTAs per variant (GpuMath x aligned
                                              ///< x unroll)
  int grid_ = 0;                              ///< the largest: size of `partials_`
  int threads_ = 256;
  bool dependent_launch_ = false;                ///< programmatic dependent launches (sm_90+)
  double* partials_ = nullptr;                   ///< 2 doubles per CTA
  sb::data::BoxMullerTables* tables_ = nullptr;  ///< device copy of the Box-Muller tables
  void* scratch_ = nullptr;  ///< CTAs done (the last one reduces and resets it), first CTA's start
};

}  // namespace sb::subset_mean
