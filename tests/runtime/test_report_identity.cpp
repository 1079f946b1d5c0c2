// One report is one file whatever its path, through the real program and real mpiexec (issue
// #47): while a run writes d/x.h5, every other spelling of that file (./x.h5, ../x.h5, a
// symlinked folder, a link to the file) is refused naming the run, and `report` reads the file
// meanwhile; `recover` and `--resume` find a killed run's cases whatever the spelling; an
// existing report is replaced only with --force (issue #48), and a killed run's unrecovered
// cases are never thrown away without it.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "../support/launcher_run.hpp"
#include "scalebench/report.hpp"

namespace fs = std::filesystem;

namespace {

using namespace sb::test_support;

const std::string kQuick = "--paths cpu1 --warmup 0 --no-ceilings";

/// The ranks of jobs whose work folders are in `dir`.
std::string ranks_in(const fs::path& dir) {
  return fmt::format("scalebench-rank --plan {}/", dir.string());
}

TEST(ReportIdentity, EverySpellingOfAReportBeingWrittenIsRefused) {
  TempDir dir("sbident");
  const fs::path d = dir.path / "d";
  fs::create_directories(d / "sub");
  fs::create_directory_symlink(d, dir.path / "l");
  const pid_t a = start_bash(
      dir.path, fmt::format("cd {} && exec {} run --preset small --workloads subset-mean {} "
                            "--repeats 400 --out x.h5",
                            d.string(), SB_LAUNCHER_EXE, kQuick));
  ASSERT_TRUE(wait_for_text(d, "stream-", "\"type\":\"progress\"", 90)) << slurp(dir.path / "err");
  for (int i = 0; i < 300 && !fs::exists(d / "x.h5"); ++i)  // written after the start record
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_TRUE(fs::exists(d / "x.h5"));
  fs::create_symlink(d / "x.h5", d / "link.h5");
  TempDir other("sbident");
  const std::vector<std::pair<fs::path, std::string>> spellings = {
      {d, "./x.h5"},
      {d / "sub", "../x.h5"},
      {dir.path, "l/x.h5"},
      {d, "link.h5"},
      {dir.path, "d/./x.h5"},
      {d / "sub", "../../l/sub/../x.h5"},
      {other.path, (d / "x.h5").string()}};
  for (const auto& [cwd, out] : spellings) {
    const int rc = scalebench_in(cwd, fmt::format("run --preset tiny --workloads svd {} --force "
                                                  "--out {}",
                                                  kQuick, out));
    const std::string err = slurp(cwd / "err");
    EXPECT_EQ(rc, 2) << cwd << " " << out << "\n" << err;
    EXPECT_EQ(line_count(err), 1u) << err;
    EXPECT_NE(err.find(fmt::format("being written by another scalebench run (pid {} ", a)),
              std::string::npos)
        << out << "\n"
        << err;
    fs::remove(cwd / "out");
    fs::remove(cwd / "err");
  }
  // Reading the report meanwhile: the last complete version, never half a file.
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(scalebench_in(dir.path, "report l/x.h5 --format json --out r.json"), 0)
        << slurp(dir.path / "err");
    EXPECT_NE(slurp(dir.path / "r.json").find("\"running\""), std::string::npos);
  }
  // Killed: `recover ./x.h5` from its folder folds in what the job finished.
  ASSERT_EQ(::kill(a, SIGKILL), 0);
  (void)wait_exit(a);
  ASSERT_TRUE(none_left(ranks_in(d)));
  ASSERT_EQ(work_folders(d).size(), 1u);
  ASSERT_EQ(scalebench_in(d, "recover ./x.h5"), 0) << slurp(d / "err");
  EXPECT_NE(slurp(d / "out").find("recovered"), std::string::npos) << slurp(d / "out");
  EXPECT_TRUE(work_folders(d).empty());
  EXPECT_TRUE(temp_files(d).empty());
  const auto model = sb::results::read_report((d / "x.h5").string());
  EXPECT_NE(model.at("attrs").at("status").get<std::string>().find("was killed"),
            std::string::npos);
  EXPECT_TRUE(fs::is_symlink(d / "link.h5"));
}

