// svd through the real launcher (scalebench run, mpiexec): the written HDF5 report names, per
// repeat and in the case's result, the routines each case ran (local_routine, svd_routine), read
// back by read_report and by h5py (read_svd_routines.py).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "../support/scratch_dir.hpp"
#include "scalebench/report.hpp"
#include "svd/routines.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

using sb::test_support::slurp;
using sb::test_support::TempDir;

int exit_code(int st) {
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/// `scalebench run` of the tiny svd preset on single-cpu and multi-cpu with `params`.
json run_tiny(const TempDir& dir, const std::string& params) {
  const fs::path out = dir.path / "r.h5";
  const std::string cmd = fmt::format(
      "{} run --no-ceilings --preset tiny --workloads svd --paths cpu1,cpuN --repeats 3 "
      "--warmup 1 {} --out {} > {}/stdout 2> {}/stderr",
      SB_LAUNCHER_EXE, params, out.string(), dir.path.string(), dir.path.string());
  const int rc = exit_code(std::system(cmd.c_str()));
  EXPECT_EQ(rc, 0) << slurp(dir.path / "stdout") << slurp(dir.path / "stderr");
  return sb::results::read_report(out.string());
}

/// The local_routine a repeat must report: `busy` for workers that factored blocks, "none" for
/// the others; case rank 0's value first, then the other distinct values by rank.
std::string expected_local(const json& c, int repeat, const std::string& busy) {
  const int workers = c.at("workers").get<int>();
  std::vector<bool> owns(static_cast<std::size_t>(workers), false);
  const json& te = c.at("task_events");
  for (std::size_t i = 0; i < te.at("repeat").size(); ++i)
    if (te["repeat"][i].get<int>() == repeat) owns.at(te["worker"][i].get<std::size_t>()) = true;
  std::map<int, std::string> by_rank;
  for (std::size_t r = 0; r < owns.size(); ++r)
    by_rank[static_cast<int>(r)] = owns[r] ? busy : "none";
  return sb::svd::combine_local_routines(by_rank);
}

/// Both svd cases carry the routines in every repeat and in `result`; h5py reads the same.
void expect_routines(const TempDir& dir, const json& model, const std::string& busy,
                     const std::string& svd) {
  const json& cases = model.at("cases");
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0].at("path"), "single-cpu");
  EXPECT_EQ(cases[1].at("path"), "multi-cpu");
  for (const auto& c : cases) {
    ASSERT_EQ(c.at("status"), "ok") << c.at("message");
    const json& results = c.at("results");
    ASSERT_EQ(results.size(), 3u);
    for (std::size_t r = 0; r < results.size(); ++r) {
      EXPECT_EQ(results[r].at("local_routine"), expected_local(c, static_cast<int>(r), busy))
          << c.at("id") << " repeat " << r;
      EXPECT_EQ(results[r].at("svd_routine"), svd) << c.at("id") << " repeat " << r;
    }
    EXPECT_EQ(c.at("result").at("local_routine"), results.back().at("local_routine"));
    EXPECT_EQ(c.at("result").at("svd_routine"), svd);
  }
  EXPECT_EQ(cases[0].at("result").at("local_routine"), busy);  // one worker owns every block

  // The file itself, through h5py: string attributes of result/, a text column of results.
  const std::string python = SB_PYTHON3;  // Debian's python3, which has h5py
  if (python.empty() || !fs::exists(python)) GTEST_SKIP() << "no python3";
  const fs::path report = dir.path / "r.h5";
  const fs::path json_out = dir.path / "h5py.json";
  const std::string cmd =
      fmt::format("{} {}/tests/svd/read_svd_routines.py {} > {} 2> {}/h5py.err", python,
                  SB_SOURCE_DIR, report.string(), json_out.string(), dir.path.string());
  const int rc = exit_code(std::system(cmd.c_str()));
  if (rc == 77) GTEST_SKIP() << "h5py missing: " << slurp(dir.path / "h5py.err");
  ASSERT_EQ(rc, 0) << slurp(dir.path / "h5py.err");
  const json h5 = json::parse(slurp(json_out));
  ASSERT_EQ(h5.size(), 2u);
  for (const auto& c : cases) {
    const std::string group =
        fmt::format("{:04d}_svd_{}", c.at("index").get<int>(), c.at("path").get<std::string>());
    ASSERT_TRUE(h5.contains(group)) << h5.dump();
    EXPECT_EQ(h5[group]["result"]["local_routine"], c["result"]["local_routine"]);
    EXPECT_EQ(h5[group]["result"]["svd_routine"], c["result"]["svd_routine"]);
    ASSERT_EQ(h5[group]["results"].size(), c.at("results").size());
    for (std::size_t r = 0; r < c["results"].size(); ++r) {
      EXPECT_EQ(h5[group]["results"][r]["local_routine"], c["results"][r]["local_routine"]);
      EXPECT_EQ(h5[group]["results"][r]["svd_routine"], c["results"][r]["svd_routine"]);
    }
  }
}

TEST(SvdReport, TinyPresetNamesTheSketchAndTheGramRoute) {
  // tiny is 2000 x 50: m >= 8n, so cpu_local=auto sketches; uniform data, so cond(R) <= 100
  // and cpu_svd=auto takes the Gram eigen-decomposition.
  TempDir dir;
  const json model = run_tiny(dir, "");
  expect_routines(dir, model, "sketch", "gram");
}

TEST(SvdReport, HouseholderAndGesddWhenAskedFor) {
  TempDir dir;
  const json model = run_tiny(dir, "--param svd.cpu_local=householder --param svd.cpu_svd=gesdd");
  expect_routines(dir, model, "householder", "gesdd");
}

}  // namespace
