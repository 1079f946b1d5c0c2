#include "scalebench/stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace sb {
namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}  // namespace

double median(std::span<const double> xs) {
  if (xs.empty()) return kNaN;
  std::vector<double> v(xs.begin(), xs.end());
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const double upper = v[mid];
  if (v.size() % 2 == 1) return upper;
  const double lower = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return 0.5 * (lower + upper);
}

double mean(std::span<const double> xs) {
  if (xs.empty()) return kNaN;
  double s = 0.0;
  for (double x : xs) s += x;
  return s / static_cast<double>(xs.size());
}

double stddev(std::span<const double> xs) {
  if (xs.size() < 2) return kNaN;
  const double m = mean(xs);
  double ss = 0.0;
  for (double x : xs) ss += (x - m) * (x - m);
  return std::sqrt(ss / static_cast<double>(xs.size() - 1));
}

double min_of(std::span<const double> xs) {
  return xs.empty() ? kNaN : *std::min_element(xs.begin(), xs.end());
}

double max_of(std::span<const double> xs) {
  return xs.empty() ? kNaN : *std::max_element(xs.begin(), xs.end());
}

std::size_t fastest_third_count(std::size_t n) noexcept {
  return (n + 2) / 3;
}

double fastest_third_mean(std::span<const double> xs) {
  if (xs.empty()) return kNaN;
  std::vector<double> v(xs.begin(), xs.end());
  const auto k = static_cast<std::ptrdiff_t>(fastest_third_count(v.size()));
  std::nth_element(v.begin(), v.begin() + (k - 1), v.end());
  double s = 0.0;
  for (std::ptrdiff_t i = 0; i < k; ++i) s += v[static_cast<std::size_t>(i)];
  return s / static_cast<double>(k);
}

}  // namespace sb
