// /summary: order statistics, throughput, speedups vs single-cpu / single-gpu, efficiency.

#include <gtest/gtest.h>

#include <cmath>

#include "scalebench/report.hpp"
#include "scalebench/stats.hpp"
#include "synthetic_model.hpp"

namespace {

using nlohmann::json;
using sb::results::summarize;
using sb::results::test::make_case;
using sb::results::test::make_model;

double at(const json& row, const char* k) {
  return row[k].get<double>();
}

TEST(Stats, OrderStatistics) {
  const std::vector<double> x{3.0, 1.0, 100.0, 2.0, 4.0};
  EXPECT_DOUBLE_EQ(sb::median(x), 3.0);
  EXPECT_DOUBLE_EQ(sb::median(std::vector<double>{4.0, 1.0, 3.0, 2.0}), 2.5);
  EXPECT_DOUBLE_EQ(sb::min_of(x), 1.0);
  EXPECT_DOUBLE_EQ(sb::max_of(x), 100.0);
  EXPECT_DOUBLE_EQ(sb::mean(x), 22.0);
  EXPECT_NEAR(sb::stddev(std::vector<double>{2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0}),
              2.138089935299395, 1e-12);
  EXPECT_TRUE(std::isnan(sb::median({})));
  EXPECT_TRUE(std::isnan(sb::stddev(std::vector<double>{1.0})));
}

TEST(Summary, RowsStatisticsSpeedupsAndEfficiency) {
  const json s = summarize(make_model());
  ASSERT_EQ(s.size(), 6u);
  EXPECT_EQ(s[0]["case"], "subset-mean/single-cpu/chunk=500,n=2000,seed=42");
  EXPECT_EQ(s[0]["workload"], "subset-mean");
  EXPECT_EQ(s[0]["path"], "single-cpu");
  EXPECT_EQ(s[0]["workers"], 1);
  EXPECT_EQ(s[0]["status"], "ok");
  EXPECT_EQ(s[0]["repeats"], 5);
  EXPECT_DOUBLE_EQ(at(s[0], "median_s"), 2.0);
  EXPECT_DOUBLE_EQ(at(s[0], "min_s"), 1.9);
  EXPECT_DOUBLE_EQ(at(s[0], "max_s"), 2.2);
  EXPECT_NEAR(at(s[0], "stddev_s"), 0.114017542509914, 1e-12);
  EXPECT_DOUBLE_EQ(at(s[0], "throughput"), 2e6);
  EXPECT_EQ(s[0]["throughput_unit"], "draws/s");

  // speedups from throughput: 2e6, 8e6, 2e8, 4e8 draws/s
  const double vs_cpu[] = {1.0, 4.0, 100.0, 200.0};
  const double vs_gpu[] = {0.01, 0.04, 1.0, 2.0};
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(at(s[i], "speedup_vs_single_cpu"), vs_cpu[i], 1e-12 * vs_cpu[i]) << i;
    EXPECT_NEAR(at(s[i], "speedup_vs_single_gpu"), vs_gpu[i], 1e-12 * vs_gpu[i]) << i;
  }
  // efficiency: cpu 1.6e7 B/s of 2e10 B/s; 6.4e7 of 2 x 2e10; gpu 4e12 of 4e12; 8e12 of 2 x 4e12
  EXPECT_NEAR(at(s[0], "efficiency"), 8e-4, 1e-15);
  EXPECT_EQ(s[0]["ceiling"], "stream_triad");
  EXPECT_NEAR(at(s[1], "efficiency"), 1.6e-3, 1e-15);
  EXPECT_NEAR(at(s[2], "efficiency"), 1.0, 1e-12);
  EXPECT_EQ(s[2]["ceiling"], "copy_bandwidth");
  EXPECT_NEAR(at(s[3], "efficiency"), 1.0, 1e-12);

  // svd: failed, so no reference of its own; flops-bound against DGEMM 1e11 flop/s
  EXPECT_EQ(s[4]["status"], "failed");
  EXPECT_TRUE(std::isnan(at(s[4], "speedup_vs_single_cpu")));
  EXPECT_NEAR(at(s[4], "efficiency"), 0.5, 1e-12);
  EXPECT_EQ(s[4]["ceiling"], "dgemm");

