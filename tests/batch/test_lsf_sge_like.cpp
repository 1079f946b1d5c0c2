/// @file test_lsf_sge_like.cpp
/// LSF- and Grid-Engine-shaped environments on this machine, as test_pbs_like.cpp does for PBS:
/// LSB_JOBID + LSB_DJOB_HOSTFILE (+ LSF_BINDIR holding a blaunch), and JOB_ID + SGE_ROOT +
/// PE_HOSTFILE + NSLOTS, each listing this host. Detection, placement and plan_launch run as the
/// launcher runs them; the mpiexec command is checked word by word, then run with the real
/// mpiexec in that environment (inside an SGE job OpenMPI reads PE_HOSTFILE itself and reaches
/// other hosts through qrsh) to show that every rank starts and sees SCALEBENCH_PLACEMENT.

#include "batch/allocation.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "../support/scratch_dir.hpp"

namespace sb::batch {
namespace {

namespace fs = std::filesystem;
using sb::test_support::TempDir;

std::string this_host() {
  char buf[HOST_NAME_MAX + 1] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

std::string quoted(const std::string& s) {
  std::string q = "'";
  for (const char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

/// The current environment without any batch system's variables, plus `shape`.
Environment shaped(const Environment& shape) {
  Environment env = current_environment();
  for (auto it = env.begin(); it != env.end();) {
    const std::string& k = it->first;
    const bool batch = k.rfind("SLURM_", 0) == 0 || k.rfind("PBS_", 0) == 0 ||
                       k.rfind("LSB_", 0) == 0 || k.rfind("LSF_", 0) == 0 || k == "JOB_ID" ||
                       k == "PE_HOSTFILE" || k == "NSLOTS" || k.rfind("SGE_", 0) == 0 ||
                       k == "ARC" || k == "CUDA_VISIBLE_DEVICES";
    it = batch ? env.erase(it) : std::next(it);
  }
  for (const auto& [k, v] : shape) env[k] = v;
  return env;
}

/// Runs `plan` with the real mpiexec in exactly `env` plus plan.env; returns its output.
std::string run_plan(const LaunchPlan& plan, const Environment& env, int& status) {
  std::string cmd = "exec env -i";
  for (const auto& [k, v] : env) cmd += " " + quoted(k + "=" + v);
  for (const auto& [k, v] : plan.env) cmd += " " + quoted(k + "=" + v);
  for (const auto& a : plan.argv) cmd += " " + quoted(a);
  cmd += " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return {};
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  status = ::pclose(p);
  return out;
}

const char* kProbe =
    "echo \"rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-?}} host=$(hostname) "
    "placement=$SCALEBENCH_PLACEMENT\"";

void expect_all_ranks(const std::string& out, int ranks, const std::string& placement) {
  for (int r = 0; r < ranks; ++r)
    EXPECT_NE(
        out.find("rank=" + std::to_string(r) + " host=" + this_host() + " placement=" + placement),
        std::string::npos)
        << out;
}

TEST(LsfLike, DetectPlanAndRun) {
  TempDir d;
  std::ofstream(d.path / "hostfile") << this_host() << "\n" << this_host() << "\n";
  const fs::path bin = d.path / "bin";
  fs::create_directories(bin);
  std::ofstream(bin / "blaunch") << "#!/bin/sh\nhost=$1; shift; exec sh -c \"$*\"\n";
  fs::permissions(bin / "blaunch", fs::perms::owner_all);
  const Environment env = shaped({{"LSB_JOBID", "31337"},
                                  {"LSB_DJOB_HOSTFILE", (d.path / "hostfile").string()},
                                  {"LSB_DJOB_NUMPROC", "2"},
                                  {"LSB_MCPU_HOSTS", this_host() + " 2"},
                                  {"LSF_BINDIR", bin.string()},
                                  {"LS_SUBCWD", d.path.string()},
                                  {"SCALEBENCH_GPUS_PER_NODE", "2"}});
  const Allocation alloc = detect_allocation(env, 64, 0, this_host());
  EXPECT_EQ(alloc.scheduler, "lsf");
  EXPECT_EQ(alloc.job_id, "31337");
  ASSERT_EQ(alloc.nodes.size(), 1u);
  EXPECT_EQ(alloc.nodes[0].cpus, 2);
  EXPECT_EQ(alloc.nodes[0].gpus, 2);
  EXPECT_EQ(alloc.remote_agent, (bin / "blaunch").string());
  const auto placement = place_ranks(alloc);
  ASSERT_EQ(placement.size(), 3u);
  LaunchOptions o;
  o.oversubscribe = false;
  o.work_dir = d.path.string();
  o.allow_run_as_root = ::geteuid() == 0;
  const LaunchPlan plan = plan_launch(alloc, placement, "/bin/sh", {"-c", kProbe}, o);
  std::vector<std::string> want{"mpiexec",
                                "--host",
                                this_host() + ":3",
                                "-n",
                                "3",
                                "--map-by",
                                "slot",
                                "--bind-to",
                                "none",
                                "-x",
                                "SCALEBENCH_PLACEMENT",
                                "--mca",
                                "plm_rsh_agent",
                                (bin / "blaunch").string(),
                                "--oversubscribe"};
  if (o.allow_run_as_root) want.emplace_back("--allow-run-as-root");
  want.insert(want.end(), {"/bin/sh", "-c", kProbe});
  EXPECT_EQ(plan.argv, want);
  write_launch_files(plan);
  int status = -1;
  const std::string out = run_plan(plan, env, status);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out;
  expect_all_ranks(out, 3, plan.env.at("SCALEBENCH_PLACEMENT"));
}

TEST(SgeLike, DetectPlanAndRun) {
  TempDir d;
  std::ofstream(d.path / "pe_hostfile")
      << this_host() << " 2 all.q@" << this_host() << " UNDEFINED\n";
  // With SGE_ROOT, ARC, PE_HOSTFILE and JOB_ID set, OpenMPI reads the PE_HOSTFILE itself and
  // would start remote daemons with $SGE_ROOT/bin/$ARC/qrsh -inherit (here: a local stand-in).
  const fs::path arc = d.path / "bin" / "lx-amd64";
  fs::create_directories(arc);
  std::ofstream(arc / "qrsh") << "#!/bin/sh\nwhile [ \"${1#-}\" != \"$1\" ]; do shift; done\n"
                                 "shift; exec sh -c \"$*\"\n";
  fs::permissions(arc / "qrsh", fs::perms::owner_all);
  const Environment env = shaped({{"JOB_ID", "4711"},
                                  {"ARC", "lx-amd64"},
                                  {"SGE_TASK_ID", "undefined"},
                                  {"SGE_ROOT", d.path.string()},
                                  {"SGE_CELL", "default"},
                                  {"PE_HOSTFILE", (d.path / "pe_hostfile").string()},
                                  {"NSLOTS", "2"},
                                  {"PE", "mpi"},
                                  {"SGE_O_WORKDIR", d.path.string()}});
  const Allocation alloc = detect_allocation(env, 64, 0, this_host());
  EXPECT_EQ(alloc.scheduler, "sge");
  EXPECT_EQ(alloc.job_id, "4711");
  ASSERT_EQ(alloc.nodes.size(), 1u);
  EXPECT_EQ(alloc.nodes[0].cpus, 2);
  EXPECT_EQ(alloc.nodes[0].gpus, 0);
  const auto placement = place_ranks(alloc);
  ASSERT_EQ(placement.size(), 2u);
  LaunchOptions o;
  o.oversubscribe = false;
  o.work_dir = d.path.string();
  o.allow_run_as_root = ::geteuid() == 0;
  const LaunchPlan plan = plan_launch(alloc, placement, "/bin/sh", {"-c", kProbe}, o);
  std::vector<std::string> want{
      "mpiexec", "--host", this_host() + ":2",    "-n", "2", "--map-by", "slot", "--bind-to",
      "none",    "-x",     "SCALEBENCH_PLACEMENT"};
  if (o.allow_run_as_root) want.emplace_back("--allow-run-as-root");
  want.insert(want.end(), {"/bin/sh", "-c", kProbe});
  EXPECT_EQ(plan.argv, want);
  int status = -1;
  const std::string out = run_plan(plan, env, status);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out;
  expect_all_ranks(out, 2, plan.env.at("SCALEBENCH_PLACEMENT"));
}

}  // namespace
}  // namespace sb::batch
