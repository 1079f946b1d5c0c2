// What the launcher adds to the ranks' environment (launcher/rank_environment.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "rank_environment.hpp"

namespace {

using Argv = std::vector<std::string>;

void unset_defaults() {
  for (const auto& d : sb::rank_defaults()) ::unsetenv(d.name);
}

TEST(RankEnvironment, EveryRankGetsTheDefaults) {
  unset_defaults();
  sb::batch::LaunchPlan local;
  local.argv = {"mpiexec", "-n", "3", "--bind-to", "none", "rank", "--plan", "p.json"};
  const Argv before = local.argv;
  sb::add_rank_defaults(local);
  EXPECT_EQ(local.env.at("OPENBLAS_THREAD_TIMEOUT"), "22");
  EXPECT_EQ(local.env.at("CUDA_DEVICE_MAX_CONNECTIONS"), "4");
  EXPECT_EQ(local.argv, before) << "a local mpiexec passes its environment on";

  sb::batch::LaunchPlan hosts;  // PBS, LSF, SGE: variables for other nodes are named with -x
  hosts.argv = {"mpiexec", "--host", "n1:2,n2:2", "-n", "4", "-x", "SCALEBENCH_PLACEMENT", "rank"};
  sb::add_rank_defaults(hosts);
  EXPECT_EQ(hosts.argv,
            (Argv{"mpiexec", "--host", "n1:2,n2:2", "-n", "4", "-x", "CUDA_DEVICE_MAX_CONNECTIONS",
                  "-x", "OPENBLAS_THREAD_TIMEOUT", "-x", "SCALEBENCH_PLACEMENT", "rank"}));
}

TEST(RankEnvironment, TheUsersOwnValuesAreKept) {
  unset_defaults();
  ::setenv("OPENBLAS_THREAD_TIMEOUT", "28", 1);
  ::setenv("CUDA_DEVICE_MAX_CONNECTIONS", "1", 1);
  sb::batch::LaunchPlan plan;
  plan.argv = {"mpiexec", "-n", "2", "-x", "SCALEBENCH_PLACEMENT", "rank"};
  const Argv before = plan.argv;
  sb::add_rank_defaults(plan);
  EXPECT_EQ(plan.env.count("OPENBLAS_THREAD_TIMEOUT"), 0u) << "the rank inherits the user's 28";
  EXPECT_EQ(plan.env.count("CUDA_DEVICE_MAX_CONNECTIONS"), 0u) << "and the user's 1";
  EXPECT_EQ(plan.argv, before);
  unset_defaults();
}

// One call gives a job everything: the defaults, this node's OpenBLAS core type (never named
// with -x: other nodes' CPUs may differ) and, on one node, the MPI and hwloc tuning.
TEST(RankEnvironment, OneCallGivesTheJobItsWholeEnvironment) {
  unset_defaults();
  ::unsetenv("OPENBLAS_CORETYPE");
  ::unsetenv("SCALEBENCH_MPI_TUNING");
  sb::batch::LaunchPlan hosts;
  hosts.argv = {"mpiexec", "--host", "n1:1,n2:1", "-n", "2", "-x", "SCALEBENCH_PLACEMENT", "rank"};
  const std::vector<sb::batch::RankPlacement> two_nodes{{.node = 0}, {.node = 1}};
  sb::add_rank_environment(hosts, two_nodes, {});
  EXPECT_EQ(hosts.env.at("OPENBLAS_THREAD_TIMEOUT"), "22");
  EXPECT_EQ(hosts.env.count("OMPI_MCA_pml"), 0u) << "a job over two nodes: the MPI's business";
  const auto core = sb::openblas_core_type();
  EXPECT_EQ(hosts.env.count("OPENBLAS_CORETYPE"), core ? 1u : 0u);
  if (core) {
    EXPECT_TRUE(*core == "SkylakeX" || *core == "Haswell") << *core;
    EXPECT_EQ(hosts.env.at("OPENBLAS_CORETYPE"), *core);
  }
  EXPECT_EQ(std::count(hosts.argv.begin(), hosts.argv.end(), "OPENBLAS_CORETYPE"), 0);

  sb::batch::LaunchPlan local;
  local.argv = {"mpiexec", "-n", "3", "rank"};
  const std::vector<sb::batch::RankPlacement> one_node{{.node = 0}, {.node = 0}, {.node = 0}};
  sb::add_rank_environment(local, one_node, {});
  EXPECT_EQ(local.env.at("OMPI_MCA_pml"), "ob1");
  EXPECT_EQ(local.env.count("HWLOC_PLUGINS_BLACKLIST"), 1u);
  sb::batch::LaunchPlan chosen;
  chosen.argv = local.argv;
  sb::add_rank_environment(chosen, one_node, {"--mca", "pml", "ucx"});
  EXPECT_EQ(chosen.env.count("OMPI_MCA_pml"), 0u) << "SCALEBENCH_MPIEXEC_ARGS chose the transport";

  ::setenv("OPENBLAS_CORETYPE", "Zen", 1);
  EXPECT_EQ(sb::openblas_core_type(), std::nullopt) << "the user's value is kept";
  ::unsetenv("OPENBLAS_CORETYPE");
  unset_defaults();
}

TEST(RankEnvironment, EveryDefaultIsDocumentedWithItsValue) {
  std::ifstream in(std::filesystem::path(SB_SOURCE_DIR) / "docs/settings.md");
  std::stringstream doc;
  doc << in.rdbuf();
  const std::string text = doc.str();
  const auto section = text.find("## What the ranks' environment gets");
  ASSERT_NE(section, std::string::npos) << "docs/settings.md has no such section";
  std::map<std::string, std::string> rows;  // name -> value
  const std::regex row(R"(^\| `([A-Z][A-Z0-9_]+)` \| ([^|]+) \| .* \|$)");
  std::istringstream lines(text.substr(section));
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_match(line, m, row)) rows[m[1]] = m[2];
  }
  for (const auto& d : sb::rank_defaults()) {
    const auto it = rows.find(d.name);
    ASSERT_NE(it, rows.end()) << d.name << " is not in docs/settings.md";
    EXPECT_EQ(it->second, d.value) << d.name;
    rows.erase(it);
  }
  // Not a fixed default: set where this node's OpenBLAS picks badly (openblas_core_type()).
  EXPECT_EQ(rows.erase("OPENBLAS_CORETYPE"), 1u) << "OPENBLAS_CORETYPE is not in docs/settings.md";
  for (const auto& [name, value] : rows) ADD_FAILURE() << name << " is documented but not given";
}

}  // namespace
