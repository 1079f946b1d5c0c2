#pragma once
/// @file scheduler.hpp
/// The scheduler side of the svd workload and its cross-path check.

#include <memory>
#include <vector>

#include "scalebench/workload.hpp"

namespace sb::svd {

/// num_tasks = m / chunk. Every worker's finish_repeat partial is a FinishPartial
/// (routines.hpp); the singular values arrive in case rank 0's.
/// end_repeat(): {"sigma_max", "sigma_min", "condition", "m", "n", "blocks", "local_routine",
/// "svd_routine"}: local_routine is combine_local_routines of the workers' (case rank 0's value,
/// then any other worker's distinct values, ","-joined), svd_routine the root's SVD of R.
/// validate(): checks "residual" (||A - U S V^T||_F / ||A||_F <= 1e-12), "orthogonality"
/// (||U^T U - I||_F <= 1e-10), "tasks" (every block factored once) and, for m <= 20000 and
/// n <= 1000, "reference" (max_i |s_i - s_lapack_i| / s_max <= 1e-10 against LAPACK dgesvd of
/// the whole matrix). fingerprint(): values {sigma_max, sigma_min, condition, residual,
/// orthogonality}, data = the singular values.
std::unique_ptr<SchedulerCase> make_scheduler(const CaseSpec& spec);

/// Singular values of two cases agree: max_i |s_i - s'_i| / s_max <= 1e-10.
std::vector<Check> cross_check(const Fingerprint& reference, const Fingerprint& other);

/// Singular values of the whole matrix by LAPACK dgesvd (the reference; O(mn) memory).
std::vector<double> reference_singular_values(const CaseSpec& spec);

}  // namespace sb::svd
