// A repeat's times as the scheduler folds its workers' DONE reports
// (runtime/src/repeat_timing.hpp): the phases, the runtime's own cost, and the --trace lines; and
// DONE's round trip.
#include <gtest/gtest.h>

#include <thread>

#include "message.hpp"
#include "repeat_timing.hpp"

namespace {

TEST(RepeatTiming, RuntimeIsWhatTheBusiestWorkersPhasesLeaveAndMessagesWhatItsWallLeaves) {
  sb::detail::RepeatTiming t;
  t.begin();
  sb::detail::RepeatDone a;
  a.phases = {0.001, 0.004, 0.0};  // 5 ms of phases
  a.wall = 0.006;
  sb::detail::RepeatDone b;
  b.phases = {0.002, 0.001, 0.001};  // 4 ms
  b.wall = 0.007;
  t.on_done(1, b);
  t.on_done(0, a);
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const double total = t.end();
  ASSERT_GE(total, 0.010);
  const auto r = t.record();
  EXPECT_DOUBLE_EQ(r["generate"].get<double>(), 0.002);  // phases: the maxima over the workers
  EXPECT_DOUBLE_EQ(r["compute"].get<double>(), 0.004);
  EXPECT_DOUBLE_EQ(r["communicate"].get<double>(), 0.001);
  EXPECT_DOUBLE_EQ(r["total"].get<double>(), total);
  EXPECT_NEAR(r["runtime"].get<double>(), total - 0.005, 1e-12);
  EXPECT_NEAR(r["messages"].get<double>(), total - 0.007, 1e-12);
  EXPECT_EQ(t.trace_lines("w/p/k=1", 3).find("repeat trace w/p/k=1 repeat 3: total"), 0u);
  EXPECT_FALSE(r.contains("probe_s")) << "no probe: not a GPU case";
}

TEST(RepeatTiming, TheRecordsProbeIsTheSlowestWorkers) {
  sb::detail::RepeatTiming t;
  t.begin();
  sb::detail::RepeatDone a;
  a.probe_s = 0.8e-6;
  sb::detail::RepeatDone b;
  b.probe_s = 6.5e-6;  // this worker's host ran slow as its repeat ended
  t.on_done(0, a);
  t.on_done(1, b);
  (void)t.end();
  EXPECT_DOUBLE_EQ(t.record()["probe_s"].get<double>(), 6.5e-6);
}

TEST(RepeatTiming, DoneRoundTripsThroughAMessageWithItsTrace) {
  sb::detail::WorkerRepeatTrace events(true, 0.0);
  events.mark("submit", 7);
  events.mark_task("waited", 7, 0.000211);
  events.mark("finish");
  sb::detail::RepeatDone d;
  d.phases = {0.5, 1.5, 2.5};
  d.partial = {1, 2, 3};
  d.wall = 4.5;
  d.submit_s = 0.25e-3;
  d.submits = 15;
  d.probe_s = 0.8e-6;
  d.trace = events.str();
  EXPECT_NE(d.trace.find("submit7@"), std::string::npos);
  EXPECT_NE(d.trace.find(" waited7@"), std::string::npos);
  EXPECT_NE(d.trace.find("(0.211) finish@"), std::string::npos) << "the task's own end, ms";
  EXPECT_NE(d.trace.find(" csw="), std::string::npos) << "the thread's context switches";
  EXPECT_NE(d.trace.find(" oncpu="), std::string::npos) << "the thread's time on a CPU";
  EXPECT_NE(d.trace.find(" queued="), std::string::npos) << "its time waiting for one";
  sb::detail::Writer w;
  sb::detail::put_done(w, d);
  sb::detail::Reader r(w.bytes());
  const auto back = sb::detail::get_done(r);
  EXPECT_EQ(back.phases.compute, 1.5);
  EXPECT_EQ(back.partial, d.partial);
  EXPECT_EQ(back.wall, 4.5);
  EXPECT_EQ(back.trace, d.trace);
  EXPECT_EQ(back.submit_s, 0.25e-3);
  EXPECT_EQ(back.submits, 15);
  EXPECT_EQ(back.probe_s, 0.8e-6);
  EXPECT_TRUE(sb::detail::WorkerRepeatTrace(false, 0.0).str().empty()) << "free when off";
}

}  // namespace
