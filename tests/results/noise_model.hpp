#pragma once
/// The interference model the regression gate is tested against (docs/ci.md, "The decision
/// rule"): a repeat's time is  base * (1 + jitter) * (1 + hit * amount)  where
///   jitter ~ Normal(0, sigma)                       (the machine's own noise, default 2%)
///   hit    ~ Bernoulli(q)                           (another process ran during the repeat)
///   amount ~ LogNormal(ln 0.2, 1)  (median +20%, 16% of hits above +54%, heavy tail)  or
///            Pareto(scale 5%, shape 1.5)                  (a tenth of hits above +23%)
/// Interference only adds time, comes in bursts (whole repeats hit, others clean) and is
/// heavy-tailed; q may differ between baseline and current (one run had company).

#include <cmath>
#include <random>
#include <vector>

namespace sb::results::test {

enum class Tail { lognormal, pareto };

struct NoiseModel {
  double jitter = 0.02;  ///< relative standard deviation of the Gaussian part
  double q = 0.0;        ///< fraction of repeats hit by interference
  Tail tail = Tail::lognormal;
};

/// n repeat times of a case whose undisturbed time is `base`.
inline std::vector<double> noisy_repeats(std::mt19937_64& rng, std::size_t n, double base,
                                         const NoiseModel& m) {
  std::normal_distribution<double> z(0.0, 1.0);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> out;
  for (std::size_t i = 0; i < n; ++i) {
    double t = base * (1.0 + m.jitter * z(rng));
    if (u(rng) < m.q) {
      const double amount = m.tail == Tail::lognormal
                                ? std::exp(std::log(0.2) + z(rng))
                                : 0.05 * std::pow(1.0 - u(rng), -1.0 / 1.5);  // Pareto, x_m 5%
      t *= 1.0 + amount;
    }
    out.push_back(t);
  }
  return out;
}

}  // namespace sb::results::test
