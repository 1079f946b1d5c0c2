/// @file test_pbs_like.cpp
/// A PBS-shaped environment on this machine: PBS_JOBID, PBS_NODEFILE listing this host (one
/// line per slot) and PBS_O_WORKDIR. Allocation detection, placement and plan_launch run as the
/// launcher runs them; the mpiexec command is checked word by word, then run with the real
/// mpiexec (host file written by write_launch_files) to show that every rank lands where its
/// placement says and sees SCALEBENCH_PLACEMENT.

#include "batch/allocation.hpp"

#include <scalebench/error.hpp>

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace sb::batch {
namespace {

namespace fs = std::filesystem;

std::string this_host() {
  char buf[HOST_NAME_MAX + 1] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

struct PbsLike : ::testing::Test {
  fs::path dir;
  Environment env;
  void SetUp() override {
    std::string t = (fs::temp_directory_path() / "sb_pbs_like_XXXXXX").string();
    dir = ::mkdtemp(t.data());
    std::ofstream nodefile(dir / "nodefile");
    nodefile << this_host() << "\n" << this_host() << "\n";
    nodefile.close();
    env = current_environment();
    env["PBS_JOBID"] = "4711.pbs-test";
    env["PBS_NODEFILE"] = (dir / "nodefile").string();
    env["PBS_O_WORKDIR"] = dir.string();
    env.erase("SLURM_JOB_ID");
    env.erase("SLURM_JOBID");
    env.erase("CUDA_VISIBLE_DEVICES");
    env.erase("NCPUS");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

TEST_F(PbsLike, DetectPlaceAndPlan) {
  const Allocation alloc = detect_allocation(env, 64, 0, this_host());
  EXPECT_EQ(alloc.scheduler, "pbs");
  EXPECT_EQ(alloc.job_id, "4711.pbs-test");
  ASSERT_EQ(alloc.nodes.size(), 1u);
  EXPECT_EQ(alloc.nodes[0].host, this_host());
  EXPECT_EQ(alloc.nodes[0].cpus, 2);
  EXPECT_EQ(alloc.nodes[0].gpus, 0);
  const auto placement = place_ranks(alloc);
  ASSERT_EQ(placement.size(), 2u);
  LaunchOptions o;
  o.oversubscribe = false;
  o.work_dir = dir.string();
  const LaunchPlan plan = plan_launch(alloc, placement, "/bin/true", {"x"}, o);
  EXPECT_EQ(plan.argv, (std::vector<std::string>{"mpiexec", "--host", this_host() + ":2", "-n", "2",
                                                 "--map-by", "slot", "--bind-to", "none", "-x",
                                                 "SCALEBENCH_PLACEMENT", "/bin/true", "x"}));
  EXPECT_TRUE(plan.files.empty());
  EXPECT_EQ(plan.env.at("SCALEBENCH_PLACEMENT"), "v2:2.0");
}

TEST_F(PbsLike, RealMpiexecPlacesRanks) {
  // PBS_NGPUS=3: four ranks (the scheduler and 3 workers) on a host with 2 PBS slots, so the
  // plan must oversubscribe.
  env["PBS_NGPUS"] = "3";
  const Allocation alloc = detect_allocation(env, 64, 0, this_host());
  const auto placement = place_ranks(alloc);
  ASSERT_EQ(placement.size(), 4u);
  LaunchOptions o;
  o.work_dir = dir.string();
  o.allow_run_as_root = ::geteuid() == 0;
  const std::string probe =
      "echo \"rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-?}} host=$(hostname) "
      "placement=$SCALEBENCH_PLACEMENT\"";
  o.oversubscribe = false;
  LaunchPlan plan = plan_launch(alloc, placement, "/bin/sh", {"-c", probe}, o);
  EXPECT_NE(std::find(plan.argv.begin(), plan.argv.end(), "--oversubscribe"), plan.argv.end());
  write_launch_files(plan);  // nothing to write for a short host list

  // Run the plan: argv as is, plan.env added to this environment, output captured.
  std::string cmd;
  for (const auto& [k, v] : plan.env) cmd += k + "='" + v + "' ";
  cmd += "exec";
  for (const auto& a : plan.argv) {
    std::string q = "'";
    for (const char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    cmd += " " + q + "'";
  }
  cmd += " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  const int rc = ::pclose(p);
  ASSERT_EQ(WEXITSTATUS(rc), 0) << cmd << "\n" << out;
  for (int r = 0; r < 4; ++r)
    EXPECT_NE(out.find("rank=" + std::to_string(r) + " host=" + this_host() +
                       " placement=" + plan.env.at("SCALEBENCH_PLACEMENT")),
              std::string::npos)
        << out;
}

}  // namespace
}  // namespace sb::batch
