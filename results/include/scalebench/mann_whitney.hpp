#pragma once
/// @file mann_whitney.hpp
/// Two-sided Mann-Whitney U (Wilcoxon rank-sum) test, used by the regression gate
/// (docs/specification.md §8).
///
/// U counts, over all pairs (a_i, b_j), how often a_i > b_j (ties count 1/2). Without ties and
/// with small samples (n_a * n_b <= kExactLimit) the p-value comes from the exact distribution
/// of U; otherwise from the normal approximation with tie correction and continuity correction.

#include <cstddef>
#include <span>

namespace sb::results {

/// Largest n_a * n_b for which the exact null distribution is computed (O((n_a n_b)^2) work).
inline constexpr std::size_t kExactLimit = 2500;

struct MannWhitneyResult {
  double u = 0.0;        ///< U statistic of the first sample
  double p_value = 1.0;  ///< two-sided p-value; 1 when a sample is empty or all values tie
  bool exact = false;    ///< true when the exact distribution was used
};

/// Two-sided test of "a and b come from the same distribution". Empty samples give p = 1.
[[nodiscard]] MannWhitneyResult mann_whitney_u(std::span<const double> a,
                                               std::span<const double> b);

/// P(U <= u) under the null hypothesis for sample sizes m and n, no ties (exact; for tests).
[[nodiscard]] double mann_whitney_exact_cdf(std::size_t m, std::size_t n, double u);

}  // namespace sb::results
