// What the launcher adds to the ranks' environment (launcher/rank_environment.hpp).
#include <gtest/gtest.h>

#include <cstdlib>

#include "rank_environment.hpp"

namespace {

using Argv = std::vector<std::string>;

TEST(RankEnvironment, OpenBlasIdleThreadsSleepWithinTwoMilliseconds) {
  ::unsetenv("OPENBLAS_THREAD_TIMEOUT");
  sb::batch::LaunchPlan local;
  local.argv = {"mpiexec", "-n", "3", "--bind-to", "none", "rank", "--plan", "p.json"};
  const Argv before = local.argv;
  sb::settle_idle_blas_threads(local);
  EXPECT_EQ(local.env.at("OPENBLAS_THREAD_TIMEOUT"), "22");
  EXPECT_EQ(local.argv, before) << "a local mpiexec passes its environment on";

  sb::batch::LaunchPlan hosts;  // PBS, LSF, SGE: variables for other nodes are named with -x
  hosts.argv = {"mpiexec", "--host", "n1:2,n2:2", "-n", "4", "-x", "SCALEBENCH_PLACEMENT", "rank"};
  sb::settle_idle_blas_threads(hosts);
  EXPECT_EQ(hosts.argv, (Argv{"mpiexec", "--host", "n1:2,n2:2", "-n", "4", "-x",
                              "OPENBLAS_THREAD_TIMEOUT", "-x", "SCALEBENCH_PLACEMENT", "rank"}));
}

TEST(RankEnvironment, TheUsersOwnValueIsKept) {
  ::setenv("OPENBLAS_THREAD_TIMEOUT", "28", 1);
  sb::batch::LaunchPlan plan;
  plan.argv = {"mpiexec", "-n", "2", "-x", "SCALEBENCH_PLACEMENT", "rank"};
  const Argv before = plan.argv;
  sb::settle_idle_blas_threads(plan);
  EXPECT_EQ(plan.env.count("OPENBLAS_THREAD_TIMEOUT"), 0u) << "the rank inherits the user's 28";
  EXPECT_EQ(plan.argv, before);
  ::unsetenv("OPENBLAS_THREAD_TIMEOUT");
}

}  // namespace
