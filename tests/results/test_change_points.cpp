// Change-point detection (change_points.hpp) on clean and noisy series with fixed seeds: the
// error rates its header states are checked here.

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "scalebench/change_points.hpp"

namespace {

using sb::results::detect_change_points;

std::vector<double> series(std::mt19937_64& rng, std::size_t n, double sigma, std::size_t step_at,
                           double step) {
  std::normal_distribution<double> z(0.0, 1.0);
  std::vector<double> v;
  for (std::size_t i = 0; i < n; ++i)
    v.push_back(std::exp(sigma * z(rng)) * (i >= step_at ? 1.0 + step : 1.0));
  return v;
}

TEST(ChangePoints, FindsAStepAndItsSize) {
  const std::vector<double> v{1.0, 1.01, 0.99, 1.0, 1.5, 1.49, 1.51};
  const auto s = detect_change_points(v);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].index, 4u);
  EXPECT_DOUBLE_EQ(s[0].before, 1.0);
  EXPECT_DOUBLE_EQ(s[0].after, 1.5);
  EXPECT_NEAR(s[0].change, 0.5, 1e-12);
}

TEST(ChangePoints, FindsAStepUpAndOneDown) {
  std::vector<double> v;
  for (int i = 0; i < 8; ++i) v.push_back(1.0 + 0.003 * (i % 3));
  for (int i = 0; i < 8; ++i) v.push_back(1.2 + 0.003 * (i % 3));
  for (int i = 0; i < 8; ++i) v.push_back(0.9 + 0.003 * (i % 3));
  const auto s = detect_change_points(v);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].index, 8u);
  EXPECT_GT(s[0].change, 0.15);
  EXPECT_EQ(s[1].index, 16u);
  EXPECT_LT(s[1].change, -0.2);
}

TEST(ChangePoints, OneOddRunIsNotAStep) {
  std::vector<double> v(12, 1.0);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] += 0.004 * static_cast<double>(i % 4);
  v[6] = 1.6;   // one run on a busy machine
  v[11] = 1.4;  // the latest run alone cannot be told from an outlier
  EXPECT_TRUE(detect_change_points(v).empty());
}

TEST(ChangePoints, StepsUnderTheThresholdAreMerged) {
  // Eight real runs (CI, tests/gate/gate.sh history): a 2x step, then a 1.3% shift between two
  // pairs of runs whose noise estimate (0.3%) is far below the machine's run-to-run noise.
  const std::vector<double> v{50.34, 49.72, 49.69, 49.77, 97.98, 97.69, 99.09, 99.05};
  sb::results::ChangePointOptions none;
  none.min_change = 0.0;
  ASSERT_EQ(detect_change_points(v, none).size(), 2u);
  const auto s = detect_change_points(v);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].index, 4u);
  EXPECT_NEAR(s[0].change, 98.515 / 49.745 - 1.0, 1e-9);  // medians of the two levels
}

TEST(ChangePoints, ASmallStepIsShownWithALowerThreshold) {
  std::vector<double> v;
  for (int i = 0; i < 10; ++i) v.push_back(1.0 + 0.001 * (i % 3));
  for (int i = 0; i < 10; ++i) v.push_back(1.03 + 0.001 * (i % 3));
  EXPECT_TRUE(detect_change_points(v).empty());
  sb::results::ChangePointOptions two_percent;
  two_percent.min_change = 0.02;
  const auto s = detect_change_points(v, two_percent);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].index, 10u);
  EXPECT_NEAR(s[0].change, 0.03, 1e-3);
}

TEST(ChangePoints, ShortOrBadSeriesGiveNothing) {
  EXPECT_TRUE(detect_change_points(std::vector<double>{1.0, 2.0, 2.0}).empty());
  EXPECT_TRUE(detect_change_points(std::vector<double>{}).empty());
  EXPECT_TRUE(detect_change_points(std::vector<double>{1, 1, 2, 2, -1, 2}).empty());
  // four runs are enough for a clear step
  ASSERT_EQ(detect_change_points(std::vector<double>{1.0, 1.0, 2.0, 2.0}).size(), 1u);
}

TEST(ChangePoints, NoStepMeansRarelyAFalseOne) {
  std::mt19937_64 rng(31);
  int false_steps = 0;
  for (int t = 0; t < 1000; ++t)
    false_steps += detect_change_points(series(rng, 30, 0.02, 30, 0.0)).empty() ? 0 : 1;
  std::printf("30 runs, 2%% noise, no step: %.1f%% with a false step\n", false_steps / 10.0);
  EXPECT_LT(false_steps, 10);
}

TEST(ChangePoints, AnEightPercentStepIsPlacedOnItsRun) {
  std::mt19937_64 rng(32);
  int exact = 0;
  for (int t = 0; t < 1000; ++t) {
    const auto s = detect_change_points(series(rng, 30, 0.02, 20, 0.08));
    exact += s.size() == 1 && s[0].index == 20 ? 1 : 0;
  }
  std::printf("30 runs, 2%% noise, +8%% from run 21: %.1f%% found on that run alone\n",
              exact / 10.0);
  EXPECT_GT(exact, 900);
}

}  // namespace
