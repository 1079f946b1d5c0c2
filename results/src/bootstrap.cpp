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

/// The log ratios' quantiles and standard deviation into `r`.
void summarize(std::vector<double>& logs, double level, RatioInterval& r) {
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
}

/// Fastest-third mean of `pool` (reordered).
double fast_mean_of(std::vector<double>& pool) {
  if (pool.empty()) return 0.0;
  const std::size_t k = fastest_third_count(pool.size());
  std::nth_element(pool.begin(), pool.begin() + static_cast<std::ptrdiff_t>(k - 1), pool.end());
  double s = 0.0;
  for (std::size_t i = 0; i < k; ++i) s += pool[i];
  return s / static_cast<double>(k);
}

}  // namespace

/// Student's t quantile for `df` degrees of freedom from the normal one `z` (Cornish-Fisher, to
/// 1e-2 from 5 degrees of freedom on).
double t_from_z(double z, double df) {
  const double z2 = z * z;
  return z + z * (z2 + 1) / (4 * df) + z * (5 * z2 * z2 + 16 * z2 + 3) / (96 * df * df) +
         z * (3 * z2 * z2 * z2 + 19 * z2 * z2 + 17 * z2 - 15) / (384 * df * df * df);
}

double normal_quantile(double p) {
  double lo = -40, hi = 40;
  for (int i = 0; i < 200 && hi - lo > 1e-12; ++i) {
    const double mid = 0.5 * (lo + hi);
    (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

RatioInterval bootstrap_fast_ratio_rounds(std::span<const std::vector<double>> baseline_rounds,
                                          std::span<const std::vector<double>> current_rounds,
                                          double level, std::size_t resamples) {
  RatioInterval r;
  const std::size_t n = std::min(baseline_rounds.size(), current_rounds.size());
  if (n == 0 || resamples == 0) return r;
  std::vector<double> b, c;
  for (std::size_t i = 0; i < n; ++i) {
    b.insert(b.end(), baseline_rounds[i].begin(), baseline_rounds[i].end());
    c.insert(c.end(), current_rounds[i].begin(), current_rounds[i].end());
  }
  const double fb = fastest_third_mean(b);
  const double fc = fastest_third_mean(c);
  if (!(fb > 0) || !(fc > 0)) return r;
  r.ratio = fc / fb;
  SplitMix rng{seed_of(b, c) ^ 0x5DEECE66DULL};
  std::vector<double> logs;
  logs.reserve(resamples);
  std::vector<double> pb, pc;
  for (std::size_t k = 0; k < resamples; ++k) {
    pb.clear();
    pc.clear();
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t j = rng.below(n);
      pb.insert(pb.end(), baseline_rounds[j].begin(), baseline_rounds[j].end());
      pc.insert(pc.end(), current_rounds[j].begin(), current_rounds[j].end());
    }
    const double mb = fast_mean_of(pb);
    const double mc = fast_mean_of(pc);
    if (mb > 0 && mc > 0) logs.push_back(std::log(mc / mb));
  }
  if (logs.empty()) return r;
  summarize(logs, level, r);
  // A bootstrap over few clusters is too sure of itself (its spread misses the clusters'
  // variance by their count): widened as Student's t is over the normal for n - 1 degrees of
  // freedom (x1.36 at 8 rounds, x1.08 at 27).
  if (n >= 2) {
    const double z = normal_quantile(0.5 + level / 2.0);
    const double f = std::max(1.0, t_from_z(z, static_cast<double>(n - 1)) / z);
    const double mid = std::log(r.ratio);
    r.low = std::exp(mid - f * (mid - std::log(r.low)));
    r.high = std::exp(mid + f * (std::log(r.high) - mid));
    r.log_sd *= f;
  }
  return r;
}

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
  summarize(logs, level, r);
  return r;
}

}  // namespace sb::results
