#include "scalebench/repeat_rule.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sb {

double median_spread(std::vector<double> x) {
  const std::size_t n = x.size();
  if (n < 2) return std::numeric_limits<double>::quiet_NaN();
  std::sort(x.begin(), x.end());
  const double med = n % 2 == 1 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
  if (!(med > 0)) return std::numeric_limits<double>::quiet_NaN();
  // Ranks of the interval: n/2 -+ 1.96 sqrt(n)/2 (the count of samples below the median is
  // Binomial(n, 1/2)); clamped to the sample, so a small sample gives its whole range.
  const double half = 1.96 * std::sqrt(static_cast<double>(n)) / 2.0;
  const auto lo = static_cast<std::size_t>(
      std::clamp(std::floor(static_cast<double>(n) / 2.0 - half), 0.0, static_cast<double>(n - 1)));
  const auto hi = static_cast<std::size_t>(
      std::clamp(std::ceil(static_cast<double>(n) / 2.0 + half), 0.0, static_cast<double>(n - 1)));
  return (x[hi] - x[lo]) / 2.0 / med;
}

bool warm_up_more(int done, int warmup, double elapsed_s) {
  if (warmup <= 0) return false;
  return done < warmup || (elapsed_s < kMinWarmupS && done < kMaxWarmupRepeats);
}

RepeatStop repeat_stop(const RepeatRule& rule, const std::vector<double>& totals,
                       double elapsed_s) {
  RepeatStop s;
  s.spread = median_spread(totals);
  const int n = static_cast<int>(totals.size());
  if (!rule.adaptive()) {
    s.stop = n >= rule.max_repeats;
    s.reason = "count";
    return s;
  }
  if (n >= rule.max_repeats) {
    s.stop = true;
    s.reason = "max-repeats";
  } else if (n >= rule.min_repeats && std::isfinite(s.spread) && s.spread <= rule.target_spread) {
    s.stop = true;
    s.reason = "spread";
  } else if (n >= rule.min_repeats && rule.max_time_s > 0 && elapsed_s >= rule.max_time_s) {
    s.stop = true;
    s.reason = "max-time";
  }
  return s;
}

}  // namespace sb
