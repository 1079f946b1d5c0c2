#pragma once
/// @file svd.hpp
/// The svd workload (docs/specification.md §4.2): thin SVD of a tall-skinny m x n matrix by TSQR.

#include "scalebench/workload.hpp"

namespace sb {

/// The svd workload: keys m, n, chunk, seed, condition; presets tiny, small, seed, large.
Workload svd_workload();

}  // namespace sb
