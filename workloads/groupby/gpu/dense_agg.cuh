#pragma once
/// @file dense_agg.cuh
/// Low-cardinality groupby on a GPU (dense_agg.cu): keys lie in a known domain of D values.
///  - D <= 32 (names): every thread privatises D counters and sums in shared memory (its own
///    column of a [D][threads] array: no atomics, no bank conflicts); the block reduces them
///    with warp shuffles and writes one partial per block.
///  - larger D (ids): one shared-memory table of D slots per block, updated with shared
///    atomics (hundreds of distinct addresses), one partial per block.
/// A second kernel adds the block partials, in block order, to the repeat's accumulators
/// (deterministic). Fields: count, sum x, sum y, sum x^2 (min/max are not kept here).
/// Everything runs on the given stream and returns without synchronising.

#include <cuda_runtime.h>

#include <cstdint>

#include "groupby/query.hpp"
#include "groupby/table.hpp"

namespace sb::groupby::gpu {

/// Dense low-cardinality aggregation state (device memory).
struct DenseAgg {
  std::int64_t domain_lo = 0;
  int domain = 0;              ///< D
  unsigned fields = 0;         ///< subset of kSumX | kSumY | kSumSqX
  int words = 0;               ///< (1 + number of fields) * D
  double* acc = nullptr;       ///< [count | field...][D] of the repeat
  double* partials = nullptr;  ///< [max_blocks][words]
  int max_blocks = 0;
};
[[nodiscard]] DenseAgg make_dense(const QueryDef& q, const cudaDeviceProp& prop);
void free_dense(DenseAgg& a);
void dense_clear(const DenseAgg& a, cudaStream_t stream);
/// Adds rows [0, n) (key column of q, x / y) to a.acc. Throws on fields it does not keep.
void dense_aggregate(const QueryDef& q, const DenseAgg& a, const ColumnPtrs& in, std::int64_t n,
                     cudaStream_t stream);

}  // namespace sb::groupby::gpu
