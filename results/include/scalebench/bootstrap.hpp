#pragma once
/// @file bootstrap.hpp
/// Percentile bootstrap interval of the ratio fastest_third_mean(current) /
/// fastest_third_mean(baseline) (stats.hpp), the regression gate's evidence (docs/ci.md).
///
/// Each side is resampled with replacement on its own; the interval is taken from the
/// quantiles of the log ratio. The generator is seeded from the samples themselves, so the same
/// two samples always give the same interval (a CI gate must be reproducible).

#include <cstddef>
#include <limits>
#include <span>

namespace sb::results {

struct RatioInterval {
  double ratio = std::numeric_limits<double>::quiet_NaN();  ///< of the samples themselves
  double low = std::numeric_limits<double>::quiet_NaN();    ///< lower end of the interval
  double high = std::numeric_limits<double>::quiet_NaN();   ///< upper end of the interval
  /// Standard deviation of the bootstrap log ratios: the ratio's standard error, relative.
  double log_sd = std::numeric_limits<double>::quiet_NaN();
};

/// Interval of fastest_third_mean(current) / fastest_third_mean(baseline) at confidence
/// `level` (0.99: the 0.5% and 99.5% quantiles of `resamples` bootstrap ratios). NaN when a
/// sample is empty or a mean is not positive.
[[nodiscard]] RatioInterval bootstrap_fast_ratio(std::span<const double> baseline,
                                                 std::span<const double> current, double level,
                                                 std::size_t resamples = 2000);

}  // namespace sb::results