  // skipped case: nothing measured
  EXPECT_EQ(s[5]["status"], "skipped");
  EXPECT_EQ(s[5]["repeats"], 0);
  for (const char* k : {"median_s", "min_s", "max_s", "stddev_s", "throughput",
                        "speedup_vs_single_cpu", "speedup_vs_single_gpu", "efficiency"})
    EXPECT_TRUE(std::isnan(at(s[5], k))) << k;
}

// A case that generates its inputs states its Philox calls: the floor is the larger of the
// bytes at the copy bandwidth and the calls at the device's Philox rate, and efficiency says
// which ceiling bounds it; without a Philox rate for the device that is unknown.
TEST(Summary, GeneratedInputsAreHeldToTheLargerFloor) {
  json m;
  m["system"]["ceilings"] =
      json::array({{{"scope", "gpu"}, {"kind", "copy_bandwidth"}, {"value", 4e12}, {"unit", "B/s"}},
                   {{"scope", "gpu"}, {"kind", "philox"}, {"value", 1e12}, {"unit", "calls/s"}},
                   {{"scope", "cpu"},
                    {"kind", "stream_triad"},
                    {"value", 2e10},
                    {"unit", "B/s"},
                    {"threads", 1}}});
  m["cases"] = json::array();
  json bytes_bound = make_case(0, "g", "gpu1", "gpu", 1, {2.0, 2.0}, 100, 4e12, 0);
  bytes_bound["work"]["philox"] = 5e11;  // 1 s of bytes, 0.5 s of Philox
  json philox_bound = make_case(1, "h", "gpu1", "gpu", 1, {2.0, 2.0}, 100, 4e11, 0);
  philox_bound["work"]["philox"] = 1.5e12;  // 0.1 s of bytes, 1.5 s of Philox
  json no_rate = make_case(2, "h", "cpu1", "cpu", 1, {2.0, 2.0}, 100, 4e11, 0);
  no_rate["work"]["philox"] = 1.5e12;
  m["cases"].push_back(bytes_bound);
  m["cases"].push_back(philox_bound);
  m["cases"].push_back(no_rate);
  const json s = summarize(m);
  EXPECT_NEAR(at(s[0], "efficiency"), 0.5, 1e-12);
  EXPECT_EQ(s[0]["ceiling"], "copy_bandwidth");
  EXPECT_NEAR(at(s[1], "efficiency"), 0.75, 1e-12);
  EXPECT_EQ(s[1]["ceiling"], "philox");
  EXPECT_EQ(s[1]["ceiling_unit"], "calls/s");
  EXPECT_TRUE(std::isnan(at(s[2], "efficiency")));
}

TEST(Summary, SpeedupNeedsTheSameParametersAndAcceptsAliases) {
  json m;
  m["cases"] = json::array();
  m["cases"].push_back(make_case(0, "w", "cpu1", "cpu", 1, {4.0, 4.0, 4.0}, 100, 0, 0));
  m["cases"].push_back(make_case(1, "w", "cpuN", "cpu", 2, {1.0, 1.0, 1.0}, 100, 0, 0));
  json other = make_case(2, "w", "multi-cpu", "cpu", 2, {1.0, 1.0, 1.0}, 100, 0, 0);
  other["params"]["n"] = "4000";
  m["cases"].push_back(other);
  const json s = summarize(m);
  EXPECT_EQ(s[0]["path"], "single-cpu");
  EXPECT_DOUBLE_EQ(at(s[1], "speedup_vs_single_cpu"), 4.0);
  EXPECT_TRUE(std::isnan(at(s[2], "speedup_vs_single_cpu")));
  // no ceilings in the model: efficiency is not applicable
  EXPECT_TRUE(std::isnan(at(s[1], "efficiency")));
  EXPECT_TRUE(std::isnan(at(s[1], "speedup_vs_single_gpu")));
}

TEST(Summary, ThroughputFallsBackToMetrics) {
  json c = make_case(0, "w", "single-cpu", "cpu", 1, {2.0}, 0, 0, 0);
  c["work"] = json::object();
  c["metrics"] = {{"throughput", 123.0}, {"throughput_unit", "rows/s"}};
  const json s = summarize(json{{"cases", json::array({c})}});
  EXPECT_DOUBLE_EQ(at(s[0], "throughput"), 123.0);
  EXPECT_EQ(s[0]["throughput_unit"], "rows/s");
}

}  // namespace