TEST(ReportIdentity, ResumeThroughAnotherSpellingRecoversTheKilledRun) {
  TempDir dir("sbident");
  const fs::path d = dir.path / "d";
  fs::create_directories(d);
  fs::create_directory_symlink(d, dir.path / "l");
  const pid_t a = start_bash(
      dir.path, fmt::format("cd {} && exec {} run --preset tiny --workloads subset-mean,svd {} "
                            "--repeats 60 --out x.h5",
                            d.string(), SB_LAUNCHER_EXE, kQuick));
  ASSERT_TRUE(wait_for_text(d, "stream-", "\"type\":\"case\"", 90)) << slurp(dir.path / "err");
  ::kill(a, SIGKILL);
  (void)wait_exit(a);
  ASSERT_TRUE(none_left(ranks_in(d)));
  const int rc = scalebench_in(dir.path, fmt::format("run --preset tiny --workloads "
                                                     "subset-mean,svd {} --repeats 2 --resume "
                                                     "./l/../l/x.h5",
                                                     kQuick));
  const std::string err = slurp(dir.path / "err");
  EXPECT_EQ(rc, 0) << err;
  EXPECT_NE(err.find("recovered"), std::string::npos) << err;
  const auto model = sb::results::read_report((d / "x.h5").string());
  EXPECT_EQ(model.at("cases").size(), 2u);
  for (const auto& c : model.at("cases")) EXPECT_EQ(c.at("status"), "ok") << c.at("id");
  EXPECT_TRUE(work_folders(d).empty());
  EXPECT_TRUE(temp_files(d).empty());
}

TEST(ReportIdentity, AnExistingReportIsReplacedOnlyWithForce) {
  TempDir dir("sbident");
  const std::string run = fmt::format(
      "run --preset tiny --workloads subset-mean {} --repeats 2 "
      "--out r.h5",
      kQuick);
  ASSERT_EQ(scalebench_in(dir.path, run), 0) << slurp(dir.path / "err");
  const std::string first = slurp(dir.path / "r.h5");
  int rc = scalebench_in(dir.path, run);
  std::string err = slurp(dir.path / "err");
  EXPECT_EQ(rc, 2) << err;
  EXPECT_EQ(line_count(err), 1u) << err;
  EXPECT_NE(err.find("--out " + (fs::canonical(dir.path) / "r.h5").string() +
                     " exists: --force replaces it"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("--resume"), std::string::npos) << err;
  EXPECT_EQ(slurp(dir.path / "r.h5"), first);
  EXPECT_TRUE(work_folders(dir.path).empty());
  // A link to it is the same report.
  fs::create_symlink("r.h5", dir.path / "latest.h5");
  EXPECT_EQ(scalebench_in(dir.path, fmt::format("run --preset tiny --workloads subset-mean {} "
                                                "--out latest.h5",
                                                kQuick)),
            2);
  EXPECT_EQ(slurp(dir.path / "r.h5"), first);
  rc = scalebench_in(dir.path, run + " --force");
  err = slurp(dir.path / "err");
  EXPECT_EQ(rc, 0) << err;
  EXPECT_NE(err.find("--force: replacing"), std::string::npos) << err;
  EXPECT_NE(slurp(dir.path / "r.h5"), first);
  // A killed run's finished cases beside a report are not thrown away without --force.
  const pid_t a = start_bash(
      dir.path, fmt::format("cd {} && exec {} run --preset tiny --workloads subset-mean,svd {} "
                            "--repeats 60 --force --out r.h5",
                            dir.path.string(), SB_LAUNCHER_EXE, kQuick));
  ASSERT_TRUE(wait_for_text(dir.path, "stream-", "\"type\":\"case\"", 90));
  ::kill(a, SIGKILL);
  (void)wait_exit(a);
  ASSERT_TRUE(none_left(ranks_in(dir.path)));
  fs::remove(dir.path / "r.h5");  // even without the report itself
  rc = scalebench_in(dir.path, run);
  err = slurp(dir.path / "err");
  EXPECT_EQ(rc, 2) << err;
  EXPECT_EQ(line_count(err), 1u) << err;
  EXPECT_NE(err.find("a killed run left finished cases of it in"), std::string::npos) << err;
  EXPECT_NE(err.find("`scalebench recover "), std::string::npos) << err;
  EXPECT_EQ(work_folders(dir.path).size(), 1u);
  EXPECT_EQ(scalebench_in(dir.path, "recover r.h5"), 0) << slurp(dir.path / "err");
  EXPECT_GE(sb::results::read_report((dir.path / "r.h5").string()).at("cases").size(), 1u);
  EXPECT_TRUE(work_folders(dir.path).empty());
}

}  // namespace
