// An A/B run's request (ab_request.hpp): the items of --baseline / --current and the suite
// file's [baseline], [current] and [ab] tables.
#include <gtest/gtest.h>

#include <string>

#include "ab_request.hpp"
#include "case_plan.hpp"
#include "scalebench/error.hpp"
#include "suite_file.hpp"

namespace {

TEST(AbRequest, ReadsEveryKindOfItem) {
  sb::AbSideRequest s;
  EXPECT_FALSE(s.given);
  sb::add_side_item(s, "rank=/old/build/scalebench-rank", "--baseline");
  sb::add_side_item(s, "plugin=old/libk.so", "--baseline");
  sb::add_side_item(s, "plugin=other/libj.so", "--baseline");
  sb::add_side_item(s, "mpiexec=/opt/openmpi-5/bin/mpiexec", "--baseline");
  sb::add_side_item(s, "env:LD_LIBRARY_PATH=/opt/nccl-2.21/lib:/usr/lib", "--baseline");
  sb::add_side_item(s, "env:NCCL_ALGO=", "--baseline");
  sb::add_side_item(s, "param:subset-mean.n=21000", "--baseline");
  sb::add_side_item(s, "label=main (3f2c)", "--baseline");
  EXPECT_TRUE(s.given);
  EXPECT_EQ(s.rank, "/old/build/scalebench-rank");
  ASSERT_EQ(s.plugins.size(), 2u);
  EXPECT_EQ(s.plugins[0], "old/libk.so");
  EXPECT_EQ(s.mpiexec, "/opt/openmpi-5/bin/mpiexec");
  ASSERT_EQ(s.env.size(), 2u);
  EXPECT_EQ(s.env[0].first, "LD_LIBRARY_PATH");
  EXPECT_EQ(s.env[0].second, "/opt/nccl-2.21/lib:/usr/lib");  // the first '=' splits
  EXPECT_EQ(s.env[1].second, "");
  ASSERT_EQ(s.params.size(), 1u);
  EXPECT_EQ(s.params[0], "subset-mean.n=21000");
  EXPECT_EQ(s.label, "main (3f2c)");
}

TEST(AbRequest, PathsAreTakenFromTheSuiteFilesFolder) {
  sb::AbSideRequest s;
  sb::add_side_item(s, "rank=../old/scalebench-rank", "[baseline]", "/ci/suites");
  sb::add_side_item(s, "plugin=/abs/libk.so", "[baseline]", "/ci/suites");
  sb::add_side_item(s, "mpiexec=mpiexec", "[baseline]", "/ci/suites");  // a name: on PATH
  EXPECT_EQ(s.rank, "/ci/suites/../old/scalebench-rank");
  EXPECT_EQ(s.plugins[0], "/abs/libk.so");
  EXPECT_EQ(s.mpiexec, "mpiexec");
}

TEST(AbRequest, RefusesMalformedItemsWithOneLine) {
  for (const char* bad :
       {"rank", "rank=", "=x", "speed=fast", "env:=x", "env:1X=2", "env:A B=1", "env:NAME",
        "param:n=5", "param:subset-mean.n", "param:.n=1", "param:subset-mean.=1", "nccl:x=1"}) {
    sb::AbSideRequest s;
    try {
      sb::add_side_item(s, bad, "--baseline");
      ADD_FAILURE() << bad << " was accepted";
    } catch (const sb::UsageError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("--baseline"), std::string::npos) << what;
      EXPECT_NE(what.find(bad), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
}

TEST(AbRequest, BlockIsAutoOrACount) {
  EXPECT_EQ(sb::parse_ab_block("auto"), 0);
  EXPECT_EQ(sb::parse_ab_block("1"), 1);
  EXPECT_EQ(sb::parse_ab_block("1000"), 1000);
  for (const char* bad : {"", "0", "-1", "1001", "2.5", "x", "3x"})
    EXPECT_THROW((void)sb::parse_ab_block(bad), sb::UsageError) << bad;
}

TEST(AbRequest, SuiteFileTables) {
  sb::RunRequest r;
  sb::load_suite_text(R"(
preset = "tiny"
workloads = ["subset-mean"]
[baseline]
label = "main"
rank = "../main-build/scalebench-rank"
plugins = ["../main-plugin/libk.so"]
env = { OMP_PROC_BIND = "close", NCCL_ALGO = "Tree" }
params = { "subset-mean.chunk" = 1000 }
[current]
env = { NCCL_ALGO = "Ring" }
[ab]
block = 2
seed = 7
threshold = "2%"
alpha = 0.05
on_noisy = "fail"
)",
                      "/ci/suites/ab.toml", r);
  EXPECT_TRUE(r.ab.enabled());
  EXPECT_EQ(r.ab.baseline.label, "main");
  EXPECT_EQ(r.ab.baseline.rank, "/ci/suites/../main-build/scalebench-rank");
  ASSERT_EQ(r.ab.baseline.plugins.size(), 1u);
  EXPECT_EQ(r.ab.baseline.plugins[0], "/ci/suites/../main-plugin/libk.so");
  ASSERT_EQ(r.ab.baseline.env.size(), 2u);
  ASSERT_EQ(r.ab.baseline.params.size(), 1u);
  EXPECT_EQ(r.ab.baseline.params[0], "subset-mean.chunk=1000");
  EXPECT_TRUE(r.ab.current.given);
  ASSERT_EQ(r.ab.current.env.size(), 1u);
  EXPECT_EQ(r.ab.current.env[0].second, "Ring");
  EXPECT_EQ(r.ab.block, 2);
  ASSERT_TRUE(r.ab.seed.has_value());
  EXPECT_EQ(*r.ab.seed, 7u);
  EXPECT_DOUBLE_EQ(*r.ab.threshold, 0.02);
  EXPECT_DOUBLE_EQ(*r.ab.alpha, 0.05);
  EXPECT_EQ(r.ab.on_noisy, "fail");
}

TEST(AbRequest, SuiteFileMistakesNameTheFileAndLine) {
  for (const char* bad :
       {"[baseline]\nrank = 3\n", "[baseline]\nspeed = \"fast\"\n", "[baseline]\nenv = \"A=1\"\n",
        "[ab]\nblock = 0\n", "[ab]\nseed = -1\n", "[ab]\nalpha = 2\n",
        "[ab]\non_noisy = \"maybe\"\n", "[ab]\nrounds = 3\n", "baseline = \"x\"\n"}) {
    sb::RunRequest r;
    try {
      sb::load_suite_text(bad, "ab.toml", r);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const sb::UsageError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
      EXPECT_NE(what.find("ab.toml"), std::string::npos) << what;
    }
  }
}

TEST(AbRequest, NoSideNoAbRun) {
  sb::RunRequest r;
  sb::load_suite_text("preset = \"tiny\"\n", "plain.toml", r);
  EXPECT_FALSE(r.ab.enabled());
}

}  // namespace
