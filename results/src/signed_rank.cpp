#include "scalebench/signed_rank.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "scalebench/stats.hpp"

namespace sb::results {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// P(T = t) for t = 0 .. n(n+1)/2: each rank k joins the positive side with probability 1/2.
std::vector<double> signed_rank_pmf(std::size_t n) {
  const std::size_t top = n * (n + 1) / 2;
  std::vector<double> p(top + 1, 0.0);
  p[0] = 1.0;
  std::size_t reach = 0;
  for (std::size_t k = 1; k <= n; ++k) {
    reach += k;
    for (std::size_t t = reach; t >= k; --t) p[t] = 0.5 * (p[t] + p[t - k]);
    for (std::size_t t = std::min(k, reach + 1); t-- > 0;) p[t] *= 0.5;
  }
  return p;
}

}  // namespace

double signed_rank_cdf(std::size_t n, double t) {
  if (t < 0) return 0.0;
  const double top = static_cast<double>(n) * static_cast<double>(n + 1) / 2.0;
  if (t >= top) return 1.0;
  if (n <= kSignedRankExactLimit) {
    const std::vector<double> p = signed_rank_pmf(n);
    double s = 0.0;
    for (std::size_t i = 0; i <= static_cast<std::size_t>(std::floor(t)); ++i) s += p[i];
    return std::min(1.0, s);
  }
  const double nn = static_cast<double>(n);
  const double mean = nn * (nn + 1) / 4.0;
  const double sd = std::sqrt(nn * (nn + 1) * (2 * nn + 1) / 24.0);
  return 0.5 * std::erfc(-((std::floor(t) + 0.5 - mean) / sd) / std::sqrt(2.0));
}

RatioInterval paired_round_ratio(std::span<const std::vector<double>> baseline_rounds,
                                 std::span<const std::vector<double>> current_rounds,
                                 double level) {
  RatioInterval r;
  const std::size_t rounds = std::min(baseline_rounds.size(), current_rounds.size());
  std::vector<double> d;
  d.reserve(rounds);
  for (std::size_t i = 0; i < rounds; ++i) {
    // A turn whose repeats were all left out (throttled, host-stalled) pairs with nothing: its
    // round is no evidence either way, and the other rounds still are (docs/ci.md).
    const double b = fastest_third_mean(baseline_rounds[i]);
    const double c = fastest_third_mean(current_rounds[i]);
    if (b > 0 && c > 0) d.push_back(std::log(c / b));
  }
  const std::size_t n = d.size();
  if (n == 0) return r;
  std::vector<double> walsh;
  walsh.reserve(n * (n + 1) / 2);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i; j < n; ++j) walsh.push_back(0.5 * (d[i] + d[j]));
  std::sort(walsh.begin(), walsh.end());
  const std::size_t w = walsh.size();
  const double mid = w % 2 == 1 ? walsh[w / 2] : 0.5 * (walsh[w / 2 - 1] + walsh[w / 2]);
  r.ratio = std::exp(mid);
  // The interval [W_(c), W_(w+1-c)] (1-based) with c the largest count whose P(T <= c-1) stays
  // within the tail: it covers the true shift with probability >= level.
  const double tail = std::clamp((1.0 - level) / 2.0, 0.0, 0.5);
  std::size_t c = 0;
  if (n <= kSignedRankExactLimit) {
    const std::vector<double> p = signed_rank_pmf(n);
    double cdf = 0.0;
    while (c < p.size() && cdf + p[c] <= tail) cdf += p[c++];
  } else {
    std::size_t lo = 0, hi = w / 2 + 1;  // the largest c with cdf(c - 1) <= tail
    while (lo + 1 < hi) {
      const std::size_t m = (lo + hi) / 2;
      (signed_rank_cdf(n, static_cast<double>(m) - 1.0) <= tail ? lo : hi) = m;
    }
    c = lo;
  }
  c = std::min(c, (w + 1) / 2);
  if (c == 0) {
    r.low = 0.0;
    r.high = kInf;
    r.log_sd = kInf;
    return r;
  }
  r.low = std::exp(walsh[c - 1]);
  r.high = std::exp(walsh[w - c]);
  const double z = normal_quantile(0.5 + level / 2.0);
  r.log_sd = z > 0 ? (walsh[w - c] - walsh[c - 1]) / (2.0 * z) : kInf;
  return r;
}

}  // namespace sb::results
