// Reliability through the launcher and real mpiexec: a case too large for memory fails alone
// with both sizes named; --resume runs only the missing and failed cases of a report.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "../support/scratch_dir.hpp"
#include "scalebench/report.hpp"

namespace fs = std::filesystem;

namespace {

using sb::test_support::slurp;
using sb::test_support::TempDir;

/// Runs `scalebench run ARGS` (env assignments may precede it); returns the exit code and
/// leaves stderr in DIR/stderr.
int launch(const fs::path& dir, const std::string& env, const std::string& args) {
  const std::string cmd =
      fmt::format("env {} {} run --no-ceilings --repeats 2 --warmup 0 {} > {}/stdout 2> {}/stderr",
                  env, SB_LAUNCHER_EXE, args, dir.string(), dir.string());
  const int st = std::system(cmd.c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

TEST(Reliability, CaseTooLargeForHostMemoryFailsAloneAndTheRunGoesOn) {
  TempDir dir;
  const fs::path out = dir.path / "mem.h5";
  // svd 10^9 x 50: 400 GB of A, held twice (A_i and U_i) by the worker(s).
  const int rc = launch(dir.path, "",
                        fmt::format("--preset tiny --workloads svd,subset-mean --paths cpu1,cpuN "
                                    "--param svd.m=1000000000 --out {}",
                                    out.string()));
  EXPECT_EQ(rc, 1) << slurp(dir.path / "stderr");
  const auto model = sb::results::read_report(out.string());
  const auto& cases = model.at("cases");
  ASSERT_EQ(cases.size(), 4u);
  for (int i : {0, 1}) {
    EXPECT_EQ(cases[i].at("workload"), "svd");
    EXPECT_EQ(cases[i].at("status"), "failed");
    const auto msg = cases[i].at("message").get<std::string>();
    EXPECT_NE(msg.find("svd: needs "), std::string::npos) << msg;
    EXPECT_NE(msg.find("iB of host memory per worker, this node has "), std::string::npos) << msg;
    EXPECT_NE(msg.find(" available"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
  for (int i : {2, 3}) {
    EXPECT_EQ(cases[i].at("workload"), "subset-mean");
    EXPECT_EQ(cases[i].at("status"), "ok") << cases[i].at("message");
  }
  EXPECT_EQ(model.at("attrs").at("status"), "failed");
}

TEST(Reliability, ResumeRunsOnlyMissingAndFailedCasesAndKeepsTheOthers) {
  TempDir dir;
  const fs::path out = dir.path / "resume.h5";
  const std::string plan = "--preset tiny --workloads subset-mean,svd --paths cpu1,cpuN";
  // First run on a "small node" (2 MB for the worker): svd's blocks do not fit, subset-mean does.
  ASSERT_EQ(launch(dir.path, "SCALEBENCH_HOST_MEMORY_BYTES=2000000",
                   fmt::format("{} --out {}", plan, out.string())),
            1)
      << slurp(dir.path / "stderr");
  auto first = sb::results::read_report(out.string());
  ASSERT_EQ(first.at("cases").size(), 4u);
  EXPECT_EQ(first.at("cases")[0].at("status"), "ok");
  EXPECT_EQ(first.at("cases")[1].at("status"), "ok");
  EXPECT_EQ(first.at("cases")[2].at("status"), "failed");
  EXPECT_EQ(first.at("cases")[3].at("status"), "failed");
  // A case missing from the report as well (as after a crash before it was written).
  first["cases"].erase(1);
  sb::results::write_report(first, out.string());
  const auto kept = first.at("cases")[0];

  // Resume with enough memory: only the three others run, into the same file.
  ASSERT_EQ(launch(dir.path, "", fmt::format("{} --resume {}", plan, out.string())), 0)
      << slurp(dir.path / "stderr");
  EXPECT_NE(slurp(dir.path / "stderr").find("3 case(s) to run (1 kept)"), std::string::npos)
      << slurp(dir.path / "stderr");
  const auto merged = sb::results::read_report(out.string());
  const auto& cases = merged.at("cases");
  ASSERT_EQ(cases.size(), 4u);
  const char* order[] = {"subset-mean/single-cpu", "subset-mean/multi-cpu", "svd/single-cpu",
                         "svd/multi-cpu"};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(cases[i].at("id").get<std::string>().rfind(order[i], 0), 0u) << cases[i].at("id");
    EXPECT_EQ(cases[i].at("status"), "ok") << cases[i].at("message");
    EXPECT_EQ(cases[i].at("index"), static_cast<int>(i));
  }
  EXPECT_EQ(cases[0], kept);  // the kept case is unchanged, times and results included
  EXPECT_EQ(merged.at("attrs").at("status"), "ok");
  EXPECT_EQ(sb::results::summarize(merged).size(), 4u);

  // Nothing left to do: no job runs, the report keeps every case, its system and start-up.
  ASSERT_EQ(launch(dir.path, "", fmt::format("{} --resume {}", plan, out.string())), 0)
      << slurp(dir.path / "stderr");
  EXPECT_NE(slurp(dir.path / "stderr").find("0 case(s) to run (4 kept)"), std::string::npos);
  const auto again = sb::results::read_report(out.string());
  EXPECT_EQ(again.at("cases"), merged.at("cases"));
  EXPECT_FALSE(again.at("system").empty());
  EXPECT_EQ(again.at("startup"), merged.at("startup"));
  EXPECT_EQ(again.at("attrs").at("status"), "ok");

  // A narrower plan into the same file keeps the cases it does not plan.
  ASSERT_EQ(
      launch(dir.path, "",
             fmt::format("--preset tiny --workloads svd --paths cpu1 --resume {}", out.string())),
      0)
      << slurp(dir.path / "stderr");
  const auto narrow = sb::results::read_report(out.string());
  EXPECT_EQ(narrow.at("cases").size(), 4u);
}

}  // namespace
