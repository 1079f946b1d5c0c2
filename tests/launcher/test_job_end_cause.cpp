// A job's end in words (job_end_cause.hpp): the rank, host and signal from OpenMPI's and srun's
// last lines, the OOM killer's part only for a SIGKILL, and SLURM's own oom_kill report.
#include <gtest/gtest.h>
#include <signal.h>

#include <deque>
#include <string>

#include "job_end_cause.hpp"

namespace {

int exited(int code) {
  return code << 8;
}

TEST(JobEndCause, OpenMpiNamesTheRankItsHostAndTheSignal) {
  const sb::OomWatch oom;
  const std::deque<std::string> log = {
      "Primary job  terminated normally, but 1 process returned",
      "mpiexec noticed that process rank 2 with PID 0 on node n7 exited on signal 11 "
      "(Segmentation fault)."};
  EXPECT_EQ(sb::describe_job_end(exited(139), log, oom),
            "MPI job exited with status 139: rank 2 on n7 was killed by SIGSEGV (Segmentation "
            "fault)");
}

TEST(JobEndCause, SlurmsOwnOomReportNamesTheOomKiller) {
  const sb::OomWatch oom;
  const std::deque<std::string> log = {
      "slurmstepd: error: Detected 1 oom_kill event in StepId=4242.0. Some of the step tasks "
      "have been OOM Killed.",
      "srun: error: node3: task 5: Killed"};
  EXPECT_EQ(sb::describe_job_end(exited(137), log, oom),
            "MPI job exited with status 137: rank 5 on node3: Killed: killed by the OOM killer "
            "(the batch system's job step reported an oom_kill event)");
}

TEST(JobEndCause, ASignalOtherThanSigkillIsNeverBlamedOnTheOomKiller) {
  const sb::OomWatch oom;
  const std::deque<std::string> log = {"srun: error: node3: task 1: Aborted",
                                       "slurmstepd: error: Detected 1 oom_kill event"};
  const std::string d = sb::describe_job_end(exited(134), log, oom);
  EXPECT_EQ(d.find("OOM killer"), std::string::npos) << d;
  EXPECT_EQ(sb::describe_job_end(SIGTERM, {}, oom), "MPI job killed by SIGTERM");
  EXPECT_EQ(sb::signal_abbrev(9), "SIGKILL");
}

}  // namespace
