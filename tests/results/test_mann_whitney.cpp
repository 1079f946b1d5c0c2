// Mann-Whitney U: exact distribution against brute-force enumeration, p-values against
// reference values (SciPy 1.10 mannwhitneyu, two-sided), ties and edge cases.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "scalebench/mann_whitney.hpp"

namespace {

using sb::results::mann_whitney_exact_cdf;
using sb::results::mann_whitney_u;

/// P(U <= u) by enumerating every way to place m labels among m + n ranks.
double brute_cdf(std::size_t m, std::size_t n, double u) {
  std::vector<int> pick(m + n, 0);
  std::fill(pick.begin(), pick.begin() + static_cast<std::ptrdiff_t>(n), 0);
  std::fill(pick.begin() + static_cast<std::ptrdiff_t>(n), pick.end(), 1);  // 1 = first sample
  std::size_t total = 0, below = 0;
  do {
    // U = number of pairs (a from sample 1, b from sample 2) with a above b in rank order
    std::size_t seen_b = 0, uu = 0;
    for (int p : pick) {
      if (p == 1) {
        uu += seen_b;
      } else {
        ++seen_b;
      }
    }
    ++total;
    if (static_cast<double>(uu) <= u) ++below;
  } while (std::next_permutation(pick.begin(), pick.end()));
  return static_cast<double>(below) / static_cast<double>(total);
}

TEST(MannWhitney, ExactDistributionMatchesEnumeration) {
  for (std::size_t m = 1; m <= 6; ++m)
    for (std::size_t n = 1; n <= 6; ++n)
      for (double u = 0; u <= static_cast<double>(m * n); u += 1)
        EXPECT_NEAR(mann_whitney_exact_cdf(m, n, u), brute_cdf(m, n, u), 1e-12)
            << m << " " << n << " " << u;
}

TEST(MannWhitney, ExactPValuesMatchReference) {
  {
    const std::vector<double> a{1.1, 2.3, 3.5, 4.2, 5.9}, b{2.0, 6.1, 7.3, 8.8, 9.4, 10.2};
    const auto r = mann_whitney_u(a, b);
    EXPECT_TRUE(r.exact);
    EXPECT_DOUBLE_EQ(r.u, 4.0);
    EXPECT_NEAR(r.p_value, 0.05194805194805195, 1e-12);
  }
  {
    const std::vector<double> a{3.2, 1.5, 4.8, 2.2, 9.1, 6.6, 7.0}, b{5.5, 8.3, 2.9, 10.4, 12.0};
    const auto r = mann_whitney_u(a, b);
    EXPECT_DOUBLE_EQ(r.u, 9.0);
    EXPECT_NEAR(r.p_value, 0.20202020202020204, 1e-12);
  }
  {  // complete separation of 5 vs 5: p = 2 / C(10, 5)
    const std::vector<double> a{1, 2, 3, 4, 5}, b{6, 7, 8, 9, 10};
    EXPECT_NEAR(mann_whitney_u(a, b).p_value, 2.0 / 252.0, 1e-15);
    EXPECT_NEAR(mann_whitney_u(b, a).p_value, 2.0 / 252.0, 1e-15);
  }
}

TEST(MannWhitney, NormalApproximationWithTiesMatchesReference) {
  const std::vector<double> a{1, 2, 2, 3, 4, 5, 5, 6}, b{2, 3, 6, 7, 8, 9, 9, 10, 11};
  const auto r = mann_whitney_u(a, b);
  EXPECT_FALSE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 11.0);
  EXPECT_NEAR(r.p_value, 0.017828745565313595, 1e-12);
}

TEST(MannWhitney, NormalApproximationForLargeSamples) {
  std::vector<double> a, b;
  for (int i = 0; i < 60; ++i) {
    a.push_back(i);
    b.push_back(i + 7.5);
  }
  const auto r = mann_whitney_u(a, b);
  EXPECT_FALSE(r.exact);  // 60 x 60 > kExactLimit
  EXPECT_DOUBLE_EQ(r.u, 1378.0);
  EXPECT_NEAR(r.p_value, 0.02694585619564296, 1e-12);
}

TEST(MannWhitney, EdgeCases) {
  const std::vector<double> same(7, 1.0);
  EXPECT_DOUBLE_EQ(mann_whitney_u(same, same).p_value, 1.0);
  EXPECT_DOUBLE_EQ(mann_whitney_u({}, same).p_value, 1.0);
  const std::vector<double> a{1, 2, 3}, b{1, 2, 3};
  EXPECT_NEAR(mann_whitney_u(a, b).p_value, 1.0, 1e-12);
}

}  // namespace
