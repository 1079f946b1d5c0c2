// `--repeats auto` (repeat_rule.hpp): the median's distribution-free interval and when a case
// stops taking repeats.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "scalebench/repeat_rule.hpp"

namespace {

sb::RepeatRule auto_rule(int lo, int hi, double max_time, double spread) {
  return {lo, hi, max_time, spread};
}

TEST(RepeatRule, MedianSpreadIsHalfTheIntervalOverTheMedian) {
  EXPECT_TRUE(std::isnan(sb::median_spread({})));
  EXPECT_TRUE(std::isnan(sb::median_spread({1.0})));
  // Below 6 repeats the interval is the whole range: (1.2 - 1.0) / 2 / 1.1.
  EXPECT_NEAR(sb::median_spread({1.0, 1.2}), 0.1 / 1.1, 1e-12);
  // n = 25: ranks 25/2 -+ 1.96 * 5 / 2 = 12.5 -+ 4.9 -> indices 7 and 18 of the sorted values.
  std::vector<double> x;
  for (int i = 0; i < 25; ++i) x.push_back(100.0 + i);
  EXPECT_NEAR(sb::median_spread(x), (118.0 - 107.0) / 2.0 / 112.0, 1e-12);
  // Order does not matter; a few huge outliers barely move it (one-sided interference).
  std::vector<double> y = x;
  y[0] = 1e6;
  y[1] = 5e5;
  std::reverse(y.begin(), y.end());
  EXPECT_LT(sb::median_spread(y), 0.07);
}

TEST(RepeatRule, FixedCountStopsAtTheCount) {
  const sb::RepeatRule fixed{3, 3, 0, 0};
  EXPECT_FALSE(fixed.adaptive());
  EXPECT_FALSE(sb::repeat_stop(fixed, {1, 1}, 1e9).stop);
  const auto s = sb::repeat_stop(fixed, {1, 1, 1}, 0);
  EXPECT_TRUE(s.stop);
  EXPECT_EQ(s.reason, "count");
}

TEST(RepeatRule, AutoStopsWhenTheMedianIsKnownButNotBeforeTheMinimum) {
  const auto rule = auto_rule(5, 100, 10.0, 0.01);
  EXPECT_TRUE(rule.adaptive());
  std::vector<double> x(4, 1.0);
  EXPECT_FALSE(sb::repeat_stop(rule, x, 0.1).stop);  // steady, but below --min-repeats
  x.push_back(1.0);
  const auto s = sb::repeat_stop(rule, x, 0.1);
  EXPECT_TRUE(s.stop);
  EXPECT_EQ(s.reason, "spread");
  EXPECT_DOUBLE_EQ(s.spread, 0.0);
}

TEST(RepeatRule, NoisyCasesTakeMoreRepeatsThenStopAtALimit) {
  std::mt19937_64 rng(5);
  std::lognormal_distribution<double> noise(0.0, 0.2);
  const auto rule = auto_rule(5, 40, 1e9, 0.02);
  std::vector<double> x;
  sb::RepeatStop s;
  while (!s.stop) {
    x.push_back(noise(rng));
    s = sb::repeat_stop(rule, x, 0.0);
  }
  // 20% noise needs more than the minimum to pin the median to 2%, and never more than 40.
  EXPECT_GT(x.size(), 5u);
  EXPECT_LE(x.size(), 40u);
  if (s.reason == "spread") EXPECT_LE(s.spread, 0.02);
  if (s.reason != "spread") EXPECT_EQ(s.reason, "max-repeats");

  // The time limit applies once the minimum is reached.
  const auto timed = auto_rule(5, 100, 2.0, 1e-6);
  std::vector<double> y = {1, 2, 3, 4};
  EXPECT_FALSE(sb::repeat_stop(timed, y, 50.0).stop);
  y.push_back(5);
  const auto t = sb::repeat_stop(timed, y, 2.5);
  EXPECT_TRUE(t.stop);
  EXPECT_EQ(t.reason, "max-time");
  y.resize(100, 3.0);
  EXPECT_EQ(sb::repeat_stop(timed, y, 0.0).reason, "max-repeats");
}

TEST(RepeatRule, WarmUpRunsItsCountThenUntilItHasTakenItsMinimumTime) {
  using sb::warm_up_more;
  EXPECT_FALSE(warm_up_more(0, 0, 0.0)) << "--warmup 0: none at all";
  EXPECT_TRUE(warm_up_more(2, 3, 10.0)) << "the count first, however long it took";
  EXPECT_TRUE(warm_up_more(3, 3, 0.5 * sb::kMinWarmupS)) << "then more while under the time";
  EXPECT_FALSE(warm_up_more(3, 3, sb::kMinWarmupS));
  EXPECT_FALSE(warm_up_more(sb::kMaxWarmupRepeats, 1, 0.0)) << "never more than the cap";
}

}  // namespace
