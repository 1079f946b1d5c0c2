/// @file test_lsf_sge.cpp
/// LSF and Grid Engine allocations from shaped environments and temporary node files: detection
/// (hosts, slots, GPUs, job ids, the checks against the batch system's own counts), placement
/// and the mpiexec launch plans, with and without LSF's blaunch.

#include "batch/allocation.hpp"

#include <scalebench/error.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "../support/scratch_dir.hpp"

namespace sb::batch {
namespace {

namespace fs = std::filesystem;
using sb::test_support::TempDir;

std::string write(const TempDir& d, const std::string& name, const std::string& text) {
  const fs::path p = d.path / name;
  std::ofstream(p) << text;
  return p.string();
}

// ---------------------------------------------------------------- LSF

TEST(DetectLsf, HostfileGivesHostsAndSlots) {
  TempDir d;
  const std::string file = write(d, "hosts",
                                 "lsf01\nlsf01\nlsf01\nlsf01\nlsf02\nlsf02\n"
                                 "lsf02\nlsf02\nlsf03\nlsf03\nlsf03\nlsf03\n");
  const Environment env{{"LSB_JOBID", "31337"},          {"LSB_DJOB_HOSTFILE", file},
                        {"LSB_MCPU_HOSTS", "ignored 1"}, {"LSB_DJOB_NUMPROC", "12"},
                        {"LSB_JOBINDEX", "0"},           {"CUDA_VISIBLE_DEVICES", "0,1"}};
  const Allocation a = detect_allocation(env, 64, 8, "lsf01");
  EXPECT_EQ(a.scheduler, "lsf");
  EXPECT_EQ(a.job_id, "31337");
  EXPECT_EQ(a.nodefile, file);
  EXPECT_TRUE(a.remote_agent.empty());
  ASSERT_EQ(a.nodes.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(a.nodes[i].host, "lsf0" + std::to_string(i + 1));
    EXPECT_EQ(a.nodes[i].cpus, 4);
    EXPECT_EQ(a.nodes[i].gpus, 2);  // CUDA_VISIBLE_DEVICES, set by LSF for -gpu jobs
  }
}

TEST(DetectLsf, McpuHostsArraysAndGpuRequest) {
  Environment env{{"LSB_JOBID", "12"},
                  {"LSB_JOBINDEX", "3"},
                  {"LSB_MCPU_HOSTS", "gpuA 8 gpuB 8"},
                  {"SCALEBENCH_GPUS_PER_NODE", "4"},
                  {"CUDA_VISIBLE_DEVICES", "0"}};
  Allocation a = detect_allocation(env, 1, 0, "gpuA");
  EXPECT_EQ(a.job_id, "12[3]");
  EXPECT_TRUE(a.nodefile.empty());
  ASSERT_EQ(a.nodes.size(), 2u);
  EXPECT_EQ(a.nodes[1].host, "gpuB");
  EXPECT_EQ(a.nodes[1].cpus, 8);
  EXPECT_EQ(a.nodes[1].gpus, 4);  // the request the template exported wins
  env.erase("SCALEBENCH_GPUS_PER_NODE");
  env.erase("CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(detect_allocation(env, 1, 3, "gpuA").nodes[0].gpus, 3);  // what this node sees
}

TEST(DetectLsf, BlaunchWhereLsfHasIt) {
  TempDir d;
  const Environment env{
      {"LSB_JOBID", "1"}, {"LSB_MCPU_HOSTS", "a 2 b 2"}, {"LSF_BINDIR", d.path.string()}};
  EXPECT_TRUE(detect_allocation(env, 1, 0, "a").remote_agent.empty());  // no blaunch there
  const std::string blaunch = write(d, "blaunch", "#!/bin/sh\n");
  fs::permissions(blaunch, fs::perms::owner_all);
  EXPECT_EQ(detect_allocation(env, 1, 0, "a").remote_agent, blaunch);
}

TEST(DetectLsf, Errors) {
  EXPECT_THROW((void)detect_allocation({{"LSB_JOBID", "1"}}, 1, 0, "h"), EnvironmentError);
  EXPECT_THROW((void)detect_allocation(
                   {{"LSB_JOBID", "1"}, {"LSB_DJOB_HOSTFILE", "/nonexistent/sb"}}, 1, 0, "h"),
               EnvironmentError);
  EXPECT_THROW((void)detect_allocation(
                   {{"LSB_JOBID", "1"}, {"LSB_MCPU_HOSTS", "a 2 b 2"}, {"LSB_DJOB_NUMPROC", "5"}},
                   1, 0, "h"),
               EnvironmentError);
  EXPECT_THROW(
      (void)detect_allocation({{"LSB_JOBID", "1"}, {"LSB_MCPU_HOSTS", "a 2 b"}}, 1, 0, "h"),
      EnvironmentError);
}

// ---------------------------------------------------------------- Grid Engine

TEST(DetectSge, PeHostfile) {
  TempDir d;
  const std::string pe = write(d, "pe_hostfile",
                               "sge01.cluster 16 all.q@sge01.cluster UNDEFINED\n"
                               "sge02.cluster 16 all.q@sge02.cluster UNDEFINED\n");
  const Environment env{{"JOB_ID", "4711"},       {"SGE_TASK_ID", "undefined"},
                        {"PE_HOSTFILE", pe},      {"NSLOTS", "32"},
                        {"SGE_ROOT", "/opt/sge"}, {"SCALEBENCH_GPUS_PER_NODE", "2"}};
  const Allocation a = detect_allocation(env, 4, 0, "sge01");
  EXPECT_EQ(a.scheduler, "sge");
  EXPECT_EQ(a.job_id, "4711");
  EXPECT_EQ(a.nodefile, pe);
  ASSERT_EQ(a.nodes.size(), 2u);
  EXPECT_EQ(a.nodes[0].host, "sge01.cluster");
  EXPECT_EQ(a.nodes[1].cpus, 16);
  EXPECT_EQ(a.nodes[1].gpus, 2);
}

TEST(DetectSge, ArrayTaskAndSerialJob) {
  const Environment env{
      {"JOB_ID", "88"}, {"SGE_TASK_ID", "5"}, {"SGE_ROOT", "/opt/sge"}, {"NSLOTS", "3"}};
  const Allocation a = detect_allocation(env, 16, 1, "me");
  EXPECT_EQ(a.scheduler, "sge");
  EXPECT_EQ(a.job_id, "88.5");
  ASSERT_EQ(a.nodes.size(), 1u);
  EXPECT_EQ(a.nodes[0].host, "me");
  EXPECT_EQ(a.nodes[0].cpus, 3);
  EXPECT_EQ(a.nodes[0].gpus, 1);
}

TEST(DetectSge, JobIdAloneIsNotGridEngine) {
  // JOB_ID is too common a name to mean Grid Engine by itself.
  EXPECT_EQ(detect_allocation({{"JOB_ID", "1"}}, 2, 0, "me").scheduler, "local");
}

TEST(DetectSge, SlotCountMustMatch) {
  TempDir d;
  const std::string pe = write(d, "pe", "a 4 q U\nb 4 q U\n");
  EXPECT_THROW(
      (void)detect_allocation({{"JOB_ID", "1"}, {"PE_HOSTFILE", pe}, {"NSLOTS", "9"}}, 1, 0, "a"),
      EnvironmentError);
  EXPECT_EQ(detect_allocation({{"JOB_ID", "1"}, {"PE_HOSTFILE", pe}, {"NSLOTS", "8"}}, 1, 0, "a")
                .nodes.size(),
            2u);
}

TEST(DetectOrder, SlurmThenPbsThenLsfThenSge) {
  TempDir d;
  const std::string nodefile = write(d, "n", "p1\n");
  Environment env{{"JOB_ID", "1"}, {"SGE_ROOT", "/sge"}};
  EXPECT_EQ(detect_allocation(env, 1, 0, "h").scheduler, "sge");
  env["LSB_JOBID"] = "2";
  env["LSB_MCPU_HOSTS"] = "l1 1";
  EXPECT_EQ(detect_allocation(env, 1, 0, "h").scheduler, "lsf");
  env["PBS_JOBID"] = "3";
  env["PBS_NODEFILE"] = nodefile;
  EXPECT_EQ(detect_allocation(env, 1, 0, "h").scheduler, "pbs");
  env["SLURM_JOB_ID"] = "4";
  EXPECT_EQ(detect_allocation(env, 1, 0, "h").scheduler, "slurm");
}

// ---------------------------------------------------------------- launch plans

TEST(PlanLsfSge, MpiexecHostList) {
  Allocation a;
  a.job_id = "9";
  a.nodes = {{"n1", 4, 2}, {"n2", 4, 2}};
  const auto p = place_ranks(a);
  LaunchOptions o;
  o.oversubscribe = false;
  for (const char* scheduler : {"lsf", "sge"}) {
    a.scheduler = scheduler;
    const LaunchPlan plan = plan_launch(a, p, "rank", {"--plan", "x"}, o);
    EXPECT_EQ(plan.argv, (std::vector<std::string>{"mpiexec", "--host", "n1:3,n2:2", "-n", "5",
                                                   "--map-by", "slot", "--bind-to", "none", "-x",
                                                   "SCALEBENCH_PLACEMENT", "rank", "--plan", "x"}))
        << scheduler;
    EXPECT_EQ(plan.env.at("SCALEBENCH_PLACEMENT"), "v2:4.2*2");
  }
  // LSF with blaunch: mpiexec starts its remote daemons through it.
  a.scheduler = "lsf";
  a.remote_agent = "/opt/lsf/bin/blaunch";
  const LaunchPlan plan = plan_launch(a, p, "rank", {}, o);
  EXPECT_EQ(plan.argv,
            (std::vector<std::string>{"mpiexec", "--host", "n1:3,n2:2", "-n", "5", "--map-by",
                                      "slot", "--bind-to", "none", "-x", "SCALEBENCH_PLACEMENT",
                                      "--mca", "plm_rsh_agent", "/opt/lsf/bin/blaunch", "rank"}));
}

TEST(PlanLsfSge, HugeListsGoToTheWorkFolder) {
  Allocation a;
  a.scheduler = "sge";
  a.job_id = "77.3";
  for (int i = 0; i < 4000; ++i)
    a.nodes.push_back({"sge-node-" + std::to_string(i) + ".example", 32, 0});
  LaunchOptions o;
  o.work_dir = "/scratch/run/.scalebench-1";
  const LaunchPlan plan = plan_launch(a, place_ranks(a), "r", {}, o);
  ASSERT_EQ(plan.files.size(), 1u);
  EXPECT_EQ(plan.files[0].path, "/scratch/run/.scalebench-1/scalebench-sge-77.3.hostfile");
  EXPECT_EQ(plan.argv.at(1), "--hostfile");
  EXPECT_EQ(plan.files[0].content.substr(0, 42), "sge-node-0.example slots=2\nsge-node-1.exam");
}

}  // namespace
}  // namespace sb::batch
