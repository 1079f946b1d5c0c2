#pragma once
/// @file svd_data.hpp
/// The svd input on the CPU: A[i,j] = s_j * U(0,1)(seed, i*n + j) (philox.hpp layout), written
/// column-major as LAPACK wants it.

#include <cstdint>

#include "svd/config.hpp"

namespace sb::svd {

/// Writes rows [row0, row0 + rows) of A into `out` (column-major, leading dimension ld >= rows):
/// out[(i - row0) + j * ld] = scales[j] * sb::data::uniform(seed, i * n + j).
void generate_rows(const Config& cfg, const double* scales, std::int64_t row0, std::int64_t rows,
                   double* out, std::int64_t ld);

/// Row block `block` (chunk rows) into `out` with leading dimension chunk.
inline void generate_block(const Config& cfg, const double* scales, std::int64_t block,
                           double* out) {
  generate_rows(cfg, scales, block * cfg.chunk, cfg.chunk, out, cfg.chunk);
}

}  // namespace sb::svd
