// Telemetry (issue #30 item 2): the recorder on a scripted fake source, the per-repeat summary
// and the throttle rule, the Linux CPU source and the vector probe on this machine, and the
// scheduler's combination
// of workers' telemetry into a case record (throttled flags, interference in the layout the
// regression gate reads).
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <thread>

#include "case_record.hpp"
#include "case_telemetry.hpp"
#include "kernel_threads.hpp"
#include "scalebench/clock.hpp"
#include "scalebench/interference.hpp"
#include "scalebench/repeat_telemetry.hpp"
#include "scalebench/telemetry_recorder.hpp"

namespace {

using nlohmann::json;

/// A fake GPU and CPU: every reading advances a counter; the script says what the GPU reports.
class FakeSource final : public sb::TelemetrySource {
 public:
  explicit FakeSource(bool gpu, double reasons = 0, double sm_mhz = 1980, double min_interval_s = 0)
      : gpu_(gpu), reasons_(reasons), sm_mhz_(sm_mhz), min_interval_s_(min_interval_s) {}
  void read(sb::TelemetrySample& s) noexcept override {
    const int n = ++reads;
    if (gpu_) {
      s.gpu_sm_mhz = sm_mhz_;
      s.gpu_app_sm_mhz = 1980;
      s.gpu_mem_mhz = 2619;
      s.gpu_power_w = 600 + n;
      s.gpu_power_limit_w = 700;
      s.gpu_temp_c = 50 + n % 3;
      s.gpu_reasons = reasons_;
    } else {
      s.node_busy_s = 0.5 * n;
      s.own_cpu_s = 0.25 * n;
      s.cpu_mhz = 2000 + n;
    }
  }
  [[nodiscard]] json describe() const override {
    return gpu_ ? json{{"gpu_name", "Fake GPU"}} : json{{"cpus", 4}};
  }
  [[nodiscard]] bool gpu() const override { return gpu_; }
  [[nodiscard]] double min_interval_s() const override { return min_interval_s_; }
  std::atomic<int> reads{0};

