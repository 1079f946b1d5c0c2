#include "groupby/poisson.hpp"

#include <cmath>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "scalebench/error.hpp"

namespace sb::groupby {

PoissonTable make_poisson_table(double lambda) {
  SB_EXPECTS(lambda >= 1.0 && lambda <= 2000.0,
             fmt::format("Poisson table: lambda must lie in [1, 2000] (got {})", lambda));
  // Unnormalised weights around the mode, out to where they vanish at 2^-64 resolution
  // (15 standard deviations is far beyond: the tail there is below 1e-45).
  const auto mode = static_cast<std::int64_t>(lambda);
  const auto half = static_cast<std::int64_t>(std::ceil(15.0 * std::sqrt(lambda))) + 20;
  const std::int64_t k0 = mode > half ? mode - half : 0;
  const std::int64_t k1 = mode + half;
  std::vector<double> w(static_cast<std::size_t>(k1 - k0 + 1));
  w[static_cast<std::size_t>(mode - k0)] = 1.0;
  for (std::int64_t k = mode; k < k1; ++k) {
    const auto i = static_cast<std::size_t>(k - k0);
    w[i + 1] = w[i] * lambda / static_cast<double>(k + 1);
  }
  for (std::int64_t k = mode; k > k0; --k) {
    const auto i = static_cast<std::size_t>(k - k0);
    w[i - 1] = w[i] * static_cast<double>(k) / lambda;
  }
  double total = 0.0;
  for (double v : w) total += v;

  // Cumulative thresholds in 64-bit fixed point.
  constexpr std::uint64_t kTop = std::numeric_limits<std::uint64_t>::max();
  std::vector<std::uint64_t> t(w.size());
  double cum = 0.0;
  std::size_t last = w.size() - 1;
  for (std::size_t i = 0; i < w.size(); ++i) {
    cum += w[i];
    const double c = cum / total;
    if (c >= 1.0) {
      t[i] = kTop;
      last = i;
      break;
    }
    t[i] = static_cast<std::uint64_t>(std::ldexp(c, 64));  // c < 1: below 2^64, exact scaling
  }
  t[last] = kTop;  // the last value catches every u above the previous threshold
  std::size_t first = 0;
  while (first < last && t[first] == 0) ++first;  // never drawn: P(X <= k) < 2^-64

  PoissonTable table;
  const std::size_t n = last - first + 1;
  if (n > static_cast<std::size_t>(PoissonTable::kMaxEntries))
    throw Error(fmt::format("Poisson table for lambda {} needs {} entries (max {})", lambda, n,
                            PoissonTable::kMaxEntries));
  table.kmin = static_cast<std::int32_t>(k0 + static_cast<std::int64_t>(first));
  table.entries = static_cast<std::int32_t>(n);
  for (std::size_t j = 0; j < n; ++j) table.threshold[j] = t[first + j];
  std::size_t j = 0;
  for (int g = 0; g < PoissonTable::kGuideSize; ++g) {
    const std::uint64_t start = static_cast<std::uint64_t>(g) << (64 - PoissonTable::kGuideBits);
    while (j + 1 < n && table.threshold[j] <= start) ++j;
    table.guide[g] = static_cast<std::uint16_t>(j);
  }
  return table;
}

const PoissonTable& id_poisson_table() {
  static const PoissonTable table = make_poisson_table(1000.0);
  return table;
}

}  // namespace sb::groupby
