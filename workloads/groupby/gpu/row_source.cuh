#pragma once
/// @file row_source.cuh
/// Where the rows of a groupby kernel come from: stored columns in device memory, or the table's
/// own per-row functions (table.hpp) evaluated inside the kernel for rows row0 + i, so that the
/// rows are generated where the first pass consumes them and are never stored. The worker
/// generates (the columns of a task would be written once and read back once: 24 bytes a row
/// of by-key's traffic, `bench_groupby_gpu` BM_AggregateByKey mode 4 against 5); the tests and
/// benchmarks also feed stored columns, to compare kernels on the same rows.
///
/// The device readers (ColumnRows, GeneratedRows) return a row's key and values bit for bit as
/// generate.cuh writes them.

#include <cuda_runtime.h>

#include <cstdint>

#include "groupby/generate.hpp"
#include "groupby/poisson.hpp"
#include "groupby/table.hpp"
#include "scalebench/philox.cuh"

namespace sb::groupby::gpu {

/// Rows [0, n) of a kernel: columns (key set), or generated (key null): row i is table row
/// row0 + i of `spec`.
struct RowSource {
  const std::int64_t* key = nullptr;
  const double* x = nullptr;
  const double* y = nullptr;
  TableSpec spec{};
  std::int64_t row0 = 0;

  /// The key, x and y columns of `c` (by-key's; the dense kernels take theirs from
  /// DenseAgg's query).
  static RowSource columns(const ColumnPtrs& c) {
    RowSource s;
    s.key = c.key;
    s.x = c.x;
    s.y = c.y;
    return s;
  }
  static RowSource generated(const TableSpec& spec, std::int64_t row0) {
    RowSource s;
    s.spec = spec;
    s.row0 = row0;
    return s;
  }
  [[nodiscard]] bool is_generated() const { return key == nullptr; }
};

namespace detail {

/// table.hpp's philox4x32_10(row, stream, seed) with the seed's round keys computed once on the
/// host (philox.cuh: the same function, Random123's layout), so that a kernel reads them as
/// constants instead of adding them up in every call.
__device__ __forceinline__ Words4 row_words(std::uint64_t row, std::uint32_t stream,
                                            const data::gpu::RoundKeys& rk) {
  const uint4 w =
      data::gpu::philox4x32_10(make_uint4(static_cast<std::uint32_t>(row),
                                          static_cast<std::uint32_t>(row >> 32), stream, 0u),
                               rk);
  return {{w.x, w.y, w.z, w.w}};
}

/// Stored rows: keys of type Key (int64, or uint32 in narrow buckets), x and y (each read only
/// when asked for: rx, ry; 0 otherwise).
template <class Key>
struct ColumnRows {
  const Key* key;
  const double* x;
  const double* y;
  __device__ __forceinline__ void load(std::int64_t i, bool rx, bool ry, long long& k, double& xv,
                                       double& yv) const {
    k = static_cast<long long>(key[i]);
    xv = rx ? x[i] : 0.0;
    yv = ry ? y[i] : 0.0;
  }
};

/// by-key's rows generated: key and y from stream kStreamYKey, x from kStreamXName (two
/// Philox calls a row; one without x).
struct GeneratedRows {
  data::gpu::RoundKeys rk;
  std::uint64_t cardinality;
  std::int64_t row0;
  GeneratedRows(const TableSpec& spec, std::int64_t first)
      : rk(data::gpu::round_keys(spec.seed)), cardinality(spec.cardinality), row0(first) {}
  __device__ __forceinline__ void load(std::int64_t i, bool rx, bool ry, long long& k, double& xv,
                                       double& yv) const {
    const auto r = static_cast<std::uint64_t>(row0 + i);
    const Words4 b = row_words(r, kStreamYKey, rk);
    k = bounded_key(b.w[2], b.w[3], cardinality);
    yv = ry ? centered_uniform(b.w[0], b.w[1]) : 0.0;
    xv = 0.0;
    if (rx) {
      const Words4 a = row_words(r, kStreamXName, rk);
      xv = centered_uniform(a.w[0], a.w[1]);
    }
  }
};

}  // namespace detail

}  // namespace sb::groupby::gpu
