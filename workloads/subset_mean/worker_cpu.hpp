#pragma once
/// @file worker_cpu.hpp
/// The CPU side of subset-mean: the fused generate-and-reduce block kernel and the CPU worker.
///
/// A block is generated and reduced in one pass (nothing is stored): each of its rows is a run of
/// chunk/2 consecutive Philox blocks whose normals the SIMD kernels sum (philox_simd.hpp): even
/// rows with normal_sums (the subset needs their z0), odd rows with normal_pair_total (only
/// z0 + z1). Rows are shared among OpenMP threads; the row sums land in a per-worker scratch
/// array and are added in row order, so a task's partial does not depend on the thread count.

#include <cstdint>
#include <memory>

#include "scalebench/workload.hpp"
#include "subset_mean/config.hpp"
#include "subset_mean/philox_simd.hpp"

namespace sb::subset_mean {

/// A task's partial.
struct BlockSums {
  double subset = 0;  ///< sum of z over the block's elements with i and j even
  double full = 0;    ///< sum of z over all chunk^2 elements
};

/// Sums of task `task`'s block with `kernels`, rows split over `threads` OpenMP threads.
/// `scratch` holds 2 * cfg.chunk doubles (no allocation here).
BlockSums block_sums(const Config& cfg, std::int64_t task, const data::simd::Kernels& kernels,
                     int threads, double* scratch);

/// The same sums element by element from philox.hpp's sb::data::normal (slow; for tests).
BlockSums reference_block_sums(const Config& cfg, std::int64_t task);

/// The CPU worker (Device::cpu): tasks computed synchronously in submit() with env.threads
/// threads, on the widest SIMD variant of this CPU.
std::unique_ptr<WorkerCase> make_cpu_worker(const CaseSpec& spec, const CaseEnv& env);

}  // namespace sb::subset_mean
