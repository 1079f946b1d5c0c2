#pragma once
/// @file export_inputs.hpp
/// subset-mean's inputs for `scalebench datagen` (input_export.hpp, docs/datagen.md).

#include <vector>

#include "scalebench/input_export.hpp"

namespace sb::subset_mean {

/// The n x n matrix X[i,j] = mu + sigma * Z(seed, i*n + j) as array "x" (float64, row-major),
/// made by the CPU worker's generator (philox_simd's fill_normal); the answer
/// {answer, full_mean, count, draws, subset_sum_z, full_sum_z} by the CPU worker's block sums
/// folded as the scheduler folds them.
[[nodiscard]] InputExport export_inputs(const std::vector<Params>& variants);

}  // namespace sb::subset_mean
