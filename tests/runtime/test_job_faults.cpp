// Faults inside the MPI job, done for real through the binaries and real mpiexec (issue #47):
// a worker killed by the OOM killer of a memory cgroup while its case sets up fails that case
// alone, named, and the rest run in a fresh job; a start-up that hangs (ulimit -n) ends with
// exit 3 naming what hung; a launcher killed during start-up leaves no mpiexec and no rank; a
// stopped worker or scheduler is named with what it was doing.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "../support/launcher_run.hpp"
#include "scalebench/report.hpp"

namespace fs = std::filesystem;

namespace {

using namespace sb::test_support;

const std::string kQuick = "--warmup 0 --no-ceilings";

std::string ranks_in(const fs::path& dir) {
  return fmt::format("scalebench-rank --plan {}/", dir.string());
}

/// Nothing of a run in `dir` is left: no rank, no mpiexec, no work folder, no temporary file.
void expect_nothing_left(const fs::path& dir) {
  EXPECT_TRUE(none_left(ranks_in(dir))) << "a rank outlived the run";
  EXPECT_TRUE(none_left(fmt::format("mpiexec.*--plan {}/", dir.string())))
      << "mpiexec outlived the run";
  EXPECT_TRUE(work_folders(dir).empty());
  EXPECT_TRUE(temp_files(dir).empty());
}

/// A memory cgroup (v1) of `limit` bytes below this process's own, removed at scope exit.
struct MemoryCgroup {
  fs::path dir;
  explicit MemoryCgroup(std::int64_t limit) {
    std::ifstream self("/proc/self/cgroup");
    std::string mine;
    for (std::string line; std::getline(self, line);)
      if (line.find(":memory:") != std::string::npos) mine = line.substr(line.find(":memory:") + 8);
    const fs::path root = "/sys/fs/cgroup/memory";
    if (mine.empty() || !fs::exists(root / "memory.limit_in_bytes")) return;
    const fs::path d = root / fs::path(mine).relative_path() / fmt::format("sbtest-{}", ::getpid());
    std::error_code ec;
    if (!fs::create_directory(d, ec)) return;
    std::ofstream(d / "memory.limit_in_bytes") << limit;
    if (fs::exists(d / "memory.memsw.limit_in_bytes"))
      std::ofstream(d / "memory.memsw.limit_in_bytes") << limit;  // no swap to escape into
    dir = d;
  }
  ~MemoryCgroup() {
    if (dir.empty()) return;
    // Whatever is left in it goes to the parent, then the group goes.
    for (int i = 0; i < 50 && ::rmdir(dir.c_str()) != 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
};

TEST(JobFaults, AWorkerKilledByTheOomKillerDuringSetUpFailsItsCaseAlone) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to make a memory cgroup";
  MemoryCgroup cg(300ll << 20);
  if (cg.dir.empty()) GTEST_SKIP() << "no cgroup v1 memory controller to use here";
  TempDir dir("sbjob");
  const fs::path out = dir.path / "r.h5";
  // The memory check is told there is plenty (SCALEBENCH_HOST_MEMORY_BYTES), so the svd case
  // (n = 5000: its n x n workspaces, 200 MB each, are zeroed in its set-up) goes over the
  // cgroup's 300 MiB and its OOM killer ends the worker; the cases around it fit. The launcher
  // and its job run in the cgroup.
  const int rc = bash(fmt::format(
      "echo $$ > {0}/cgroup.procs && cd {1} && SCALEBENCH_HOST_MEMORY_BYTES=1e12 exec {2} run "
      "--preset tiny --workloads subset-mean,svd,groupby --paths cpu1 {3} --repeats 2 "
      "--param svd.m=5000 --param svd.n=5000 --param svd.chunk=5000 --out {4} > {1}/out 2> "
      "{1}/err",
      cg.dir.string(), dir.path.string(), SB_LAUNCHER_EXE, kQuick, out.string()));
  const std::string err = slurp(dir.path / "err");
  EXPECT_EQ(rc, 1) << err;
  const auto model = sb::results::read_report(out.string());
  int ok = 0, svd_failed = 0;
  for (const auto& c : model.at("cases")) {
    const std::string msg = c.value("message", "");
    if (c.at("workload") == "svd") {
      EXPECT_EQ(c.at("status"), "failed") << msg;
      EXPECT_NE(msg.find("during its set-up"), std::string::npos) << msg;
      EXPECT_NE(msg.find("SIGKILL"), std::string::npos) << msg;
      EXPECT_NE(msg.find("killed by the OOM killer (memory cgroup"), std::string::npos) << msg;
      ++svd_failed;
    } else {
      EXPECT_EQ(c.at("status"), "ok") << c.at("id") << ": " << msg;
      ok += c.at("status") == "ok";
    }
  }
  EXPECT_EQ(svd_failed, 1);
  EXPECT_EQ(ok, 4);  // subset-mean before it, groupby's three cases after it in a fresh job
  EXPECT_GE(model.at("attrs").value("jobs", 0), 2);
  expect_nothing_left(dir.path);
}

TEST(JobFaults, AStartUpThatHangsEndsWithExitThreeNamingWhatHung) {
  TempDir dir("sbjob");
  const auto t0 = std::chrono::steady_clock::now();
  const int rc = bash(fmt::format(
      "cd {0} && ulimit -n 24 && SCALEBENCH_STARTUP_TIMEOUT_S=10 exec {1} run --preset tiny "
      "--paths cpu1 {2} --out {0}/r.h5 > {0}/out 2> {0}/err",
      dir.path.string(), SB_LAUNCHER_EXE, kQuick));
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::string err = slurp(dir.path / "err");
  EXPECT_EQ(rc, 3) << err;
  // The last line names the cause; lines before it are the job's own output, echoed.
  const std::string last = err.substr(err.rfind('\n', err.size() - 2) + 1);
  EXPECT_NE(last.find("did not finish its start-up within 10 s (SCALEBENCH_STARTUP_TIMEOUT_S)"),
            std::string::npos)
      << err;
  EXPECT_LT(took, 60.0) << "the start-up timeout did not end it";
  EXPECT_FALSE(fs::exists(dir.path / "r.h5"));
  expect_nothing_left(dir.path);
}

TEST(JobFaults, ALauncherKilledDuringStartUpLeavesNoProcess) {
  TempDir dir("sbjob");
  // A start-up that hangs (ulimit -n 24) is the widest window; the launcher is killed in it.
  const pid_t a = start_bash(
      dir.path, fmt::format("cd {0} && ulimit -n 24 && exec {1} run --preset tiny --paths cpu1 "
                            "{2} --out {0}/r.h5",
                            dir.path.string(), SB_LAUNCHER_EXE, kQuick));
  ASSERT_TRUE(wait_for_text(dir.path, "plan-", "launch_epoch", 30)) << slurp(dir.path / "err");
  std::this_thread::sleep_for(std::chrono::seconds(2));  // mpiexec is up, the ranks starting
  ASSERT_EQ(::kill(a, SIGKILL), 0);
  (void)wait_exit(a);
  EXPECT_TRUE(none_left(fmt::format("{}/", dir.path.string()), 15))
      << "a process of the killed run's job is left";
  // What it left is a work folder with nothing in it to recover.
  ASSERT_EQ(scalebench_in(dir.path, "recover r.h5"), 0) << slurp(dir.path / "err");
  EXPECT_EQ(slurp(dir.path / "err"), "");
  EXPECT_NE(slurp(dir.path / "out").find("nothing to recover"), std::string::npos)
      << slurp(dir.path / "out");
  expect_nothing_left(dir.path);
}

/// The pid of the process whose command line holds `needle` and whose environment says
/// OMPI_COMM_WORLD_RANK=`rank`, or 0.
pid_t rank_pid(const std::string& needle, int rank) {
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmd = slurp(e.path() / "cmdline");
    std::replace(cmd.begin(), cmd.end(), '\0', ' ');
    if (cmd.find(needle) == std::string::npos || cmd.find("mpiexec") != std::string::npos) continue;
    const std::string env = slurp(e.path() / "environ");
    if (env.find(fmt::format("OMPI_COMM_WORLD_RANK={}", rank) + std::string(1, '\0')) !=
        std::string::npos)
      return static_cast<pid_t>(std::stol(name));
  }
  return 0;
}

TEST(JobFaults, AWorkerStoppedDuringStartUpIsNamedByHost) {
  TempDir dir("sbjob");
  // The worker measures its ceilings afresh before it reports (seconds): it is stopped first.
  const pid_t a = start_bash(
      dir.path, fmt::format("cd {0} && SCALEBENCH_STARTUP_TIMEOUT_S=8 exec {1} run --preset tiny "
                            "--workloads subset-mean --paths cpu1 --warmup 0 --fresh-ceilings "
                            "--out {0}/r.h5",
                            dir.path.string(), SB_LAUNCHER_EXE));
  // The scheduler is through MPI_Init and waits for the worker's start-up record.
  ASSERT_TRUE(wait_for_text(dir.path, "stream-", "startup_wait", 60)) << slurp(dir.path / "err");
  const pid_t worker = rank_pid(ranks_in(dir.path), 1);
  ASSERT_GT(worker, 0);
  ASSERT_EQ(::kill(worker, SIGSTOP), 0);
  const int rc = wait_exit(a);
  const std::string err = slurp(dir.path / "err");
  const std::string last = err.substr(err.rfind('\n', err.size() - 2) + 1);
  EXPECT_EQ(rc, 3) << err;
  EXPECT_NE(last.find("did not finish its start-up within 8 s"), std::string::npos) << err;
  EXPECT_NE(last.find("the scheduler is up, but rank(s) 1 on "), std::string::npos) << err;
  EXPECT_NE(last.find(" never reported; rank 1 ("), std::string::npos) << err;
  EXPECT_NE(last.find(fmt::format(") is stopped (pid {})", worker)), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(dir.path / "r.h5"));
  expect_nothing_left(dir.path);
}

TEST(JobFaults, AStoppedWorkerIsNamedWithWhatItWasDoing) {
  TempDir dir("sbjob");
  const fs::path out = dir.path / "r.h5";
  const pid_t a =
      start_bash(dir.path, fmt::format("exec {} run --preset small --workloads subset-mean --param "
                                       "subset-mean.n=20000,2000 --paths cpu1 {} --repeats 30 "
                                       "--case-timeout 8 --out {}",
                                       SB_LAUNCHER_EXE, kQuick, out.string()));
  ASSERT_TRUE(wait_for_text(dir.path, "stream-", "\"repeat\":2", 90)) << slurp(dir.path / "err");
  const pid_t worker = rank_pid(ranks_in(dir.path), 1);
  ASSERT_GT(worker, 0);
  ASSERT_EQ(::kill(worker, SIGSTOP), 0);
  const int rc = wait_exit(a);
  EXPECT_EQ(rc, 1) << slurp(dir.path / "err");
  const auto model = sb::results::read_report(out.string());
  const auto& cases = model.at("cases");
  ASSERT_EQ(cases.size(), 2u);
  const std::string msg = cases[0].value("message", "");
  EXPECT_EQ(cases[0].at("status"), "timeout") << msg;
  EXPECT_NE(msg.find("case exceeded --case-timeout of 8 s in repeat "), std::string::npos) << msg;
  EXPECT_NE(msg.find(fmt::format("not finished: rank 1 ({})",
                                 model.at("attrs").at("host").get<std::string>())),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("running task"), std::string::npos) << msg;
  EXPECT_NE(msg.find(", silent for "), std::string::npos) << msg;
  EXPECT_EQ(cases[1].at("status"), "ok") << "the next case runs in a fresh job";
  expect_nothing_left(dir.path);
}

TEST(JobFaults, AStoppedSchedulerIsNamedByTheLauncher) {
  TempDir dir("sbjob");
  const fs::path out = dir.path / "r.h5";
  const pid_t a = start_bash(
      dir.path, fmt::format("exec {} run --preset small --workloads subset-mean --paths cpu1 {} "
                            "--repeats 30 --case-timeout 2 --out {}",
                            SB_LAUNCHER_EXE, kQuick, out.string()));
  ASSERT_TRUE(wait_for_text(dir.path, "stream-", "\"repeat\":1", 90)) << slurp(dir.path / "err");
  const pid_t scheduler = rank_pid(ranks_in(dir.path), 0);
  ASSERT_GT(scheduler, 0);
  ASSERT_EQ(::kill(scheduler, SIGSTOP), 0);
  const int rc = wait_exit(a);
  EXPECT_EQ(rc, 1) << slurp(dir.path / "err");
  const auto model = sb::results::read_report(out.string());
  const std::string msg = model.at("cases")[0].value("message", "");
  EXPECT_NE(msg.find("the job stopped answering: no record for"), std::string::npos) << msg;
  EXPECT_NE(msg.find(fmt::format("rank 0 (the scheduler, {}) is stopped (pid {})",
                                 model.at("attrs").at("host").get<std::string>(), scheduler)),
            std::string::npos)
      << msg;
  expect_nothing_left(dir.path);
}

}  // namespace
