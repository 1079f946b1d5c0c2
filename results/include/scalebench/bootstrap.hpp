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
#include <vector>

namespace sb::results {

struct RatioInterval {
  double ratio = std::numeric_limits<double>::quiet_NaN();  ///< of the samples themselves
  double low = std::numeric_limits<double>::quiet_NaN();    ///< lower end of the interval
  double high = std::numeric_limits<double>::quiet_NaN();   ///< upper end of the interval
  /// Standard deviation of the bootstrap log ratios: the ratio's standard error, relative.
  double log_sd = std::numeric_limits<double>::quiet_NaN();
};

/// The standard normal quantile of probability `p` (bisection on erfc, exact to 1e-12): the
/// gate's intervals and minimum detectable effects all take it from here.
[[nodiscard]] double normal_quantile(double p);

/// Interval of fastest_third_mean(current) / fastest_third_mean(baseline) at confidence
/// `level` (0.99: the 0.5% and 99.5% quantiles of `resamples` bootstrap ratios). NaN when a
/// sample is empty or a mean is not positive.
[[nodiscard]] RatioInterval bootstrap_fast_ratio(std::span<const double> baseline,
                                                 std::span<const double> current, double level,
                                                 std::size_t resamples = 2000);

/// The same interval for an A/B run (docs/ci.md), whose repeats come in rounds: round i holds
/// a turn of each side, `baseline_rounds[i]` and `current_rounds[i]`, run one right after the
/// other. Whole rounds are resampled, both sides' turns together: repeats that shared a moment
/// of the machine (its load, a slow period) count as the one piece of evidence they are, and
/// the pairing of the two sides within a round is kept. With few rounds a bootstrap is too sure
/// of itself: the interval (and log_sd) is widened by Student's t over the normal quantile for
/// rounds - 1 degrees of freedom. NaN when there is no round or a mean is not positive. Seeded
/// from the samples, as above.
[[nodiscard]] RatioInterval bootstrap_fast_ratio_rounds(
    std::span<const std::vector<double>> baseline_rounds,
    std::span<const std::vector<double>> current_rounds, double level,
    std::size_t resamples = 2000);

}  // namespace sb::results
