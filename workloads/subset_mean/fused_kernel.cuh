#pragma once
/// @file fused_kernel.cuh
/// The fused subset-mean kernel's device code (internal): one template per Box-Muller variant
/// (GpuMath), block alignment and unroll. A translation unit that includes it instantiates the
/// variants it names through make_variant: worker_gpu.cu the one the workload runs
/// (workload_variant), fused_variants.cuh every variant, for the benchmarks and tests only.
///
/// Cost per task (chunk = 10^4): 5e7 Philox calls and 5e7 Box-Muller pairs; no memory traffic
/// but 16 bytes per CTA and the 32 KB Box-Muller tables copied into each CTA's shared memory.
/// The issue slots, not DRAM, bound it (ncu of bench_subset_mean_gpu BM_SubsetMeanFused; its
/// philox_only and math_only variants split the cost), hence several pairs per step to fill
/// them (FusedKernel::kDefaultUnroll). Launches are dependent (FusedKernel): the next block's
/// CTAs take the SMs as this block's leave.
///
/// Work split: the block's pairs, row-major with a fixed number of pairs per row, are cut into
/// equal contiguous runs, one per warp (not per thread: a thread's run would cross a row at a
/// different step from its neighbours' and the warp would diverge). A warp walks its run one
/// row segment at a time, lane l taking pairs l, l+32, ... of the segment, so only the counter's
/// low word changes in the inner loop; it keeps the sums of z0 and z1 apart and at the
/// segment's end adds both to `full` and z0's to `subset` when the row is even (in an even row,
/// the first element of every pair has an even column). Pairs at a row's ends may hold an
/// element outside the block (odd n, odd column offset or odd width): those are handled apart
/// with masks; aligned blocks (the presets) have none.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "scalebench/box_muller_tables.cuh"
#include "scalebench/gpu_device.cuh"
#include "scalebench/gpu_error.cuh"
#include "scalebench/philox.cuh"
#include "subset_mean/subset_mean_kernel.cuh"

