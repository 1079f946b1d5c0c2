#include "scalebench/bootstrap.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "scalebench/stats.hpp"

namespace sb::results {
namespace {

/// splitmix64: small, fast, and the same sequence on every platform (std:: distributions are
/// not), so an interval never depends on the standard library.
struct SplitMix {
  std::uint64_t state;
  std::uint64_t next() noexcept {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, n): the modulo's bias is below n / 2^64, nothing for repeat counts.
  std::size_t below(std::size_t n) noexcept { return static_cast<std::size_t>(next() % n); }
};

std::uint64_t seed_of(std::span<const double> a, std::span<const double> b) {
  std::uint64_t h = 0xCBF29CE484222325ULL;  // FNV-1a over the bits of both samples
  const auto mix = [&h](std::span<const double> xs) {
    for (double x : xs) {
      std::uint64_t bits = 0;
      std::memcpy(&bits, &x, sizeof bits);
      for (int i = 0; i < 8; ++i) {
        h ^= (bits >> (8 * i)) & 0xFF;
        h *= 0x100000001B3ULL;
      }
    }
    h ^= 0xFF;  // separates the two samples
    h *= 0x100000001B3ULL;
  };
  mix(a);
  mix(b);
  return h;
}

/// Fastest-third mean of one resample of `sorted` (ascending): draws n indices, then sums the
/// k smallest, which are the k smallest indices since the sample is sorted.
double resample_fast_mean(const std::vector<double>& sorted, std::vector<unsigned>& hits,
                          SplitMix& rng) {
  const std::size_t n = sorted.size();
  std::fill(hits.begin(), hits.end(), 0U);
  for (std::size_t i = 0; i < n; ++i) ++hits[rng.below(n)];
  std::size_t need = fastest_third_count(n);
  double s = 0.0;
  for (std::size_t i = 0; i < n && need > 0; ++i) {
    const std::size_t take = std::min<std::size_t>(hits[i], need);
    s += static_cast<double>(take) * sorted[i];
    need -= take;
  }
  return s / static_cast<double>(fastest_third_count(n));
}

double quantile_sorted(const std::vector<double>& v, double q) {
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

}  // namespace

RatioInterval bootstrap_fast_ratio(std::span<const double> baseline,
                                   std::span<const double> current, double level,
                                   std::size_t resamples) {
  RatioInterval r;
  if (baseline.empty() || current.empty() || resamples == 0) return r;
  const double fb = fastest_third_mean(baseline);
  const double fc = fastest_third_mean(current);
  if (!(fb > 0) || !(fc > 0)) return r;
  r.ratio = fc / fb;

  std::vector<double> sb(baseline.begin(), baseline.end());
  std::vector<double> sc(current.begin(), current.end());
  std::sort(sb.begin(), sb.end());
  std::sort(sc.begin(), sc.end());
  std::vector<unsigned> hb(sb.size()), hc(sc.size());
  SplitMix rng{seed_of(baseline, current)};
  std::vector<double> logs;
  logs.reserve(resamples);
  for (std::size_t i = 0; i < resamples; ++i) {
    const double b = resample_fast_mean(sb, hb, rng);
    const double c = resample_fast_mean(sc, hc, rng);
    if (b > 0 && c > 0) logs.push_back(std::log(c / b));
  }
  if (logs.empty()) return r;
  std::sort(logs.begin(), logs.end());
  const double tail = std::clamp((1.0 - level) / 2.0, 0.0, 0.5);
  r.low = std::exp(quantile_sorted(logs, tail));
  r.high = std::exp(quantile_sorted(logs, 1.0 - tail));
  double mean = 0;
  for (double x : logs) mean += x;
  mean /= static_cast<double>(logs.size());
  double ss = 0;
  for (double x : logs) ss += (x - mean) * (x - mean);
  r.log_sd = logs.size() > 1 ? std::sqrt(ss / static_cast<double>(logs.size() - 1)) : 0.0;
  return r;
}

}  // namespace sb::results
