// Faults on the launcher's side, done for real through the binaries and real mpiexec: the
// launcher killed with -9 (no rank outlives it by more than 5 s; `recover` folds what the job
// finished), a full disk and a folder turned read-only mid-run (exit 3, nothing lost), two runs
// aimed at one report, odd option values and paths (refused before any job starts), a closed
// output pipe, an MPI launcher that fails.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "../support/scratch_dir.hpp"
#include "scalebench/report.hpp"

namespace fs = std::filesystem;

namespace {

using sb::test_support::slurp;
using sb::test_support::TempDir;

int sh(const std::string& cmd) {
  const int st = std::system(("bash -c '" + cmd + "'").c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/// `scalebench ARGS`, stdout and stderr kept in DIR/out and DIR/err; the exit code.
int scalebench(const fs::path& dir, const std::string& args) {
  const int st = std::system(
      fmt::format("{} {} > {}/out 2> {}/err", SB_LAUNCHER_EXE, args, dir.string(), dir.string())
          .c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/// Processes whose command line holds `needle` (pgrep -f); the pattern's first letter in
/// brackets keeps the shell that runs pgrep from matching itself.
int processes_matching(const std::string& needle) {
  const std::string cmd =
      fmt::format("pgrep -f -c -- '[{}]{}' 2>/dev/null", needle.substr(0, 1), needle.substr(1));
  FILE* p = ::popen(cmd.c_str(), "r");
  int n = 0;
  if (p != nullptr) {
    if (std::fscanf(p, "%d", &n) != 1) n = 0;
    ::pclose(p);
  }
  return n;
}

/// Waits until `file` exists and holds `text` (up to `seconds`).
bool wait_for(const fs::path& file_glob_dir, const std::string& name_prefix,
              const std::string& text, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    std::error_code ec;
    for (const auto& e : fs::recursive_directory_iterator(file_glob_dir, ec))
      if (e.path().filename().string().rfind(name_prefix, 0) == 0 &&
          slurp(e.path()).find(text) != std::string::npos)
        return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

std::vector<fs::path> work_folders(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind(".scalebench-", 0) == 0) out.push_back(e.path());
  return out;
}

/// Starts `scalebench run ARGS` in the background; returns its pid.
pid_t start_run(const fs::path& dir, const std::string& args) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const std::string out = (dir / "out").string(), err = (dir / "err").string();
    if (!std::freopen(out.c_str(), "w", stdout) || !std::freopen(err.c_str(), "w", stderr))
      ::_exit(99);
    ::execl("/bin/sh", "sh", "-c", fmt::format("exec {} run {}", SB_LAUNCHER_EXE, args).c_str(),
            nullptr);
    ::_exit(98);
  }
  return pid;
}

int wait_exit(pid_t pid) {
  int st = 0;
  ::waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/// A tmpfs of `kib` KiB mounted on `dir` for the scope of the object (root only).
struct SmallDisk {
  fs::path dir;
  bool mounted = false;
  SmallDisk(fs::path d, int kib) : dir(std::move(d)) {
    fs::create_directories(dir);
    mounted = ::mount("tmpfs", dir.c_str(), "tmpfs", 0, fmt::format("size={}k", kib).c_str()) == 0;
  }
  ~SmallDisk() {
    if (mounted) ::umount2(dir.c_str(), MNT_DETACH);
  }
};

const std::string kCpuRun = "--paths cpu1,cpuN --warmup 0 --no-ceilings";

TEST(LauncherFaults, KilledLauncherLeavesNoRankAndRecoverKeepsEveryFinishedCase) {
  TempDir dir("sbfault");
  const fs::path out = dir.path / "r.h5";
  // Many short cases: some finish between the launcher's death and the job's end.
  const pid_t pid = start_run(
      dir.path, fmt::format("--preset tiny --workloads subset-mean,svd,groupby {} --repeats 40 "
                            "--out {}",
                            kCpuRun, out.string()));
  ASSERT_TRUE(wait_for(dir.path, "stream-", "\"type\":\"case\"", 60)) << slurp(dir.path / "err");
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  const auto killed = std::chrono::steady_clock::now();
  (void)wait_exit(pid);
  const std::string needle = fmt::format("scalebench-rank --plan {}/", dir.path.string());
  while (processes_matching(needle) > 0 &&
         std::chrono::steady_clock::now() - killed < std::chrono::seconds(30))
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const double gone_after =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
  EXPECT_EQ(processes_matching(needle), 0);
  EXPECT_LT(gone_after, 5.0) << "ranks outlived the launcher";

  const auto folders = work_folders(dir.path);
  ASSERT_EQ(folders.size(), 1u);
  int streamed = 0;
  for (const auto& e : fs::directory_iterator(folders[0]))
    if (e.path().filename().string().rfind("stream-", 0) == 0) {
      std::istringstream lines(slurp(e.path()));
      for (std::string l; std::getline(lines, l);)
        streamed += l.find("\"type\":\"case\"") != std::string::npos;
    }
  ASSERT_GT(streamed, 0);

  // The report the killed run left lists every planned case and what to run next.
  ASSERT_EQ(scalebench(dir.path, "report " + out.string()), 0) << slurp(dir.path / "err");
  const std::string left = slurp(dir.path / "out");
  EXPECT_NE(left.find("planned never ran"), std::string::npos) << left;
  EXPECT_NE(left.find(" recover " + out.string() + "\n"), std::string::npos) << left;
  EXPECT_NE(left.find("--resume " + out.string()), std::string::npos) << left;

  ASSERT_EQ(scalebench(dir.path, "recover " + out.string()), 0) << slurp(dir.path / "err");
  EXPECT_NE(slurp(dir.path / "out").find("recovered"), std::string::npos)
      << slurp(dir.path / "out");
  const auto model = sb::results::read_report(out.string());
  ASSERT_TRUE(model.contains("plan"));
  EXPECT_EQ(model.at("plan").size(), 10u);  // every planned case, run or not
  int ok = 0;
  for (const auto& c : model.at("cases")) ok += c.at("status") == "ok";
  EXPECT_GE(ok, streamed);
  EXPECT_NE(model.at("attrs").at("status").get<std::string>().find("killed"), std::string::npos);
  EXPECT_TRUE(work_folders(dir.path).empty());
  for (const auto& e : fs::directory_iterator(dir.path))
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();

  // --resume runs only what is missing, into the same report.
  ASSERT_EQ(
      scalebench(dir.path, fmt::format("run --preset tiny --workloads subset-mean,svd,groupby "
                                       "{} --repeats 3 --resume {}",
                                       kCpuRun, out.string())),
      0)
      << slurp(dir.path / "err");
  const auto resumed = sb::results::read_report(out.string());
  EXPECT_EQ(resumed.at("cases").size(), 10u);
  for (const auto& c : resumed.at("cases")) EXPECT_EQ(c.at("status"), "ok") << c.at("id");
  EXPECT_TRUE(work_folders(dir.path).empty());
}

TEST(LauncherFaults, FullDiskExitsThreeKeepsTheLastReportAndACopyOfEveryFinishedCase) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to mount a small tmpfs";
  TempDir dir("sbfault");
  SmallDisk disk(dir.path / "small", 320);
  if (!disk.mounted) GTEST_SKIP() << "cannot mount a tmpfs here";
  const fs::path out = disk.dir / "r.h5";
  // Reports grow with every case (task events): the disk fills after a few.
  const int rc = scalebench(
      dir.path, fmt::format("run --preset tiny {} --repeats 25 --out {}", kCpuRun, out.string()));
  const std::string err = slurp(dir.path / "err");
  EXPECT_EQ(rc, 3) << err;
  EXPECT_NE(err.find("cannot write report " + out.string()), std::string::npos) << err;
  EXPECT_NE(err.find("No space left on device (errno 28)"), std::string::npos) << err;
  const auto last = sb::results::read_report(out.string());  // still a valid report
  const auto at = err.find("is in ");
  ASSERT_NE(at, std::string::npos) << err;
  std::string fallback = err.substr(at + 6);
  fallback = fallback.substr(0, fallback.find_first_of(" \n"));
  const auto kept = sb::results::read_report(fallback);
  EXPECT_GT(kept.at("cases").size(), last.at("cases").size());
  for (const auto& c : kept.at("cases")) EXPECT_EQ(c.at("status"), "ok");
  fs::remove(fallback);
  EXPECT_TRUE(work_folders(disk.dir).empty());
  EXPECT_EQ(processes_matching(fmt::format("scalebench-rank --plan {}/", disk.dir.string())), 0);
}

TEST(LauncherFaults, FolderTurnedReadOnlyMidRunExitsThreeAndEndsTheJob) {
  // As the issue saw it: a user's run whose report folder is made read-only (chmod 555) while
  // it runs. Root ignores permissions, so the run is the user nobody's.
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run as another user";
  if (sh("command -v runuser >/dev/null") != 0) GTEST_SKIP() << "needs runuser (util-linux)";
  TempDir dir("sbfault");
  ::chmod(dir.path.c_str(), 0755);
  const fs::path folder = dir.path / "reports";
  fs::create_directories(folder);
  ASSERT_EQ(sh(fmt::format("chown nobody {0} && chmod 0755 {0}", folder.string())), 0);
  const fs::path out = folder / "r.h5";
  const pid_t pid = ::fork();
  if (pid == 0) {
    const std::string o = (dir.path / "out").string(), e = (dir.path / "err").string();
    if (!std::freopen(o.c_str(), "w", stdout) || !std::freopen(e.c_str(), "w", stderr)) ::_exit(99);
    ::execl("/usr/sbin/runuser", "runuser", "-u", "nobody", "--", SB_LAUNCHER_EXE, "run",
            "--preset", "tiny", "--paths", "cpu1,cpuN", "--warmup", "0", "--no-ceilings",
            "--repeats", "30", "--out", out.c_str(), nullptr);
    ::_exit(98);
  }
  ASSERT_TRUE(wait_for(folder, "stream-", "\"type\":\"case\"", 60)) << slurp(dir.path / "err");
  ASSERT_EQ(::chmod(folder.c_str(), 0555), 0);
  const int rc = wait_exit(pid);
  const std::string err = slurp(dir.path / "err");
  EXPECT_EQ(rc, 3) << err;
  EXPECT_NE(err.find("cannot write report " + out.string()), std::string::npos) << err;
  EXPECT_NE(err.find("Permission denied (errno 13)"), std::string::npos) << err;
  EXPECT_NE(err.find("is in "), std::string::npos) << err;  // the copy of every finished case
  EXPECT_NO_THROW((void)sb::results::read_report(out.string()));
  EXPECT_EQ(processes_matching(fmt::format("scalebench-rank --plan {}/", folder.string())), 0);
  ASSERT_EQ(::chmod(folder.c_str(), 0755), 0);
  // The next run (replacing the report: --force) cleans up what the failed one could not
  // remove.
  ASSERT_EQ(scalebench(dir.path, fmt::format("run --preset tiny --workloads subset-mean --paths "
                                             "cpu1 --repeats 3 --warmup 0 --no-ceilings --force "
                                             "--out {}",
                                             out.string())),
            0)
      << slurp(dir.path / "err");
  EXPECT_TRUE(work_folders(folder).empty());
  sh("rm -f /tmp/scalebench-unsaved-*-r.h5");
}

TEST(LauncherFaults, OneWriterPerReportAndNoStuckLock) {
  TempDir dir("sbfault");
  const fs::path out = dir.path / "r.h5";
  const pid_t first = start_run(dir.path, fmt::format("--preset small --workloads subset-mean "
                                                      "--paths cpu1 --repeats 50 --warmup 0 "
                                                      "--no-ceilings --out {}",
                                                      out.string()));
  ASSERT_TRUE(wait_for(dir.path, "stream-", "progress", 60)) << slurp(dir.path / "err");
  TempDir second("sbfault");
  const int rc = scalebench(second.path, fmt::format("run --preset tiny --workloads svd --paths "
                                                     "cpu1 --out {}",
                                                     out.string()));
  const std::string err = slurp(second.path / "err");
  EXPECT_EQ(rc, 2) << err;
  EXPECT_NE(err.find(fmt::format("pid {}", first)), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  // A killed writer holds nothing: the next run goes ahead.
  ::kill(first, SIGKILL);
  (void)wait_exit(first);
  std::this_thread::sleep_for(std::chrono::seconds(3));
  EXPECT_EQ(scalebench(second.path, fmt::format("run --preset tiny --workloads svd --paths cpu1 "
                                                "--repeats 3 --warmup 0 --no-ceilings --force "
                                                "--out {}",
                                                out.string())),
            0)
      << slurp(second.path / "err");
  EXPECT_TRUE(work_folders(dir.path).empty());
}

TEST(LauncherFaults, OddValuesAreRefusedBeforeAnyJobStarts) {
  TempDir dir("sbfault");
  const std::string run = "run --preset tiny --workloads subset-mean --paths cpu1 ";
  const std::string fifo = (dir.path / "fifo.h5").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--out " + (dir.path / std::string(256, 'x')).string() + ".h5", "file name"},
      {"--out " + (dir.path / std::string(220, 'y')).string() + ".h5", "file name"},
      {"--out /dev/null", "not a regular file"},
      {"--out " + fifo, "not a regular file"},
      {"--out " + dir.path.string(), "is a folder"},
      {"--out " + (dir.path / "no/such/folder/r.h5").string(), "does not exist"},
      {"--case-timeout inf --out " + (dir.path / "r.h5").string(), "--case-timeout"},
      {"--case-timeout -1 --out " + (dir.path / "r.h5").string(), "--case-timeout"},
      {"--warmup 2147483647 --out " + (dir.path / "r.h5").string(), "--warmup"},
      {"--repeats 0 --out " + (dir.path / "r.h5").string(), "--repeats"},
      {"--param subset-mean.n=1e4 --param subset-mean.n=2e4 --out " + (dir.path / "r.h5").string(),
       "given twice"},
  };
  for (const auto& [args, says] : cases) {
    const int rc = scalebench(dir.path, run + args);
    const std::string err = slurp(dir.path / "err");
    EXPECT_EQ(rc, 2) << args << "\n" << err;
    EXPECT_NE(err.find(says), std::string::npos) << args << "\n" << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << args << "\n" << err;
  }
  EXPECT_TRUE(work_folders(dir.path).empty());
  for (const auto& e : fs::directory_iterator("/dev"))
    EXPECT_NE(e.path().filename().string().rfind(".scalebench-", 0), 0u) << e.path();
  // A bad setting stops the run before its job, on one line.
  const int rc =
      scalebench(dir.path, "run --preset tiny --out " + (dir.path / "s.h5").string() + " --list");
  EXPECT_EQ(rc, 0) << slurp(dir.path / "err");
  EXPECT_EQ(sh(fmt::format("SCALEBENCH_MPI_TUNING=maybe {} run --preset tiny --out {}/s.h5 "
                           "2>{}/err",
                           SB_LAUNCHER_EXE, dir.path.string(), dir.path.string())),
            2);
  EXPECT_NE(slurp(dir.path / "err").find("SCALEBENCH_MPI_TUNING"), std::string::npos);
}

TEST(LauncherFaults, ClosedOutputPipeDoesNotStopTheRun) {
  TempDir dir("sbfault");
  const fs::path out = dir.path / "r.h5";
  const int rc =
      sh(fmt::format("{} run --preset tiny {} --repeats 3 --out {} 2>&1 | head -3 >/dev/null; exit "
                     "${{PIPESTATUS[0]}}",
                     SB_LAUNCHER_EXE, kCpuRun, out.string()));
  EXPECT_EQ(rc, 0);
  const auto model = sb::results::read_report(out.string());
  EXPECT_EQ(model.at("attrs").at("status"), "ok");
  // subset-mean 2, svd 2, groupby 6, comms 6 (skipped: this machine has one CPU worker).
  EXPECT_EQ(model.at("cases").size(), 16u);
  EXPECT_TRUE(work_folders(dir.path).empty());
}

TEST(LauncherFaults, FailingMpiLauncherLeavesNothingBehind) {
  TempDir dir("sbfault");
  const fs::path out = dir.path / "r.h5";
  EXPECT_EQ(sh(fmt::format("SCALEBENCH_MPIEXEC=/bin/false {} run --preset tiny --paths cpu1 --out "
                           "{} 2>{}/err",
                           SB_LAUNCHER_EXE, out.string(), dir.path.string())),
            3);
  const std::string err = slurp(dir.path / "err");
  EXPECT_NE(err.find("failed to start"), std::string::npos) << err;
  EXPECT_TRUE(work_folders(dir.path).empty());
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
