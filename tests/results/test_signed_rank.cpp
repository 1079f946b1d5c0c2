// The A/B gate's paired evidence (signed_rank.hpp): the signed-rank distribution, the
// Hodges-Lehmann ratio of paired rounds and its interval, whose coverage holds for any noise
// that leaves unchanged code as likely faster as slower in a round.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "scalebench/signed_rank.hpp"

namespace {

using Rounds = std::vector<std::vector<double>>;
using sb::results::kSignedRankExactLimit;
using sb::results::paired_round_ratio;
using sb::results::signed_rank_cdf;

TEST(SignedRank, ExactDistributionOfThreePairs) {
  // Ranks 1, 2, 3 each on the positive side or not: sums 0, 1, 2, 3, 3, 4, 5, 6.
  EXPECT_DOUBLE_EQ(signed_rank_cdf(3, -1), 0.0);
  EXPECT_DOUBLE_EQ(signed_rank_cdf(3, 0), 1.0 / 8);
  EXPECT_DOUBLE_EQ(signed_rank_cdf(3, 2), 3.0 / 8);
  EXPECT_DOUBLE_EQ(signed_rank_cdf(3, 3), 5.0 / 8);
  EXPECT_DOUBLE_EQ(signed_rank_cdf(3, 5), 7.0 / 8);
  EXPECT_DOUBLE_EQ(signed_rank_cdf(3, 6), 1.0);
  EXPECT_DOUBLE_EQ(signed_rank_cdf(10, 0), std::ldexp(1.0, -10));
  // Symmetric about n(n+1)/4.
  EXPECT_NEAR(signed_rank_cdf(20, 104) + signed_rank_cdf(20, 105), 1.0, 1e-12);
}

TEST(SignedRank, TheNormalApproximationTakesOverSmoothly) {
  const std::size_t n = kSignedRankExactLimit;
  const double mean = static_cast<double>(n) * (n + 1) / 4.0;
  for (const double q : {-3.0, -2.5, -1.0, 0.0, 1.0}) {
    const double sd = std::sqrt(static_cast<double>(n) * (n + 1) * (2 * n + 1) / 24.0);
    const double t = std::floor(mean + q * sd);
    EXPECT_NEAR(signed_rank_cdf(n, t), signed_rank_cdf(n + 1, t + (n + 1) / 2.0), 2e-3) << q;
  }
}

Rounds turns(const std::vector<double>& per_round, double noise, unsigned seed) {
  std::mt19937 g(seed);
  std::normal_distribution<double> d(0.0, noise);
  Rounds out;
  for (const double t : per_round) out.push_back({t * (1 + d(g)), t * (1 + d(g))});
  return out;
}

TEST(PairedRounds, EstimateAndIntervalOfAShift) {
  // Twelve rounds whose load varies by 3x from round to round; the current side 10% slower.
  std::vector<double> load;
  for (int i = 0; i < 12; ++i) load.push_back(1.0 + 2.0 * (i % 3) / 2.0);
  std::vector<double> slower;
  for (const double l : load) slower.push_back(1.1 * l);
  const auto r = paired_round_ratio(turns(load, 0.01, 1), turns(slower, 0.01, 2), 0.99);
  EXPECT_NEAR(r.ratio, 1.10, 0.02);
  EXPECT_GT(r.low, 1.0);
  EXPECT_LT(r.low, r.ratio);
  EXPECT_GT(r.high, r.ratio);
  EXPECT_GT(r.log_sd, 0.0);
}

TEST(PairedRounds, TooFewRoundsForTheLevelGiveNoInterval) {
  // 7 rounds: even all seven slower has probability 2 x 2^-7 = 1.6% by chance, over 1%.
  std::vector<double> one(7, 1.0), two(7, 2.0);
  auto r = paired_round_ratio(turns(one, 0.01, 3), turns(two, 0.01, 4), 0.99);
  EXPECT_NEAR(r.ratio, 2.0, 0.05);
  EXPECT_EQ(r.low, 0.0);
  EXPECT_TRUE(std::isinf(r.high));
  // 8 rounds reach 99.2%: the interval is the rounds' range.
  one.push_back(1.0);
  two.push_back(2.0);
  r = paired_round_ratio(turns(one, 0.01, 3), turns(two, 0.01, 4), 0.99);
  EXPECT_GT(r.low, 1.9);
  EXPECT_LT(r.high, 2.1);
  EXPECT_TRUE(std::isnan(paired_round_ratio(Rounds{}, Rounds{}, 0.99).ratio));
  EXPECT_TRUE(std::isnan(paired_round_ratio(Rounds{{1.0}}, Rounds{{0.0}}, 0.99).ratio));
}

TEST(PairedRounds, ARoundWhoseTurnLostEveryRepeatIsSkippedNotTheEvidence) {
  // An A/B run on a shared GPU: a burst of host stalls left out every repeat of one turn. The
  // other rounds still carry the change (the run said `slower +5.0%`; its report said "paired
  // rounds: none" and `noisy`, exit 5).
  std::vector<double> one(12, 1.0), slower(12, 1.05);
  Rounds b = turns(one, 0.01, 5), c = turns(slower, 0.01, 6);
  const auto whole = paired_round_ratio(b, c, 0.99);
  c[4].clear();
  b[9].clear();
  const auto gapped = paired_round_ratio(b, c, 0.99);
  ASSERT_TRUE(std::isfinite(gapped.ratio));
  EXPECT_NEAR(gapped.ratio, 1.05, 0.01);
  EXPECT_GT(gapped.low, 1.0) << "ten rounds decide at 99%";
  EXPECT_GE(gapped.high - gapped.low, whole.high - whole.low) << "fewer rounds, no narrower";
}

TEST(PairedRounds, CoverageHoldsUnderHeavyOneSidedNoise) {
  // Unchanged code on a machine whose bursts hit a turn at random (30% of turns, +20% to
  // +300%): the 99% interval excludes no change in about 1% of runs, at any number of rounds.
  std::mt19937_64 g(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::lognormal_distribution<double> amount(std::log(0.4), 1.0);
  auto turn = [&] {
    const double t = 1.0 + 0.02 * (u(g) - 0.5);
    return u(g) < 0.3 ? t * (1.0 + amount(g)) : t;
  };
  for (const int rounds : {8, 12, 30, 60}) {
    int excluded = 0;
    constexpr int kTrials = 2000;
    for (int k = 0; k < kTrials; ++k) {
      Rounds a, b;
      for (int i = 0; i < rounds; ++i) {
        a.push_back({turn(), turn()});
        b.push_back({turn(), turn()});
      }
      const auto r = paired_round_ratio(a, b, 0.99);
      excluded += r.low > 1.0 || r.high < 1.0;
    }
    EXPECT_LE(excluded, kTrials * 15 / 1000) << rounds << " rounds";
  }
}

}  // namespace
