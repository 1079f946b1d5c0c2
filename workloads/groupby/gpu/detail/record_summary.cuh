#pragma once
/// @file record_summary.cuh
/// The checksums of a table's records (internal): {groups, sum count, sum sum_x, sum sum_y,
/// sum min_x, sum max_x}, summed per thread and flushed once per block. Used where records are
/// written: the compaction of the global table (hash_finish) and the slice fold that writes its
/// groups as records (fold_emit_slices).

#include <cstdint>

#include "groupby/gpu/detail/device_helpers.cuh"

namespace sb::groupby::gpu::detail {

/// The checksums of one record into v.
__device__ __forceinline__ void summary_add(double* v, const unsigned long long* r,
                                            unsigned fields) {
  v[0] += 1.0;
  v[1] += static_cast<double>(r[1]);
  int w = 2;
  if (fields & kSumX) v[2] += __longlong_as_double(static_cast<long long>(r[w++]));
  if (fields & kSumY) v[3] += __longlong_as_double(static_cast<long long>(r[w++]));
  if (fields & kSumSqX) ++w;
  if (fields & kMinX) v[4] += __longlong_as_double(static_cast<long long>(r[w++]));
  if (fields & kMaxX) v[5] += __longlong_as_double(static_cast<long long>(r[w++]));
}

/// Adds the block's per-thread checksums v to out[0..5] (one atomic per value and block). Every
/// thread of the block must call it.
__device__ __forceinline__ void summary_flush(const double* v, double* out) {
  __shared__ double s[6][32];
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  for (int k = 0; k < 6; ++k) {
    const double t = warp_sum(v[k]);
    if (lane == 0) s[k][warp] = t;
  }
  __syncthreads();
  if (warp == 0) {
    const int nw = blockDim.x >> 5;
    for (int k = 0; k < 6; ++k) {
      double t = lane < nw ? s[k][lane] : 0.0;
      t = warp_sum(t);
      if (lane == 0 && t != 0.0) atomicAdd(&out[k], t);
    }
  }
}

}  // namespace sb::groupby::gpu::detail
