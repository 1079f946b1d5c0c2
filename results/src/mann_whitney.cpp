#include "scalebench/mann_whitney.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace sb::results {
namespace {

/// Null distribution of U for sizes (m, n): probabilities of U = 0..m*n, from the recurrence
/// p(i, j, u) = i/(i+j) p(i-1, j, u-j) + j/(i+j) p(i, j-1, u), which stays positive (stable).
std::vector<double> exact_distribution(std::size_t m, std::size_t n) {
  // row[j] holds the distribution for (i, j); prev for (i-1, j).
  std::vector<std::vector<double>> prev(n + 1), row(n + 1);
  for (std::size_t j = 0; j <= n; ++j) prev[j] = {1.0};  // i = 0: U = 0 surely
  for (std::size_t i = 1; i <= m; ++i) {
    row[0] = {1.0};  // j = 0: U = 0 surely
    for (std::size_t j = 1; j <= n; ++j) {
      std::vector<double> d(i * j + 1, 0.0);
      const double wa = static_cast<double>(i) / static_cast<double>(i + j);
      const double wb = static_cast<double>(j) / static_cast<double>(i + j);
      // the largest value is in the first sample: it beats all j of the second
      for (std::size_t u = 0; u < prev[j].size(); ++u) d[u + j] += wa * prev[j][u];
      // the largest value is in the second sample: it adds nothing to U
      for (std::size_t u = 0; u < row[j - 1].size(); ++u) d[u] += wb * row[j - 1][u];
      row[j] = std::move(d);
    }
    std::swap(prev, row);
  }
  return prev[n];
}

double normal_sf(double z) {
  return 0.5 * std::erfc(z / std::sqrt(2.0));
}

}  // namespace

double mann_whitney_exact_cdf(std::size_t m, std::size_t n, double u) {
  const std::vector<double> d = exact_distribution(m, n);
  double c = 0.0;
  for (std::size_t k = 0; k < d.size() && static_cast<double>(k) <= u + 1e-9; ++k) c += d[k];
  return std::min(1.0, c);
}

MannWhitneyResult mann_whitney_u(std::span<const double> a, std::span<const double> b) {
  MannWhitneyResult r;
  const std::size_t m = a.size();
  const std::size_t n = b.size();
  if (m == 0 || n == 0) return r;

  // Midranks of the pooled sample.
  std::vector<std::pair<double, int>> pooled;
  pooled.reserve(m + n);
  for (double x : a) pooled.emplace_back(x, 0);
  for (double x : b) pooled.emplace_back(x, 1);
  std::sort(pooled.begin(), pooled.end(),
            [](const auto& l, const auto& rr) { return l.first < rr.first; });
  double rank_sum_a = 0.0;
  double tie_term = 0.0;  // sum of t^3 - t over tie groups
  bool ties = false;
  for (std::size_t i = 0; i < pooled.size();) {
    std::size_t j = i;
    while (j < pooled.size() && pooled[j].first == pooled[i].first) ++j;
    const double t = static_cast<double>(j - i);
    const double midrank = 0.5 * static_cast<double>(i + 1 + j);  // ranks i+1 .. j
    for (std::size_t k = i; k < j; ++k)
      if (pooled[k].second == 0) rank_sum_a += midrank;
    if (j - i > 1) {
      ties = true;
      tie_term += t * t * t - t;
    }
    i = j;
  }
  const double dm = static_cast<double>(m);
  const double dn = static_cast<double>(n);
  r.u = rank_sum_a - dm * (dm + 1.0) / 2.0;
  const double mu = dm * dn / 2.0;

  if (!ties && m * n <= kExactLimit) {
    const std::vector<double> d = exact_distribution(m, n);
    // U is an integer without ties; the distribution is symmetric about mu.
    const auto uu = static_cast<std::size_t>(std::llround(r.u));
    const std::size_t lo = std::min(uu, m * n - uu);
    double tail = 0.0;
    for (std::size_t k = 0; k <= lo; ++k) tail += d[k];
    r.p_value = std::min(1.0, 2.0 * tail);
    r.exact = true;
    return r;
  }

  const double nn = dm + dn;
  const double var = dm * dn / 12.0 * ((nn + 1.0) - tie_term / (nn * (nn - 1.0)));
  if (var <= 0.0) {  // every value ties: no evidence of a difference
    r.p_value = 1.0;
    return r;
  }
  const double z = std::max(0.0, std::abs(r.u - mu) - 0.5) / std::sqrt(var);
  r.p_value = std::min(1.0, 2.0 * normal_sf(z));
  return r;
}

}  // namespace sb::results
