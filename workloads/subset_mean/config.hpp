#pragma once
/// @file config.hpp
/// Parameters and task layout of subset-mean (docs/specification.md §4.1), shared by the scheduler
/// and the workers.
///
/// X is n x n with X[i,j] = mu + sigma * Z(seed, i*n + j) (philox.hpp's normal stream 0). Task t
/// is the chunk x chunk block at block row t / nb and block column t % nb (nb = n / chunk).
/// Since n and chunk are even, row i of a block covers the chunk/2 consecutive Philox blocks
/// (i*n + col0)/2 ... ; the subset elements (i even, j even) are exactly the z0 of even rows.
/// A task's partial is {sum of z over its subset elements, sum of z over all its elements}.

#include <cstdint>
#include <string>

#include "scalebench/params.hpp"
#include "subset_mean/philox_simd_table.hpp"

namespace sb::subset_mean {

/// Philox stream of X's normals.
inline constexpr std::uint32_t kStream = 0;
/// Most tasks a case may have (the scheduler keeps two doubles per task).
inline constexpr std::int64_t kMaxTasks = std::int64_t{1} << 22;

struct Config {
  std::int64_t n = 0;
  std::int64_t chunk = 0;
  std::int64_t blocks_per_row = 0;  ///< nb = n / chunk
  std::int64_t tasks = 0;           ///< nb^2
  std::uint64_t seed = 42;
  double mu = 10;
  double sigma = 1;
  /// Widest SIMD variant the CPU worker's generator may use (parameter simd; absent: avx512,
  /// i.e. the widest this CPU runs). Every variant gives the same numbers.
  data::simd::Isa simd = data::simd::Isa::avx512;

  /// Elements in the subset, (n/2)^2.
  [[nodiscard]] std::int64_t count() const { return (n / 2) * (n / 2); }
  /// Elements drawn, n^2.
  [[nodiscard]] std::int64_t draws() const { return n * n; }
  /// First row of task t's block.
  [[nodiscard]] std::int64_t row0(std::int64_t task) const {
    return (task / blocks_per_row) * chunk;
  }
  /// First column of task t's block.
  [[nodiscard]] std::int64_t col0(std::int64_t task) const {
    return (task % blocks_per_row) * chunk;
  }
  /// Philox block of element (i, j0) for even j0: (i*n + j0) / 2.
  [[nodiscard]] std::uint64_t philox_block(std::int64_t i, std::int64_t j0) const {
    return (static_cast<std::uint64_t>(i) * static_cast<std::uint64_t>(n) +
            static_cast<std::uint64_t>(j0)) >>
           1;
  }
};

/// Reads and checks n, chunk, seed (default 42), mu (10), sigma (1) and simd (optional);
/// throws sb::UsageError with one line on bad values ("subset-mean: n (20001) must be a multiple of
/// chunk (2000)").
Config parse(const Params& params);

/// n, chunk and seed of a preset (tiny, small, seed, large); sb::UsageError for another name.
Params preset_params(const std::string& preset);

}  // namespace sb::subset_mean