 private:
  bool gpu_;
  double reasons_, sm_mhz_, min_interval_s_;
};

std::vector<std::unique_ptr<sb::TelemetrySource>> sources(bool gpu_too, double reasons = 0,
                                                          double sm = 1980) {
  std::vector<std::unique_ptr<sb::TelemetrySource>> v;
  v.push_back(std::make_unique<FakeSource>(false));
  if (gpu_too) v.push_back(std::make_unique<FakeSource>(true, reasons, sm));
  return v;
}

TEST(TelemetryRecorder, ASourceWithAnIntervalSitsOutTheReadingsOfShortRepeats) {
  std::vector<std::unique_ptr<sb::TelemetrySource>> v;
  v.push_back(std::make_unique<FakeSource>(false));
  auto gpu = std::make_unique<FakeSource>(true, 0, 1980, 3600.0);  // once an hour at most
  FakeSource* g = gpu.get();
  v.push_back(std::move(gpu));
  sb::TelemetryRecorder rec(std::move(v), 0.0);
  rec.begin_case(true);
  for (int r = 0; r < 5; ++r) {
    rec.begin_repeat(r);
    rec.end_repeat(r);
  }
  const json t = rec.finish_case(512);
  EXPECT_EQ(g->reads.load(), 1) << "the case's first reading reads every source, then it waits";
  ASSERT_EQ(t["repeats"].size(), 5u);
  for (const auto& r : t["repeats"]) EXPECT_EQ(r["samples"], 2) << "the CPU is read at every mark";
  EXPECT_EQ(t["read_s"]["gpu"]["count"], 1);
  EXPECT_EQ(t["read_s"]["cpu"]["count"], 10);
  EXPECT_GE(t["read_s"]["cpu"]["max"].get<double>(), t["read_s"]["cpu"]["mean"].get<double>());
  rec.begin_case(true);  // a new case reads it again at once
  rec.begin_repeat(0);
  rec.end_repeat(0);
  (void)rec.finish_case(512);
  EXPECT_EQ(g->reads.load(), 2);
}

TEST(TelemetryRecorder, EveryRepeatGetsAReadingAtItsBeginAndItsEnd) {
  sb::TelemetryRecorder rec(sources(true), 0.0);  // marks only
  rec.begin_case(true);
  for (int r = 0; r < 3; ++r) {
    rec.begin_repeat(r);
    rec.end_repeat(r);  // sub-millisecond repeats still get two readings
  }
  const json t = rec.finish_case(512);
  ASSERT_EQ(t["repeats"].size(), 3u);
  for (const auto& r : t["repeats"]) {
    EXPECT_EQ(r["samples"], 2);
    EXPECT_DOUBLE_EQ(r["node_busy_s"].get<double>(), 0.5);  // one reading apart
    EXPECT_DOUBLE_EQ(r["own_cpu_s"].get<double>(), 0.25);
    EXPECT_EQ(r["gpu_clock_event_reasons"], 0);
    EXPECT_GE(r["gpu_power_w_max"].get<double>(), r["gpu_power_w_min"].get<double>());
  }
  EXPECT_EQ(t["sources"]["gpu_name"], "Fake GPU");
  EXPECT_EQ(t["series"]["t"].size(), 6u);
  EXPECT_TRUE(t["series"].contains("gpu_sm_mhz"));
}

TEST(TelemetryRecorder, ACpuCaseLeavesTheGpuAloneAndPeriodicReadingsFillLongRepeats) {
  auto v = sources(true);
  auto* gpu = dynamic_cast<FakeSource*>(v[1].get());
  sb::TelemetryRecorder rec(std::move(v), 0.002);
  rec.begin_case(false);
  rec.begin_repeat(0);
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  rec.end_repeat(0);
  const json t = rec.finish_case(8);
  EXPECT_EQ(gpu->reads, 0) << "a CPU case must not read the GPU";
  ASSERT_EQ(t["repeats"].size(), 1u);
  EXPECT_GT(t["repeats"][0]["samples"].get<int>(), 2) << "periodic readings inside the repeat";
  EXPECT_LE(t["series"]["t"].size(), 9u) << "the series is decimated to the points asked for";
  EXPECT_FALSE(t["series"].contains("gpu_sm_mhz"));
  rec.begin_case(false);  // a new case starts empty
  EXPECT_TRUE(rec.finish_case(8)["repeats"].empty());
}

TEST(RepeatTelemetry, ThrottledByReasonsOrALowClockButNotByIdleness) {
  std::vector<sb::TelemetrySample> xs(3);
  for (int i = 0; i < 3; ++i) {
    xs[i].t = i * 0.01;
    xs[i].gpu_sm_mhz = 1950;
    xs[i].gpu_app_sm_mhz = 1980;
    xs[i].gpu_reasons = 0;
  }
  EXPECT_FALSE(sb::throttle_of(sb::summarize_repeat(xs, 0, 0)).throttled);
  // An idle GPU between tasks clocks down: not throttling.
  xs[0].gpu_sm_mhz = 345;
  xs[0].gpu_reasons = static_cast<double>(sb::clock_event::kGpuIdle);
  EXPECT_FALSE(sb::throttle_of(sb::summarize_repeat(xs, 0, 0)).throttled);
  // A power cap in one reading marks the repeat.
  xs[2].gpu_reasons = static_cast<double>(sb::clock_event::kSwPowerCap);
  auto th = sb::throttle_of(sb::summarize_repeat(xs, 0, 0));
  EXPECT_TRUE(th.throttled);
  EXPECT_EQ(th.reason, "power cap");
  // A working SM clock under 90% of the application clock marks it too.
  xs[2].gpu_reasons = 0;
  xs[1].gpu_sm_mhz = xs[2].gpu_sm_mhz = 1410;
  th = sb::throttle_of(sb::summarize_repeat(xs, 0, 0));
  EXPECT_TRUE(th.throttled);
  EXPECT_NE(th.reason.find("SM clock 1410 MHz"), std::string::npos) << th.reason;
  // A repeat without GPU readings is never throttled.
  std::vector<sb::TelemetrySample> cpu(2);
  cpu[0].t = 0;
  cpu[1].t = 1;
  EXPECT_FALSE(sb::throttle_of(sb::summarize_repeat(cpu, 0, 0)).throttled);
  // The JSON form reads back.
  const auto r = sb::summarize_repeat(xs, 4, 0);
  const auto back = sb::repeat_telemetry_from_json(sb::to_json(r));
  EXPECT_EQ(back.repeat, 4);
  EXPECT_DOUBLE_EQ(back.gpu_sm_mhz.median, r.gpu_sm_mhz.median);
  EXPECT_EQ(back.gpu_reasons, r.gpu_reasons);
}

TEST(CpuTelemetry, ReadsThisMachine) {
  auto src = sb::make_cpu_telemetry();
  ASSERT_TRUE(src);
  EXPECT_GE(src->describe().value("cpus", 0), 1);
  sb::TelemetrySample a, b;
  src->read(a);
  const double c0 = sb::process_cpu_s();
  volatile double x = 0;
  while (sb::process_cpu_s() - c0 < 0.05) x = x + 1;  // 50 ms of this process's CPU time
  src->read(b);
  ASSERT_TRUE(std::isfinite(a.node_busy_s));
  ASSERT_TRUE(std::isfinite(a.own_cpu_s));
  EXPECT_GE(b.node_busy_s, a.node_busy_s);
  EXPECT_GE(b.own_cpu_s - a.own_cpu_s, 0.05);
  if (std::isfinite(a.cpu_mhz)) {
    EXPECT_GT(a.cpu_mhz, 100);  // VMs may give none
  }
}

TEST(VectorTelemetry, ProbesThisCpuInCpuCasesOnly) {
  auto src = sb::make_vector_telemetry();
  ASSERT_TRUE(src);
  EXPECT_EQ(src->name(), "vector");
  EXPECT_FALSE(src->gpu());
  EXPECT_TRUE(src->cpu_cases_only()) << "its time would be the GPU worker's host time";
  sb::TelemetrySample s;
  src->read(s);
  ASSERT_TRUE(std::isfinite(s.vector_probe_s));
  EXPECT_GT(s.vector_probe_s, 0);
  EXPECT_LT(s.vector_probe_s, 1.0) << "a fixed batch of 65536 vector multiply-adds";

  // In the recorder: every reading of a CPU case probes; a GPU case's readings do not.
  std::vector<std::unique_ptr<sb::TelemetrySource>> v;
  v.push_back(sb::make_vector_telemetry());
  sb::TelemetryRecorder rec(std::move(v), 0.0);
  rec.begin_case(false);
  rec.begin_repeat(0);
  rec.end_repeat(0);
  json t = rec.finish_case(8);
  ASSERT_EQ(t["repeats"].size(), 1u);
  EXPECT_GT(t["repeats"][0]["vector_probe_s"].get<double>(), 0);
  EXPECT_EQ(t["read_s"]["vector"]["count"], 2);
  rec.begin_case(true);
  rec.begin_repeat(0);
  rec.end_repeat(0);
  t = rec.finish_case(8);
  ASSERT_EQ(t["repeats"].size(), 1u);
  EXPECT_TRUE(t["repeats"][0]["vector_probe_s"].is_null());
  EXPECT_FALSE(t["read_s"].contains("vector"));
}

TEST(RepeatTelemetry, TheVectorProbeIsTheRepeatsFastest) {
  std::vector<sb::TelemetrySample> xs(3);
  for (int i = 0; i < 3; ++i) xs[i].t = i * 0.01;
  xs[0].vector_probe_s = 12e-6;  // preempted
  xs[1].vector_probe_s = 9e-6;
  xs[2].vector_probe_s = 9.5e-6;
  const auto r = sb::summarize_repeat(xs, 0, 0);
  EXPECT_DOUBLE_EQ(r.vector_probe_s, 9e-6);
  EXPECT_DOUBLE_EQ(sb::repeat_telemetry_from_json(sb::to_json(r)).vector_probe_s, 9e-6);
}

TEST(CaseTelemetry, InterferenceIsOthersShareOfTheNodeAndRepeatsAreThrottledByAnyWorker) {
  auto worker = [](int rank, double busy, double own, double reasons) {
    json reps = json::array();
    for (int r = 0; r < 4; ++r) {
      sb::RepeatTelemetry t;
      t.repeat = r;
      t.samples = 2;
      t.t_begin = r;
      t.t_end = r + 1;
      t.wall_s = 1.0;
      t.node_busy_s = busy;
      t.own_cpu_s = own;
      t.cgroup_throttled_s = 0.1;
      t.cpu_mhz = {2000, 2100, 2200};
      t.vector_probe_s = (rank == 0 ? 9e-6 : 10e-6) * (r == 3 ? 2 : 1);
      t.gpu_sm_mhz = {1980, 1980, 1980};
      t.gpu_app_sm_mhz = 1980;
      t.gpu_reasons_known = true;
      t.gpu_reasons = r == 2 ? static_cast<std::uint64_t>(reasons) : 0;
      reps.push_back(sb::to_json(t));
    }
    return sb::detail::WorkerTelemetry{
        rank, "node1", rank,
        json{{"period_s", 0.02},
             {"cpus", 4},
             {"repeats", reps},
             {"series", {{"t", {0.0, 1.0}}, {"repeat", {0, 0}}, {"cpu_mhz", {2000.0, nullptr}}}}}};
  };
  // Four CPUs, one second per repeat; the node was busy 3.5 CPU-seconds, the two workers used
  // 1 each and the scheduler 0.5: others took 1 CPU-second of 4, a quarter.
  const std::vector<sb::detail::WorkerTelemetry> ws{worker(0, 3.5, 1.0, 0),
                                                    worker(1, 3.5, 1.0, 0x40)};
  const sb::detail::SchedulerCpu sched{"node1", {0.5, 0.5, 0.5, 0.5}};
  const auto t = sb::detail::combine_telemetry(ws, sched, 4);
  EXPECT_EQ(t.throttled, (std::vector<bool>{false, false, true, false}));
  EXPECT_NE(t.reasons[2].find("GPU 1: hardware thermal slowdown"), std::string::npos)
      << t.reasons[2];
  EXPECT_NEAR(t.interference["other_cpu_fraction"].get<double>(), 0.25, 1e-12);
  EXPECT_NEAR(t.interference["cgroup_throttled_s"].get<double>(), 0.4, 1e-12);
  EXPECT_DOUBLE_EQ(t.interference["cpu_mhz"]["median"].get<double>(), 2100);
  // The slowest worker's probe per repeat (10, 10, 10, 20 us), then their median.
  EXPECT_DOUBLE_EQ(t.interference["vector_probe_s"].get<double>(), 10e-6);
  EXPECT_EQ(t.telemetry["repeats"].size(), 8u);  // per repeat and worker
  EXPECT_EQ(t.telemetry["series"]["worker"], json({0, 0, 1, 1}));

  json rec = {{"repeats", json::array()}};
  for (int r = 0; r < 4; ++r) rec["repeats"].push_back({{"total", 1.0 + r}});
  sb::detail::add_telemetry(rec, t);
  EXPECT_TRUE(rec["repeats"][2]["throttled"].get<bool>());
  // The regression gate reads it as it is written (results/include/scalebench/interference.hpp).
  const auto in = sb::results::read_interference(rec, 10.0);
  EXPECT_TRUE(in.recorded);
  EXPECT_NEAR(in.other_cpu_fraction, 0.25, 1e-12);
  EXPECT_DOUBLE_EQ(in.cpu_mhz, 2100);
  EXPECT_NEAR(in.throttled_share, 0.04, 1e-12);
  EXPECT_DOUBLE_EQ(in.vector_probe_s, 10e-6);
}

/// Timed repeat `r` of `wall` seconds, back to back from 0, read at its begin and end.
sb::RepeatTelemetry timed_repeat(int r, double wall) {
  sb::RepeatTelemetry t;
  t.repeat = r;
  t.samples = 2;
  t.t_begin = r * wall;
  t.t_end = (r + 1) * wall;
  t.wall_s = wall;
  return t;
}

TEST(CaseTelemetry, ShortRepeatsOnAQuietNodeAreNotBusyForTheClockTicks) {
  // /proc/stat counts the node's busy time in 10 ms ticks: 100 repeats of 2 ms on a quiet
  // 16-CPU node, the worker busy all the while, see a tick in every fifth repeat and none in
  // the others. The node's total equals the job's own: nobody else took anything.
  json reps = json::array();
  for (int r = 0; r < 100; ++r) {
    sb::RepeatTelemetry t = timed_repeat(r, 0.002);
    t.node_busy_s = r % 5 == 0 ? 0.01 : 0.0;
    t.own_cpu_s = 0.002;
    reps.push_back(sb::to_json(t));
  }
  const std::vector<sb::detail::WorkerTelemetry> ws{sb::detail::WorkerTelemetry{
      0, "node1", 0, json{{"period_s", 0.02}, {"cpus", 16}, {"repeats", reps}}}};
  const sb::detail::SchedulerCpu sched{"node1", std::vector<double>(100, 0.0)};
  const auto t = sb::detail::combine_telemetry(ws, sched, 100);
  EXPECT_NEAR(t.interference["other_cpu_fraction"].get<double>(), 0.0, 1e-12)
      << t.interference.dump();
}

TEST(CaseTelemetry, InterruptsAndKernelThreadsAreNotOtherProcesses) {
  // Two CPUs, 10 repeats of 0.1 s: the node busy 0.16 CPU-seconds a repeat, the worker 0.1. Of
  // the 0.06 left, interrupts took 0.01 and a writeback flusher (a kernel thread) 0.4 of a CPU
  // over the case's 2 s from begin to end, 0.04 a repeat: others took 0.01 of 0.2, 5%.
  auto worker = [](int rank, bool with_kernel) {
    json reps = json::array();
    for (int r = 0; r < 10; ++r) {
      sb::RepeatTelemetry t = timed_repeat(r, 0.1);
      t.node_busy_s = 0.16;
      t.node_irq_s = 0.01;
      t.own_cpu_s = rank == 0 ? 0.1 : 0.0;
      reps.push_back(sb::to_json(t));
    }
    json data = {{"period_s", 0.02}, {"cpus", 2}, {"repeats", reps}};
    if (with_kernel)
      data["summaries"] = {
          {"cpu", {{"kernel_threads_cpu_s", 0.8}, {"kernel_threads_wall_s", 2.0}}}};
    return sb::detail::WorkerTelemetry{rank, "node1", -1, data};
  };
  const sb::detail::SchedulerCpu sched{"node1", std::vector<double>(10, 0.0)};
  auto fraction = [&](std::vector<sb::detail::WorkerTelemetry> ws) {
    return sb::detail::combine_telemetry(ws, sched, 10)
        .interference["other_cpu_fraction"]
        .get<double>();
  };
  EXPECT_NEAR(fraction({worker(0, true)}), 0.05, 1e-12);
  // Without the kernel threads' figure (a report of an older worker) only interrupts go.
  EXPECT_NEAR(fraction({worker(0, false)}), 0.25, 1e-12);
  // Two workers on the node read the same kernel threads: their time goes once.
  EXPECT_NEAR(fraction({worker(0, true), worker(1, true)}), 0.05, 1e-12);
}

TEST(KernelThreads, TheNodesKernelThreadsAndTheirTime) {
  // pid 2 is kthreadd, the parent of every kernel thread, where /proc is the host's.
  std::ifstream kthreadd("/proc/2/stat");
  std::string text((std::istreambuf_iterator<char>(kthreadd)), std::istreambuf_iterator<char>());
  if (text.find("(kthreadd)") == std::string::npos)
    GTEST_SKIP() << "this /proc shows no kernel threads (a container's own process namespace)";
  std::set<int> cpus;
  for (int c = 0; c < static_cast<int>(std::thread::hardware_concurrency()); ++c) cpus.insert(c);
  const auto before = sb::detail::read_kernel_threads(cpus);
  EXPECT_TRUE(before.contains(2)) << "kthreadd may run on any CPU";
  EXPECT_FALSE(before.contains(static_cast<int>(::getpid()))) << "a user process is not one";
  for (const auto& [pid, t] : before) EXPECT_GE(t, 0.0) << pid;
  const auto after = sb::detail::read_kernel_threads(cpus);
  EXPECT_TRUE(after.contains(2)) << "read again, the same threads";
  // A thread seen only later counts whole; one that ended is lost, never negative.
  EXPECT_DOUBLE_EQ(sb::detail::kernel_threads_cpu_since({{7, 1.0}}, {{7, 1.5}, {9, 0.25}}), 0.75);
  EXPECT_DOUBLE_EQ(sb::detail::kernel_threads_cpu_since({{7, 1.0}, {8, 3.0}}, {{7, 1.0}}), 0.0);

  // The CPU source reports them over a case.
  auto src = sb::make_cpu_telemetry();
  src->begin_case(false);
  const json sum = src->case_summary();
  ASSERT_TRUE(sum.is_object()) << sum.dump();
  EXPECT_GE(sum["kernel_threads_cpu_s"].get<double>(), 0.0);
  EXPECT_GE(sum["kernel_threads_wall_s"].get<double>(), 0.0);
}

TEST(CaseRecord, ThrottledRepeatsAreLeftOutOfTheMedianUnlessKeptOrAllThrottled) {
  sb::Work w;
  w.units = 100;
  w.unit = "draws";
  const std::vector<double> totals{1.0, 2.0, 1.1, 3.0, 1.2};
  const std::vector<bool> thr{false, true, false, true, false};
  json rec;
  sb::detail::set_work_and_metrics(rec, w, totals, totals, thr, false);
  EXPECT_DOUBLE_EQ(rec["metrics"]["median_s"].get<double>(), 1.1);
  EXPECT_EQ(rec["metrics"]["throttled_repeats"], 2);
  EXPECT_EQ(rec["metrics"]["left_out_repeats"], 2);
  sb::detail::set_work_and_metrics(rec, w, totals, totals, thr, true);  // --keep-throttled
  EXPECT_DOUBLE_EQ(rec["metrics"]["median_s"].get<double>(), 1.2);
  EXPECT_EQ(rec["metrics"]["left_out_repeats"], 0);
  sb::detail::set_work_and_metrics(rec, w, totals, totals, std::vector<bool>(5, true), false);
  EXPECT_DOUBLE_EQ(rec["metrics"]["median_s"].get<double>(), 1.2) << "all throttled: all count";
  EXPECT_EQ(rec["metrics"]["throttled_repeats"], 5);
}

}  // namespace