namespace sb::subset_mean::detail {

namespace dg = sb::data::gpu;

constexpr int kThreads = 256;

/// Kernel parameters (passed by value: they sit in the constant bank).
struct FusedParams {
  dg::RoundKeys rk;
  dg::detail::FastConstants fc;  ///< polynomial coefficients (used as constant-bank operands)
  dg::TableConstants tc;         ///< the same for the table-driven Box-Muller
  const sb::data::BoxMullerTables* tables;  ///< global copy, loaded into shared memory
  std::uint32_t stream;                     ///< Philox counter word 2
  std::uint32_t width;                      ///< columns of the block
  std::uint32_t pairs_row;                  ///< pairs per block row (same for every row)
  std::uint32_t pad = 0;
  std::uint64_t n;  ///< matrix order
  std::uint64_t row0;
  std::uint64_t col0;
  std::uint64_t total_pairs;     ///< rows * pairs_row
  std::uint64_t pairs_per_warp;  ///< contiguous run of each warp
};

/// What the pair loop reads besides FusedParams. For the table Box-Muller: the CTA's shared
/// copy of the tables, and register copies of the five full-precision coefficients loaded from
/// shared memory (read from the kernel parameters, ptxas reloads each from the constant bank at
/// every use; bench_subset_mean_gpu BM_SubsetMeanFused). The round keys stay in the constant
/// bank (in registers too they cost registers and occupancy, and were no faster).
struct LoopData {
  const sb::data::BoxMullerTables* tab;
  dg::TableConstants tc;
};

template <GpuMath M>
constexpr bool kUsesTables = M == GpuMath::table || M == GpuMath::math_only;

/// The pair of normals with counter (ctr_lo, ctr_hi), before the last multiplication (z0 = r c,
/// z1 = r s): the sums fold it in with one fma each. Variants without a polar form give r = 1.
template <GpuMath M>
__device__ __forceinline__ dg::PolarPair pair_polar(const FusedParams& p, const LoopData& d,
                                                    std::uint32_t ctr_lo, std::uint32_t ctr_hi) {
  if constexpr (M == GpuMath::math_only) {  // the cost split: a cheap hash instead of Philox
    const std::uint32_t h = ctr_lo * 0x9E3779B9u;
    return dg::box_muller_tab_polar(dg::u01(h ^ ctr_hi, h), dg::u01(h + p.stream, ctr_lo ^ h),
                                    *d.tab, d.tc);
  }
  const uint4 w = dg::philox4x32_10(make_uint4(ctr_lo, ctr_hi, p.stream, 0u), p.rk);
  const double ua = dg::u01(w.x, w.y);
  const double ub = dg::u01(w.z, w.w);
  if constexpr (M == GpuMath::table) {
    return dg::box_muller_tab_polar(ua, ub, *d.tab, d.tc);
  } else if constexpr (M == GpuMath::fast) {
    const dg::Normals z = dg::box_muller_fast(ua, ub, p.fc);
    return {1.0, z.z0, z.z1};
  } else if constexpr (M == GpuMath::cuda) {
    const dg::Normals z = dg::box_muller(ua, ub);
    return {1.0, z.z0, z.z1};
  } else {
    return {1.0, ua, ub};
  }
}

/// z0 + z1 of the pair, before the last multiplication: what an odd row needs (no element of it
/// is in the subset). The table variant computes it in fewer instructions than the two normals.
template <GpuMath M>
__device__ __forceinline__ dg::PolarSum pair_sum(const FusedParams& p, const LoopData& d,
                                                 std::uint32_t ctr_lo, std::uint32_t ctr_hi) {
  if constexpr (M == GpuMath::table) {
    const uint4 w = dg::philox4x32_10(make_uint4(ctr_lo, ctr_hi, p.stream, 0u), p.rk);
    return dg::box_muller_tab_sum_polar(dg::u01(w.x, w.y), dg::u01(w.z, w.w), *d.tab, d.tc);
  } else {
    const dg::PolarPair z = pair_polar<M>(p, d, ctr_lo, ctr_hi);
    return {1.0, z.r * z.c + z.r * z.s};
  }
}

/// kU pairs per step from pair k of the run on, while a whole step fits, in one basic block (a
/// plain unrolled loop tests the bound between them), so that the scheduler interleaves their
/// dependency chains; the sums in pair order, as one pair per step would add them, each pair
/// folded in with fmas (s0 = fma(r, c, s0)). With kSum (odd rows), only z0 + z1 of each pair,
/// into s1.
template <GpuMath M, int kU, bool kSum>
__device__ __forceinline__ void run_steps(const FusedParams& p, const LoopData& d, std::uint32_t lo,
                                          std::uint32_t hi, std::uint32_t run, std::uint32_t& k,
                                          double& s0, double& s1) {
  for (; k < run && run - k > 32u * (kU - 1); k += 32u * kU) {
    if constexpr (kSum) {
      dg::PolarSum z[kU];
#pragma unroll
      for (int u = 0; u < kU; ++u) z[u] = pair_sum<M>(p, d, lo + k + 32u * u, hi);
#pragma unroll
      for (int u = 0; u < kU; ++u) s1 = fma(z[u].r, z[u].f, s1);
    } else {
      dg::PolarPair z[kU];
#pragma unroll
      for (int u = 0; u < kU; ++u) z[u] = pair_polar<M>(p, d, lo + k + 32u * u, hi);
#pragma unroll
      for (int u = 0; u < kU; ++u) {
        s0 = fma(z[u].r, z[u].c, s0);
        s1 = fma(z[u].r, z[u].s, s1);
      }
    }
  }
}

/// Sums z0 and z1 of the pairs with counters [b, b + count), lane-interleaved over the warp;
/// no element is outside the block. `b` and `count` are the same in every lane. kUnroll pairs
/// per step, then 4 and 2 (when fewer) for what is left, then one. With kSum (an odd row), only
/// z0 + z1 of each pair, into s1.
template <GpuMath M, int kUnroll, bool kSum>
__device__ __forceinline__ void interior_run(const FusedParams& p, const LoopData& d,
                                             std::uint64_t b, std::uint32_t count,
                                             std::uint32_t lane, double& s0, double& s1) {
  while (count > 0) {
    const std::uint32_t lo = static_cast<std::uint32_t>(b);
    const std::uint32_t hi = static_cast<std::uint32_t>(b >> 32);
    // the run in which only the counter's low word changes
    const std::uint64_t room = (std::uint64_t{1} << 32) - lo;
    const std::uint32_t run = room < count ? static_cast<std::uint32_t>(room) : count;
    std::uint32_t k = lane;
    if constexpr (kUnroll > 4) run_steps<M, kUnroll, kSum>(p, d, lo, hi, run, k, s0, s1);
    if constexpr (kUnroll > 2) run_steps<M, 4, kSum>(p, d, lo, hi, run, k, s0, s1);
    if constexpr (kUnroll > 1) run_steps<M, 2, kSum>(p, d, lo, hi, run, k, s0, s1);
    run_steps<M, 1, kSum>(p, d, lo, hi, run, k, s0, s1);
    b += run;
    count -= run;
  }
}

/// Pair `b` of a row whose first element index is e0 (elements e0 .. e0 + width - 1 belong to
/// the block): adds the elements of the pair that are inside.
template <GpuMath M>
__device__ __forceinline__ void edge_pair(const FusedParams& p, const LoopData& d, std::uint64_t b,
                                          std::uint64_t e0, double& s0, double& s1) {
  const std::int64_t o = static_cast<std::int64_t>(2 * b) - static_cast<std::int64_t>(e0);
  const bool v0 = o >= 0 && o < static_cast<std::int64_t>(p.width);
  const bool v1 = o + 1 >= 0 && o + 1 < static_cast<std::int64_t>(p.width);
  if (!v0 && !v1) return;
  const dg::PolarPair z =
      pair_polar<M>(p, d, static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(b >> 32));
  if (v0) s0 = fma(z.r, z.c, s0);
  if (v1) s1 = fma(z.r, z.s, s1);
}

/// Deterministic sum over the CTA of (a, b); the result is valid in thread 0.
__device__ __forceinline__ double2 cta_sum(double a, double b) {
  __shared__ double2 warp_sums[kThreads / 32];
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    a += __shfl_down_sync(0xffffffffu, a, off);
    b += __shfl_down_sync(0xffffffffu, b, off);
  }
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  if (lane == 0) warp_sums[warp] = make_double2(a, b);
  __syncthreads();
  double2 t = make_double2(0.0, 0.0);
  if (threadIdx.x == 0) {
#pragma unroll
    for (int i = 0; i < kThreads / 32; ++i) {
      t.x += warp_sums[i].x;
      t.y += warp_sums[i].y;
    }
  }
  __syncthreads();  // warp_sums may be reused by a second call
  return t;
}

