#pragma once
/// @file generate.cuh
/// GPU generation of the groupby table (generate.cu): one thread per row (grid-stride), the
/// per-row functions of table.hpp bit for bit, the Poisson table staged in shared memory;
/// writes only the requested columns. Runs on the given stream without synchronising.

#include <cuda_runtime.h>

#include <cstdint>

#include "groupby/generate.hpp"
#include "groupby/poisson.hpp"
#include "groupby/table.hpp"

namespace sb::groupby::gpu {

/// A device copy of the Poisson table (cudaMalloc'd; free with cudaFree).
[[nodiscard]] PoissonTable* upload_poisson_table(const PoissonTable& t, cudaStream_t stream);

/// Rows [row0, row0 + n) of the requested columns into device columns `out`.
void generate(const TableSpec& spec, const PoissonTable* d_poisson, std::int64_t row0,
              std::int64_t n, unsigned columns, const ColumnPtrs& out, cudaStream_t stream);

}  // namespace sb::groupby::gpu
