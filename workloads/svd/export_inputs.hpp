#pragma once
/// @file export_inputs.hpp
/// svd's inputs for `scalebench datagen` (input_export.hpp, docs/datagen.md).

#include <vector>

#include "scalebench/input_export.hpp"

namespace sb::svd {

/// The m x n matrix A[i,j] = s_j * U(0,1)(seed, i*n + j) as array "A" (float64, row-major),
/// made by the workers' generator (svd_data.hpp); the answer {singular_values, sigma_max,
/// sigma_min, condition} by LAPACK dgesvd of the whole matrix (the workload's own reference),
/// only where the workload runs that reference itself (m <= 20000, n <= 1000).
[[nodiscard]] InputExport export_inputs(const std::vector<Params>& variants);

}  // namespace sb::svd