/// Resident CTAs per SM the compiler must allow: wide steps (kUnroll > 2) may take up to 128
/// registers (two CTAs of 256 threads), narrower ones are left to ptxas.
template <int kUnroll>
constexpr int kMinCtas = kUnroll > 2 ? 2 : 1;

/// The launch's scratch besides the partials: written only after the previous grid on the
/// stream has ended (griddepcontrol.wait), so one copy serves every launch.
struct FusedScratch {
  unsigned ticket;  ///< CTAs done; the last one resets it
  unsigned pad;
  unsigned long long start_ns;  ///< CTA 0's start
};

__device__ __forceinline__ unsigned long long global_timer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/// Programmatic dependent launch: let the next grid on the stream start (its CTAs take the SMs
/// as this grid's leave), and wait for the previous grid's end and memory. No-ops before sm_90
/// and when a launch was not made dependent.
__device__ __forceinline__ void allow_next_grid() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

__device__ __forceinline__ void wait_previous_grid() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

template <GpuMath M, bool kAligned, int kUnroll>
__global__ void __launch_bounds__(kThreads, kMinCtas<kUnroll>)
    fused_subset_mean(const FusedParams p, double2* partials, FusedScratch* scratch,
                      FusedResult* out) {
  const unsigned long long start_ns = global_timer_ns();
  allow_next_grid();
  __shared__ sb::data::BoxMullerTables shared_tables;
  __shared__ dg::TableConstants shared_constants;
  const LoopData d = [&] {
    if constexpr (kUsesTables<M>) {
      dg::load_box_muller_tables<kThreads>(p.tables, &shared_tables);
      if (threadIdx.x == 0) shared_constants = p.tc;
      __syncthreads();
      return LoopData{&shared_tables, shared_constants};  // constants in registers
    } else {
      return LoopData{nullptr, p.tc};
    }
  }();
  double subset = 0.0;
  double full = 0.0;
  const std::uint32_t lane = threadIdx.x & 31u;
  const std::uint64_t warp = (static_cast<std::uint64_t>(blockIdx.x) * kThreads + threadIdx.x) >> 5;
  const std::uint64_t f = warp * p.pairs_per_warp;
  if (f < p.total_pairs) {  // everything below is uniform across the warp but the pair loops
    std::uint64_t remaining = min(p.pairs_per_warp, p.total_pairs - f);
    std::uint64_t r = f / p.pairs_row;  // block row
    std::uint32_t q = static_cast<std::uint32_t>(f - r * p.pairs_row);
    while (remaining > 0) {
      const std::uint64_t i = p.row0 + r;  // global row
      const std::uint64_t e0 = i * p.n + p.col0;
      const std::uint32_t qend =
          static_cast<std::uint32_t>(min(static_cast<std::uint64_t>(p.pairs_row), q + remaining));
      const std::uint64_t b0 = e0 >> 1;  // counter of pair 0 of this row
      double s0 = 0.0;
      double s1 = 0.0;
      // odd rows hold no subset element: only z0 + z1 of their pairs
      const auto interior = [&](std::uint64_t b, std::uint32_t count) {
        if ((i & 1) == 0) {
          interior_run<M, kUnroll, false>(p, d, b, count, lane, s0, s1);
        } else {
          interior_run<M, kUnroll, true>(p, d, b, count, lane, s0, s1);
        }
      };
      if constexpr (kAligned) {
        interior(b0 + q, qend - q);
      } else {
        // at most one pair at each end of a row holds an element outside the block
        const std::uint32_t par = static_cast<std::uint32_t>(e0 & 1);
        const std::uint32_t in_lo = min(max(q, par), qend);                       // interior begin
        const std::uint32_t in_hi = max(in_lo, min(qend, (p.width + par) >> 1));  // end
        if (lane == 0 && q < in_lo) edge_pair<M>(p, d, b0 + q, e0, s0, s1);
        if (lane == 1 && in_hi < qend) edge_pair<M>(p, d, b0 + in_hi, e0, s0, s1);
        interior(b0 + in_lo, in_hi - in_lo);
      }
      full += s0 + s1;
      if ((i & 1) == 0) subset += s0;
      remaining -= qend - q;
      q = 0;
      ++r;
    }
  }
  // CTA partial, then the last CTA to finish folds all partials in a fixed order. The previous
  // grid on the stream (same partials and scratch) must have ended first.
  __shared__ bool last;
  const double2 t = cta_sum(subset, full);
  wait_previous_grid();
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = t;
    if (blockIdx.x == 0) scratch->start_ns = start_ns;
    __threadfence();
    last = atomicAdd(&scratch->ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  double a = 0.0;
  double b = 0.0;
  for (unsigned k = threadIdx.x; k < gridDim.x; k += kThreads) {
    const double2 v = __ldcg(&partials[k]);
    a += v.x;
    b += v.y;
  }
  const double2 total = cta_sum(a, b);
  if (threadIdx.x == 0) {
    out->subset = total.x;
    out->full = total.y;
    out->start_ns = __ldcg(&scratch->start_ns);
    scratch->ticket = 0u;
    __threadfence_system();  // the fields above before end_ns, for a host polling mapped memory
    const unsigned long long end_ns = global_timer_ns();
    *static_cast<volatile unsigned long long*>(&out->end_ns) = end_ns == 0 ? 1 : end_ns;
    __threadfence_system();
  }
}

template <GpuMath M, bool kAligned, int kUnroll>
void launch_variant(unsigned ctas, cudaStream_t stream, bool dependent, const FusedParams& p,
                    double2* partials, FusedScratch* scratch, FusedResult* out) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(ctas);
  cfg.blockDim = dim3(kThreads);
  cfg.stream = stream;
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = dependent ? 1 : 0;
  SB_CUDA_CHECK(
      cudaLaunchKernelEx(&cfg, fused_subset_mean<M, kAligned, kUnroll>, p, partials, scratch, out));
}

template <GpuMath M, bool kAligned, int kUnroll>
int max_grid(int device) {
  int per_sm = 0;
  SB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &per_sm, fused_subset_mean<M, kAligned, kUnroll>, kThreads, 0));
  return std::max(1, per_sm) * sb::gpu::sm_count(device);
}

/// The variant (M, unroll U) for aligned and unaligned blocks.
template <GpuMath M, int U>
FusedVariant make_variant() {
  FusedVariant v;
  v.math = M;
  v.unroll = U;
  v.launch[0] = launch_variant<M, true, U>;
  v.launch[1] = launch_variant<M, false, U>;
  v.grid[0] = max_grid<M, true, U>;
  v.grid[1] = max_grid<M, false, U>;
  return v;
}

}  // namespace sb::subset_mean::detail
