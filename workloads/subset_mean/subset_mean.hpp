#pragma once
/// @file subset_mean.hpp
/// The subset-mean workload (SPEC section 4.1): `(x + 1)[::2, ::2].mean()` of an n x n array of
/// N(mu, sigma^2) draws, every one of the n^2 draws made, plus the full-array mean as proof.
///
/// Result of a repeat: {"answer": mu + 1 + sigma S_sub / count, "full_mean": mu + sigma S_all /
/// n^2, "count": (n/2)^2, "draws": n^2, "subset_sum_z": S_sub, "full_sum_z": S_all}, where the sums
/// of the standard normals are folded per task in task order with Neumaier compensation (so the
/// result does not depend on which worker ran which task, nor when).

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "scalebench/workload.hpp"

namespace sb {

/// The subset-mean workload (SPEC section 4.1).
Workload subset_mean_workload();

namespace subset_mean {

/// The scheduler side of one case (scheduler.cpp).
std::unique_ptr<SchedulerCase> make_scheduler(const CaseSpec& spec);

/// |a - reference| / |reference| (0 when equal): how far a repeat or a path is from another.
inline double relative_difference(double a, double reference) {
  if (a == reference) return 0;
  return std::fabs(a - reference) / std::max(std::fabs(reference), 1e-300);
}

/// Checks of a case's fingerprint against the reference case's: relative difference <= 1e-12
/// on "answer" and "full_mean".
std::vector<Check> cross_check(const Fingerprint& reference, const Fingerprint& other);

}  // namespace subset_mean
}  // namespace sb
