// When nothing can be written, and what a killed run leaves at any moment (issue #47): a run of
// a user of its own whose report folder and $TMPDIR both turn read-only keeps its work folder,
// says where the finished cases are, marks the report on disk, and `recover` puts them in once
// the folder is writable again; `recover` on a work folder whose stream, owner file or plan was
// cut at any byte (a launcher killed 0.1-0.3 s into a run) never fails with an internal error.
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
#include <nlohmann/json.hpp>

#include "../support/launcher_run.hpp"
#include "scalebench/report.hpp"

namespace fs = std::filesystem;

namespace {

using namespace sb::test_support;

const std::string kQuick = "--paths cpu1 --warmup 0 --no-ceilings";

TEST(UnsavedFaults, ReportAndTmpdirBothReadOnlyKeepTheWorkFolderAndRecoverTakesItBack) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run as a user of its own";
  TempDir dir("sbunsaved");
  ::chmod(dir.path.c_str(), 0755);
  const fs::path reports = dir.path / "reports", tmp = dir.path / "tmp";
  fs::create_directories(reports);
  fs::create_directories(tmp);
  const int uid = test_uid();
  ASSERT_EQ(bash(fmt::format("chown {0}:{0} {1} {2} {3}", uid, reports.string(), tmp.string(),
                             dir.path.string())),
            0);
  const fs::path out = reports / "r.h5";
  const pid_t a = start_bash(
      dir.path, fmt::format("cd {} && TMPDIR={} exec {} {} run --preset tiny "
                            "--workloads svd,subset-mean,groupby {} --repeats 40 --out {}",
                            dir.path.string(), tmp.string(), as_test_user(), SB_LAUNCHER_EXE,
                            kQuick, out.string()));
  ASSERT_TRUE(wait_for_text(reports, "stream-", "\"type\":\"case\"", 90))
      << slurp(dir.path / "err");
  ASSERT_EQ(::chmod(reports.c_str(), 0555), 0);
  ASSERT_EQ(::chmod(tmp.c_str(), 0555), 0);
  const int rc = wait_exit(a);
  const std::string err = slurp(dir.path / "err");
  const std::string last = err.substr(err.rfind('\n', err.size() - 2) + 1);
  EXPECT_EQ(rc, 3) << err;
  EXPECT_NE(last.find("cannot write report " + out.string()), std::string::npos) << err;
  EXPECT_NE(last.find("Permission denied (errno 13)"), std::string::npos) << err;
  EXPECT_NE(last.find("no copy could be written to the temporary folder either"), std::string::npos)
      << err;
  EXPECT_NE(last.find("`scalebench recover " + out.string() + "`"), std::string::npos) << err;
  const auto folders = work_folders(reports);
  ASSERT_EQ(folders.size(), 1u) << "the work folder holding the finished cases stays";
  EXPECT_NE(last.find("are in the record streams of " + folders[0].string()), std::string::npos)
      << err;
  EXPECT_TRUE(temp_files(reports).empty());
  // No copy half-written in $TMPDIR (OpenMPI's own session folder may stay there: it cannot
  // remove it from a read-only folder either).
  for (const auto& e : fs::directory_iterator(tmp))
    EXPECT_NE(e.path().filename().string().rfind("scalebench", 0), 0u) << e.path();
  EXPECT_TRUE(none_left(fmt::format("scalebench-rank --plan {}/", reports.string())));
  // The report on disk is still a valid report, and says what happened.
  const auto before = sb::results::read_report(out.string());
  const std::string status = before.at("attrs").at("status");
  EXPECT_EQ(status.rfind("failed: the report could not be written: Permission denied", 0), 0u)
      << status;
  EXPECT_NE(status.find(folders[0].string()), std::string::npos) << status;

  // Writable again: recover (as the same user) puts every finished case into the report.
  ASSERT_EQ(::chmod(reports.c_str(), 0755), 0);
  ASSERT_EQ(bash(fmt::format("cd {0} && {1} {2} recover {3} > {0}/out 2> {0}/err",
                             dir.path.string(), as_test_user(), SB_LAUNCHER_EXE, out.string())),
            0)
      << slurp(dir.path / "err");
  const auto after = sb::results::read_report(out.string());
  int ok = 0;
  for (const auto& c : after.at("cases")) ok += c.at("status") == "ok";
  EXPECT_GT(ok, static_cast<int>(before.at("cases").size()) - 1) << slurp(dir.path / "out");
  EXPECT_GE(ok, 1);
  EXPECT_NE(after.at("attrs").at("status").get<std::string>().find("scalebench recover"),
            std::string::npos);
  EXPECT_TRUE(work_folders(reports).empty());
  EXPECT_TRUE(temp_files(reports).empty());
  ::chmod(tmp.c_str(), 0755);
}

