// Start-up through the launcher and real mpiexec: the report's /system/startup keeps every
// field, each phase fits inside total_s, and the launcher's single-node MPI environment is set
// (or left to the user) as documented in launcher/job_runner.cpp.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
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

/// Runs `scalebench run` on one tiny case (env assignments may precede it); returns the exit
/// code and leaves stderr in DIR/stderr.
int launch(const fs::path& dir, const std::string& env, const std::string& args) {
  const std::string cmd = fmt::format(
      "env {} {} run --preset tiny --workloads subset-mean --paths cpu1 --repeats 1 --warmup 0 "
      "{} > {}/stdout 2> {}/stderr",
      env, SB_LAUNCHER_EXE, args, dir.string(), dir.string());
  const int st = std::system(cmd.c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/// An mpiexec that writes the MPI/hwloc variables it was given to DIR/env.txt, then runs the
/// real one. Returns the environment assignment that makes the launcher use it.
std::string recording_mpiexec(const fs::path& dir) {
  const fs::path script = dir / "mpiexec-recorder";
  std::ofstream(script) << fmt::format(
      "#!/bin/sh\n"
      "env | grep -E '^(OMPI_MCA_pml|OMPI_MCA_btl|HWLOC_PLUGINS_BLACKLIST)=' | sort > {}\n"
      "exec {} \"$@\"\n",
      (dir / "env.txt").string(), SB_MPIEXEC);
  chmod(script.c_str(), 0755);
  return "SCALEBENCH_MPIEXEC=" + script.string();
}

std::map<std::string, std::string> recorded_env(const fs::path& dir) {
  std::map<std::string, std::string> vars;
  std::istringstream in(slurp(dir / "env.txt"));
  for (std::string line; std::getline(in, line);) {
    const auto eq = line.find('=');
    if (eq != std::string::npos) vars[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return vars;
}

/// Runs the tiny job under `env` (assignments and -u NAME for env(1)) through the recording
/// mpiexec; asserts it succeeded and returns the MPI/hwloc variables mpiexec was given.
std::map<std::string, std::string> launch_recorded(const fs::path& dir, const std::string& env) {
  const int rc = launch(dir, env + " " + recording_mpiexec(dir),
                        "--no-ceilings --out " + (dir / "r.h5").string());
  EXPECT_EQ(rc, 0) << slurp(dir / "stderr");
  return recorded_env(dir);
}

/// vars[key], or "" when absent.
std::string value_of(const std::map<std::string, std::string>& vars, const std::string& key) {
  const auto it = vars.find(key);
  return it == vars.end() ? "" : it->second;
}

TEST(Startup, ReportKeepsEveryFieldAndEachPhaseFitsInTheTotal) {
  TempDir dir;
  const fs::path out = dir.path / "startup.h5";
  ASSERT_EQ(launch(dir.path, "", "--out " + out.string()), 0) << slurp(dir.path / "stderr");
  const auto model = sb::results::read_report(out.string());
  const auto& st = model.at("startup");
  const char* phases[] = {"mpi_init_s",         "cuda_init_s",    "nccl_init_s", "ceilings_s",
                          "describe_s",         "cuda_wait_s",    "nccl_wait_s", "launch_to_main_s",
                          "ready_after_main_s", "gpu_libraries_s"};
  ASSERT_TRUE(st.contains("total_s")) << st.dump();
  const double total = st.at("total_s").get<double>();
  EXPECT_GT(total, 0.0);
  for (const char* k : phases) {
    ASSERT_TRUE(st.contains(k)) << k << " missing in " << st.dump();
    const double v = st.at(k).get<double>();
    EXPECT_TRUE(std::isfinite(v)) << k;
    EXPECT_GE(v, 0.0) << k;
    EXPECT_GE(total, v) << k << " exceeds total_s in " << st.dump();
  }
  // Phases that ran: MPI on every rank, the ceilings (not skipped here).
  EXPECT_GT(st.at("mpi_init_s").get<double>(), 0.0);
  EXPECT_GT(st.at("ceilings_s").get<double>(), 0.0);
  // Each is a maximum over ranks: mpi_init_s includes the scheduler's own, which may exceed
  // the workers' time to ready on a loaded machine, so the two are not compared.
  EXPECT_GT(st.at("ready_after_main_s").get<double>(), 0.0);
  // Overlap flags are 0/1 numbers; without GPU workers nothing overlapped.
  for (const char* k : {"cuda_overlapped_mpi_init", "nccl_overlapped_ceilings"}) {
    ASSERT_TRUE(st.contains(k)) << k;
    const double v = st.at(k).get<double>();
    EXPECT_TRUE(v == 0.0 || v == 1.0) << k << " = " << v;
    if (model.at("system").at("gpus").empty()) {
      EXPECT_EQ(v, 0.0) << k;
    }
  }
  if (model.at("system").at("gpus").empty()) {
    EXPECT_EQ(st.at("cuda_init_s").get<double>(), 0.0);
    EXPECT_EQ(st.at("nccl_init_s").get<double>(), 0.0);
  }
}

TEST(Startup, SingleNodeJobUsesSharedMemoryMpiAndNoGpuHwlocPlugins) {
  TempDir dir;
  const auto vars = launch_recorded(dir.path,
                                    "-u OMPI_MCA_pml -u OMPI_MCA_btl -u HWLOC_PLUGINS_BLACKLIST "
                                    "-u HWLOC_COMPONENTS -u SCALEBENCH_MPI_TUNING "
                                    "-u SCALEBENCH_MPIEXEC_ARGS");
  EXPECT_EQ(value_of(vars, "OMPI_MCA_pml"), "ob1");
  EXPECT_EQ(value_of(vars, "OMPI_MCA_btl"), "^tcp,openib,ofi,uct,usnic,smcuda");
  ASSERT_TRUE(vars.count("HWLOC_PLUGINS_BLACKLIST"));
  EXPECT_NE(vars.at("HWLOC_PLUGINS_BLACKLIST").find("hwloc_opencl"), std::string::npos);
}

TEST(Startup, UserMpiSettingsAreLeftAlone) {
  TempDir dir;
  const auto vars = launch_recorded(
      dir.path,
      "-u HWLOC_COMPONENTS -u SCALEBENCH_MPI_TUNING -u SCALEBENCH_MPIEXEC_ARGS -u OMPI_MCA_btl "
      "OMPI_MCA_pml=ob1,ucx HWLOC_PLUGINS_BLACKLIST=hwloc_gl");
  EXPECT_EQ(value_of(vars, "OMPI_MCA_pml"), "ob1,ucx");
  EXPECT_EQ(vars.count("OMPI_MCA_btl"), 0u) << "the user chose the pml: btl left to MPI";
  EXPECT_EQ(value_of(vars, "HWLOC_PLUGINS_BLACKLIST"), "hwloc_gl");
}

TEST(Startup, TuningOffLeavesTheEnvironmentAsItWas) {
  TempDir dir;
  const auto vars = launch_recorded(dir.path,
                                    "-u OMPI_MCA_pml -u OMPI_MCA_btl -u HWLOC_PLUGINS_BLACKLIST "
                                    "-u HWLOC_COMPONENTS -u SCALEBENCH_MPIEXEC_ARGS "
                                    "SCALEBENCH_MPI_TUNING=0");
  EXPECT_TRUE(vars.empty()) << slurp(dir.path / "env.txt");
}

}  // namespace
