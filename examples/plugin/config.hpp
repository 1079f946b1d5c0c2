#pragma once
/// @file config.hpp
/// tiled-dgemm's parameters: the presets, and the checked Config every part of the workload reads
/// (config.cpp).

#include <algorithm>
#include <cstdint>
#include <string>

#include "scalebench/params.hpp"

namespace tiled_dgemm {

/// A case's parameters, checked.
struct Config {
  std::int64_t m = 0;     ///< rows of A and C
  std::int64_t n = 0;     ///< columns of B and C
  std::int64_t k = 0;     ///< columns of A, rows of B
  std::int64_t tile = 0;  ///< rows of C per task
  std::uint64_t seed = 42;

  [[nodiscard]] std::int64_t tasks() const { return (m + tile - 1) / tile; }
  [[nodiscard]] std::int64_t row0(std::int64_t task) const { return task * tile; }
  [[nodiscard]] std::int64_t rows(std::int64_t task) const {
    return std::min(tile, m - row0(task));
  }
};

/// Throws sb::UsageError naming the parameter on bad values.
[[nodiscard]] Config parse(const sb::Params& p);

/// Weak scaling (Workload::weak_scale): m grown `factor` times, to whole tiles.
[[nodiscard]] sb::Params weak_scale(const sb::Params& p, double factor);

/// Parameters of a preset: tiny, small, seed, large.
[[nodiscard]] sb::Params preset(const std::string& name);

}  // namespace tiled_dgemm
