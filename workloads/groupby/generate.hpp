#pragma once
/// @file generate.hpp
/// The CPU generator of the groupby table (the mapping is documented in table.hpp).

#include <cstddef>
#include <cstdint>

#include "groupby/poisson.hpp"
#include "groupby/table.hpp"

namespace sb::groupby {

/// What a row's values depend on besides its index.
struct TableSpec {
  std::uint64_t seed = 42;
  std::uint64_t cardinality = 10'000'000;  ///< key in [0, cardinality)
};

/// Writes rows [row0, row0 + n) of the requested columns (ColumnBits) to out[0 .. n), one
/// thread. Lanes of 8 rows are computed together so compilers vectorise Philox; on x86-64 the
/// function is compiled for AVX-512, AVX2 and baseline and picked at load time.
void generate_rows(const TableSpec& spec, std::int64_t row0, std::int64_t n, unsigned columns,
                   const ColumnPtrs& out);

/// The same with `threads` OpenMP threads (contiguous slices).
void generate_rows_parallel(const TableSpec& spec, std::int64_t row0, std::int64_t n,
                            unsigned columns, const ColumnPtrs& out, int threads);

/// The vectorised x / y conversion of generate_rows, element-wise, for tests of its edges:
/// out[i] = centered_uniform(hi[i], lo[i]) (table.hpp), bit for bit.
void centered_uniform_lanes(const std::uint32_t* hi, const std::uint32_t* lo, std::size_t n,
                            double* out);

/// One row by the scalar reference (Random123's philox4x32 through philox.hpp), for tests and
/// the validation scan.
struct RowValues {
  std::int64_t timestamp;
  std::int64_t id;
  std::int32_t name;
  double x;
  double y;
  std::int64_t key;
};
[[nodiscard]] RowValues reference_row(const TableSpec& spec, std::int64_t row);

}  // namespace sb::groupby
