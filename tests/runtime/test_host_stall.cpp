// Host stalls (runtime/src/host_stall.hpp): how late a worker noticed its finished tasks, how
// slowly it submitted them, how slow the host was after its finishing step, and how a stalled
// repeat is marked and left out of the medians (case_record.hpp).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "case_record.hpp"
#include "host_stall.hpp"
#include "scalebench/workload.hpp"

namespace {

using json = nlohmann::json;

sb::TaskOutcome ended(double start, double end) {
  sb::TaskOutcome o;
  o.start = start;
  o.end = end;
  return o;
}

/// A GPU case's record of repeats `totals`, each with the late-notice stall `stall`, submits of
/// `per_task[i]` seconds a task (15 tasks) and, where given, probe `probe[i]`; then its metrics.
json gpu_case_record(const std::vector<double>& totals, double stall,
                     const std::vector<double>& per_task, const std::vector<double>& probe = {}) {
  sb::Work w;
  w.units = 100;
  w.unit = "rows";
  json rec = {{"repeats", json::array()}};
  for (std::size_t i = 0; i < totals.size(); ++i) {
    json r = {{"total", totals[i]},
              {"host_stall", stall},
              {"submit_task_s", per_task[i]},
              {"submits", 15}};
    if (i < probe.size()) r["probe_s"] = probe[i];
    rec["repeats"].push_back(r);
  }
  sb::detail::set_work_and_metrics(rec, w, totals, totals, {}, false);
  return rec;
}

TEST(HostStall, LatenessBeyondTheRepeatsBestIsTheStall) {
  sb::detail::TaskLateness l;
  // The device's clock runs 40 us behind the host's: every task is noticed 40-50 us "late".
  l.add(0.000140, ended(0.0000, 0.000100));
  l.add(0.000245, ended(0.000100, 0.000200));
  EXPECT_NEAR(l.stall(), 5e-6, 1e-12) << "an offset common to every task is no stall";
  // The third task ended at 0.3 ms but was noticed 2 ms later: its thread was away.
  l.add(0.002340, ended(0.000200, 0.000300));
  EXPECT_NEAR(l.stall(), 0.002, 1e-9);
}

TEST(HostStall, ATaskThatEndedBeforeAnEarlierOneIsNotLate) {
  sb::detail::TaskLateness l;
  // Two streams: task 1 ended at 0.1 ms, before task 0 (1.0 ms), which is noticed first.
  l.add(0.001010, ended(0.0, 0.001000));
  l.add(0.001020, ended(0.0, 0.000100));
  EXPECT_NEAR(l.stall(), 10e-6, 1e-12);
}

TEST(HostStall, TasksWithoutTheirOwnTimesSayNothing) {
  sb::detail::TaskLateness l;
  l.add(0.5, ended(0, 0));
  l.add(0.9, ended(0, 0));
  EXPECT_EQ(l.stall(), 0.0);
  l.add(1.0, ended(0, 0.2));
  EXPECT_EQ(l.stall(), 0.0) << "one timed task has nothing to compare with";
}

TEST(HostStall, AStallCountsWhenLongAndATenthOfItsRepeat) {
  using sb::detail::host_stalled;
  EXPECT_TRUE(host_stalled(2e-3, 3e-3));
  EXPECT_FALSE(host_stalled(0.2e-3, 0.8e-3)) << "below 0.3 ms";
  EXPECT_FALSE(host_stalled(2e-3, 100e-3)) << "under a tenth of a long repeat";
}

TEST(HostStall, StalledRepeatsAreMarkedAndLeftOutOfTheMedianUnlessKept) {
  sb::Work w;
  w.units = 100;
  w.unit = "rows";
  const std::vector<double> totals{1.0e-3, 3.0e-3, 1.1e-3, 1.2e-3};
  json rec = {{"repeats", json::array()}};
  for (double t : totals) rec["repeats"].push_back({{"total", t}, {"host_stall", 0.0}});
  rec["repeats"][1]["host_stall"] = 2.0e-3;
  sb::detail::set_work_and_metrics(rec, w, totals, totals, {}, false);
  EXPECT_TRUE(rec["repeats"][1].value("host_stalled", false));
  EXPECT_FALSE(rec["repeats"][0].contains("host_stalled"));
  EXPECT_DOUBLE_EQ(rec["metrics"]["median_s"].get<double>(), 1.1e-3);
  EXPECT_EQ(rec["metrics"]["host_stalled_repeats"], 1);
  EXPECT_EQ(rec["metrics"]["throttled_repeats"], 0);
  EXPECT_EQ(rec["metrics"]["left_out_repeats"], 1);
  sb::detail::set_work_and_metrics(rec, w, totals, totals, {}, true);  // --keep-throttled
  EXPECT_DOUBLE_EQ(rec["metrics"]["median_s"].get<double>(), 1.15e-3);
  EXPECT_EQ(rec["metrics"]["left_out_repeats"], 0);
}

TEST(HostStall, SlowSubmitsBeyondTheMedianAreTheirExcess) {
  using sb::detail::slow_submit_excess;
  // groupby seed on two GPUs (tools/gpu-campaign.sh trace): 12 us a task, and 110 us a task
  // while the vCPU got a fraction of its core.
  const std::vector<double> per_task{12e-6, 13e-6, 110e-6, 12e-6, 11e-6};
  const std::vector<int> submits{15, 15, 15, 16, 14};
  const auto ex = slow_submit_excess(per_task, submits);
  ASSERT_EQ(ex.size(), 5u);
  EXPECT_NEAR(ex[2], (110e-6 - 12e-6) * 15, 1e-12);
  EXPECT_NEAR(ex[1], 1e-6 * 15, 1e-12);
  EXPECT_EQ(ex[4], 0.0) << "faster than the median is no excess";
  EXPECT_EQ(slow_submit_excess({5e-3, 5e-3}, {1, 1}), (std::vector<double>{0, 0}))
      << "two repeats have no median to compare with";
  EXPECT_EQ(slow_submit_excess({0, 0, 0}, {0, 0, 0}), (std::vector<double>{0, 0, 0}))
      << "no submits: not a GPU case";
}

TEST(HostStall, ARepeatOfSlowSubmitsIsMarkedHostStalled) {
  const json rec = gpu_case_record({1.4e-3, 1.45e-3, 4.2e-3, 1.43e-3, 1.41e-3}, 0.05e-3,
                                   {12e-6, 13e-6, 110e-6, 12e-6, 11e-6});
  EXPECT_TRUE(rec["repeats"][2].value("host_stalled", false));
  EXPECT_NEAR(rec["repeats"][2]["host_stall"].get<double>(), 98e-6 * 15, 1e-12)
      << "the repeat's host_stall is the larger of late notices and slow submits";
  EXPECT_DOUBLE_EQ(rec["repeats"][0]["host_stall"].get<double>(), 0.05e-3);
  EXPECT_EQ(rec["metrics"]["host_stalled_repeats"], 1);
  EXPECT_DOUBLE_EQ(rec["metrics"]["median_s"].get<double>(), (1.41e-3 + 1.43e-3) / 2);
}

TEST(HostStall, TheProbeTimesAFixedChain) {
  const double p = sb::detail::host_speed_probe();
  EXPECT_GT(p, 0.0);
  EXPECT_LT(p, 1.0) << "512 integer steps";
}

TEST(HostStall, ASlowProbeMakesTheRepeatsExcessTheStall) {
  using sb::detail::slow_probe_excess;
  // by-key seed on two GPUs, every GPU taking part: the first repeat of a slow period, whose
  // submits were at their usual speed and whose finishing step ran slow.
  const std::vector<double> totals{1.43e-3, 1.44e-3, 2.19e-3, 1.42e-3, 1.45e-3, 1.47e-3};
  const std::vector<double> probe{0.6e-6, 0.55e-6, 3.1e-6, 0.6e-6, 0.9e-6, 0.8e-6};
  const auto ex = slow_probe_excess(probe, totals);
  ASSERT_EQ(ex.size(), 6u);
  // The fastest third of the probes: 0.55 and 0.6 us; the normal repeats' median: 1.44 ms.
  EXPECT_NEAR(ex[2], 2.19e-3 - 1.44e-3, 1e-12);
  EXPECT_EQ(ex[4], 0.0) << "a probe 1.6 times the fastest is not a slow host";
  EXPECT_EQ(ex[0], 0.0);
  // A slow probe in a repeat that did not run long costs nothing.
  EXPECT_EQ(slow_probe_excess({0.6e-6, 0.6e-6, 5e-6, 0.6e-6}, {1e-3, 1e-3, 0.9e-3, 1e-3})[2], 0.0);
  EXPECT_EQ(slow_probe_excess({5e-6, 0.6e-6}, {3e-3, 1e-3}), (std::vector<double>{0, 0}))
      << "two probes have no median to compare with";
  EXPECT_EQ(slow_probe_excess({0, 0, 0}, {3e-3, 1e-3, 1e-3}), (std::vector<double>{0, 0, 0}))
      << "no probes: not a GPU case";
}

TEST(HostStall, ASlowPeriodOverMostOfTheCaseIsStillSeen) {
  using sb::detail::slow_probe_excess;
  // svd seed on one GPU: the host ran slow through most of the case and came back at its end;
  // the median probe and the median repeat are the slow ones.
  const std::vector<double> totals{24.3e-3, 23.7e-3, 25.3e-3, 24.8e-3, 14.6e-3, 14.5e-3};
  const std::vector<double> probe{2.6e-6, 9.0e-6, 2.9e-6, 2.7e-6, 0.9e-6, 0.85e-6};
  const auto ex = slow_probe_excess(probe, totals);
  EXPECT_NEAR(ex[0], 24.3e-3 - 14.55e-3, 1e-12) << "against the repeats with a normal probe";
  EXPECT_NEAR(ex[1], 23.7e-3 - 14.55e-3, 1e-12);
  EXPECT_EQ(ex[4], 0.0);
}

TEST(HostStall, ARepeatWithASlowProbeIsMarkedHostStalled) {
  const json rec =
      gpu_case_record({1.43e-3, 1.44e-3, 2.19e-3, 1.42e-3, 1.45e-3}, 0.02e-3,
                      std::vector<double>(5, 12e-6), {0.6e-6, 0.55e-6, 3.1e-6, 0.6e-6, 0.6e-6});
  EXPECT_TRUE(rec["repeats"][2].value("host_stalled", false));
  EXPECT_NEAR(rec["repeats"][2]["host_stall"].get<double>(), 2.19e-3 - 1.435e-3, 1e-12)
      << "the excess over the median of the repeats with a normal probe";
  EXPECT_EQ(rec["metrics"]["host_stalled_repeats"], 1);
  EXPECT_DOUBLE_EQ(rec["metrics"]["median_s"].get<double>(), (1.43e-3 + 1.44e-3) / 2);
}

}  // namespace
