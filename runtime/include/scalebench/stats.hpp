#pragma once
/// @file stats.hpp
/// Order statistics of repeat samples (seconds). Every function takes the samples by value or
/// span and never reorders the caller's data. Empty input gives NaN.

#include <cstddef>
#include <span>

namespace sb {

/// Median (mean of the two middle values for an even count); NaN when empty.
[[nodiscard]] double median(std::span<const double> xs);
/// Arithmetic mean; NaN when empty.
[[nodiscard]] double mean(std::span<const double> xs);
/// Sample standard deviation (n - 1 in the denominator); NaN when fewer than 2 samples.
[[nodiscard]] double stddev(std::span<const double> xs);
/// Smallest / largest sample; NaN when empty.
[[nodiscard]] double min_of(std::span<const double> xs);
[[nodiscard]] double max_of(std::span<const double> xs);

/// How many of n repeats make the "fastest third": ceil(n / 3), at least 1 (0 for n = 0).
[[nodiscard]] std::size_t fastest_third_count(std::size_t n) noexcept;
/// Mean of the fastest third of the repeats: the regression gate's statistic (docs/ci.md).
/// Interference only adds time, so the fast repeats show what the code costs; NaN when empty.
[[nodiscard]] double fastest_third_mean(std::span<const double> xs);

}  // namespace sb