/// Copies the work folder `from` (of report `report`) into `to`, with the owner file naming
/// `to`'s report, and returns the copy.
fs::path copy_folder(const fs::path& from, const fs::path& to_dir, const fs::path& report) {
  const fs::path copy = to_dir / from.filename();
  fs::copy(from, copy, fs::copy_options::recursive);
  nlohmann::json owner = nlohmann::json::parse(slurp(copy / "owner.json"));
  owner["report"] = report.string();
  std::ofstream(copy / "owner.json") << owner.dump();
  return copy;
}

TEST(UnsavedFaults, RecoverNeverFailsWhereverAKilledRunsFilesWereCut) {
  TempDir dir("sbcut");
  const fs::path out = dir.path / "r.h5";
  // A real killed run's work folder, kept whole: a start record and finished cases.
  const pid_t a =
      start_bash(dir.path, fmt::format("exec {} run --preset tiny --workloads subset-mean,svd {} "
                                       "--repeats 30 --out {}",
                                       SB_LAUNCHER_EXE, kQuick, out.string()));
  ASSERT_TRUE(wait_for_text(dir.path, "stream-", "\"type\":\"case\"", 90));
  ::kill(a, SIGKILL);
  (void)wait_exit(a);
  ASSERT_TRUE(none_left(fmt::format("scalebench-rank --plan {}/", dir.path.string())));
  const auto folders = work_folders(dir.path);
  ASSERT_EQ(folders.size(), 1u);
  const fs::path whole = dir.path / "whole";
  fs::create_directories(whole);
  fs::rename(folders[0], whole / folders[0].filename());
  fs::remove(out);
  const fs::path kept = whole / folders[0].filename();
  const std::string stream = slurp(kept / "stream-0.jsonl");
  const std::string owner = slurp(kept / "owner.json");
  ASSERT_GT(stream.size(), 100u);
  // Cut the stream at many bytes (every line end too), the owner file and the plan anywhere.
  std::vector<std::pair<std::string, std::size_t>> cuts;
  for (std::size_t n = 0; n <= stream.size(); n += std::max<std::size_t>(1, stream.size() / 40))
    cuts.emplace_back("stream-0.jsonl", n);
  for (std::size_t n = 0; n < stream.size(); ++n)
    if (stream[n] == '\n') cuts.emplace_back("stream-0.jsonl", n + 1);
  for (std::size_t n = 0; n <= owner.size(); n += 7) cuts.emplace_back("owner.json", n);
  cuts.emplace_back("plan-0.json", 10);
  int i = 0;
  for (const auto& [file, n] : cuts) {
    TempDir trial("sbcut");
    const fs::path report = trial.path / "r.h5";
    const fs::path copy = copy_folder(kept, trial.path, report);
    const std::string text = slurp(copy / file);
    std::ofstream(copy / file, std::ios::binary | std::ios::trunc) << text.substr(0, n);
    const int rc = scalebench_in(trial.path, "recover r.h5");
    const std::string what = fmt::format("{} cut at byte {}", file, n);
    const std::string err = slurp(trial.path / "err");
    EXPECT_EQ(rc, 0) << what << "\n" << err;
    EXPECT_EQ(err.find("internal error"), std::string::npos) << what << "\n" << err;
    if (fs::exists(report))
      EXPECT_NO_THROW((void)sb::results::read_report(report.string())) << what;
    ++i;
  }
  EXPECT_GT(i, 40);
  // And launchers killed 0.1 to 0.3 s into a run, for real.
  for (const int ms : {100, 150, 200, 250, 300}) {
    TempDir trial("sbcut");
    const fs::path report = trial.path / "r.h5";
    const pid_t k =
        start_bash(trial.path, fmt::format("exec {} run --preset tiny --workloads subset-mean {} "
                                           "--out {}",
                                           SB_LAUNCHER_EXE, kQuick, report.string()));
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    ::kill(k, SIGKILL);
    (void)wait_exit(k);
    EXPECT_TRUE(none_left(fmt::format("{}/", trial.path.string()))) << ms << " ms";
    const int rc = scalebench_in(trial.path, "recover r.h5");
    const std::string err = slurp(trial.path / "err");
    EXPECT_EQ(rc, 0) << ms << " ms\n" << err;
    EXPECT_EQ(err.find("internal error"), std::string::npos) << err;
    EXPECT_TRUE(work_folders(trial.path).empty()) << ms << " ms: " << slurp(trial.path / "out");
  }
}

}  // namespace
