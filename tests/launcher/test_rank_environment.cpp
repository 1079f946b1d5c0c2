// What the launcher adds to the ranks' environment (launcher/rank_environment.hpp).
#include <gtest/gtest.h>

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
  for (const auto& [name, value] : rows) ADD_FAILURE() << name << " is documented but not given";
}

}  // namespace
