#pragma once
/// @file dense_agg.cuh
/// Low-cardinality groupby on a GPU (dense_agg.cu): keys lie in a known domain of D values.
///  - D <= 32 (names): every thread privatises D counters and sums in shared memory (its own
///    column of a [D][threads] array: no atomics, no bank conflicts); the block reduces them
///    with warp shuffles.
///  - larger D (ids): one shared-memory table of D slots per block, updated with shared
///    atomics (hundreds of distinct addresses).
/// The rows come from stored columns or are generated in the kernel (the worker's way: a row is
/// one or two Philox calls and is never stored, so the aggregation moves no row through device
/// memory). Each block adds its sums to its own partial, which lives over the repeat's launches
/// (no atomics: a launch's grid is a function of its row count); dense_finish adds the partials
/// in block order (deterministic). Fields: count, sum x, sum y, sum x^2 (min/max are not kept
/// here). Everything runs on the given stream and returns without synchronising.

#include <cuda_runtime.h>

#include <cstdint>

#include "groupby/generate.hpp"
#include "groupby/poisson.hpp"
#include "groupby/query.hpp"
#include "groupby/table.hpp"

namespace sb::groupby::gpu {

/// Dense low-cardinality aggregation state (device memory).
struct DenseAgg {
  std::int64_t domain_lo = 0;
  int domain = 0;              ///< D
  unsigned fields = 0;         ///< subset of kSumX | kSumY | kSumSqX
  unsigned key_column = 0;     ///< kColName or kColId
  int words = 0;               ///< (1 + number of fields) * D
  double* acc = nullptr;       ///< [count | field...][D]: the sums, written by dense_finish
  double* partials = nullptr;  ///< [max_blocks][words]: each block's sums since dense_clear
  int max_blocks = 0;
};
[[nodiscard]] DenseAgg make_dense(const QueryDef& q, const cudaDeviceProp& prop);
void free_dense(DenseAgg& a);
/// Empties the partials (the start of a repeat).
void dense_clear(const DenseAgg& a, cudaStream_t stream);
/// Adds rows [0, n) of stored columns (the key column of q, x / y) to the partials. Throws on
/// fields it does not keep.
void dense_aggregate(const QueryDef& q, const DenseAgg& a, const ColumnPtrs& in, std::int64_t n,
                     cudaStream_t stream);
/// Adds rows [row0, row0 + n) of the table `spec`, generated in the kernel (table.hpp's
/// functions, bit for bit; `d_poisson`: upload_poisson_table's copy, for ids), to the partials.
void dense_generate(const DenseAgg& a, const TableSpec& spec, const PoissonTable* d_poisson,
                    std::int64_t row0, std::int64_t n, cudaStream_t stream);
/// acc = the sum of every block's partial, in block order.
void dense_finish(const DenseAgg& a, cudaStream_t stream);

}  // namespace sb::groupby::gpu
