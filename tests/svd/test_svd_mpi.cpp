// svd across real MPI ranks (run under mpiexec -n K): every rank is a worker of one case over
// MPI_COMM_WORLD and calls finish_repeat/validate collectively; rank 0 also plays scheduler.
// Task distributions cover round-robin, an idle worker, and one worker owning everything. These
// shapes are tall (m >= 8n), so cpu_local=auto factors each worker's blocks by the sketch;
// HouseholderAcrossRanks takes the Householder first level. Every repeat's result must name
// the routines that ran (local_routine: rank 0's, then the other workers' distinct values).
#include <gtest/gtest.h>
#include <lapacke.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>

#include "svd/config.hpp"
#include "svd/routines.hpp"
#include "svd/scheduler.hpp"
#include "svd/svd.hpp"
#include "svd_driver.hpp"

namespace sb::svd {
namespace {

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

using Plan = std::vector<std::vector<std::int64_t>>;  // per repeat: this rank's tasks

/// The result's local_routine when the workers that own blocks report `busy` and the others
/// "none" (the join rule itself is tested in test_svd_cpu).
std::string expected_local(const std::vector<bool>& owns, const std::string& busy) {
  std::map<int, std::string> by_rank;
  for (std::size_t r = 0; r < owns.size(); ++r)
    by_rank[static_cast<int>(r)] = owns[r] ? busy : "none";
  return combine_local_routines(by_rank);
}

/// Runs the case with `owner(block, repeat)` deciding which rank factors each block; every
/// repeat's result must name `svd` as the SVD of R and `busy` as the local routine of the
/// workers that own blocks ("none" for the others).
void run_distribution(const CaseSpec& spec, int threads,
                      const std::function<int(std::int64_t, int)>& owner,
                      const std::string& busy = "sketch", const std::string& svd = "gram") {
  const Config cfg = parse(spec.params);
  CaseEnv env;
  env.device = Device::cpu;
  env.rank = world_rank();
  env.size = world_size();
  env.threads = threads;
  env.comm = MPI_COMM_WORLD;
  constexpr int repeats = 2;
  Plan plan(repeats);
  for (int rep = 0; rep < repeats; ++rep)
    for (std::int64_t b = 0; b < cfg.blocks(); ++b)
      if (owner(b, rep) == env.rank) plan[static_cast<std::size_t>(rep)].push_back(b);
  const Workload w = svd_workload();
  auto worker = w.make_worker(spec, env);
  const auto out = test::drive(spec, env, *worker, plan);
  if (env.rank != 0) return;
  ASSERT_EQ(out.results.size(), static_cast<std::size_t>(repeats));
  for (int rep = 0; rep < repeats; ++rep) {
    std::vector<bool> owns(static_cast<std::size_t>(env.size), false);
    for (std::int64_t b = 0; b < cfg.blocks(); ++b)
      owns[static_cast<std::size_t>(owner(b, rep))] = true;
    const auto& r = out.results[static_cast<std::size_t>(rep)];
    EXPECT_EQ(r.at("local_routine"), expected_local(owns, busy)) << "repeat " << rep;
    EXPECT_EQ(r.at("svd_routine"), svd) << "repeat " << rep;
  }
  for (const auto& c : out.checks)
    EXPECT_TRUE(c.pass) << c.name << " = " << c.value << " (limit " << c.limit << ")";
  // Against LAPACK's singular values of the whole matrix, computed here independently.
  const auto ref = reference_singular_values(spec);
  ASSERT_EQ(out.fingerprint.data.size(), ref.size());
  for (std::size_t i = 0; i < ref.size(); ++i)
    EXPECT_NEAR(out.fingerprint.data[i], ref[i], 1e-12 * ref[0]) << "sigma " << i;
}

TEST(SvdMpi, RoundRobinBlocks) {
  EXPECT_TRUE(parse(test::make_spec(3000, 40, 250).params).cpu_sketch());
  run_distribution(test::make_spec(3000, 40, 250), 1,
                   [](std::int64_t b, int) { return static_cast<int>(b % world_size()); });
}

TEST(SvdMpi, IdleWorkerAndChangingOwners) {
  // Rank 1 gets nothing; the owners change between repeats.
  run_distribution(test::make_spec(2000, 50, 500), 1, [](std::int64_t b, int rep) {
    const int s = world_size();
    int r = static_cast<int>((b + rep) % s);
    return r == 1 ? 0 : r;
  });
}

TEST(SvdMpi, LastRankOwnsEverythingWithTwoThreads) {
  run_distribution(test::make_spec(1500, 30, 100), 2,
                   [](std::int64_t, int) { return world_size() - 1; });
}

TEST(SvdMpi, BadlyConditionedAcrossRanks) {
  run_distribution(
      test::make_spec(2400, 60, 200, 1e8), 1,
      [](std::int64_t b, int) { return static_cast<int>((b * 7) % world_size()); }, "sketch",
      "gesdd");
}

TEST(SvdMpi, HouseholderAcrossRanks) {
  for (const double condition : {1.0, 1e8}) {
    CaseSpec spec = test::make_spec(2400, 60, 200, condition);
    spec.params.set("cpu_local", "householder");
    EXPECT_FALSE(parse(spec.params).cpu_sketch());
    run_distribution(
        spec, 2, [](std::int64_t b, int rep) { return static_cast<int>((b + rep) % world_size()); },
        "householder", condition == 1.0 ? "gram" : "gesdd");
  }
}

TEST(SvdMpi, SketchCheckFallbackOnEveryWorker) {
  CaseSpec spec = test::make_spec(2000, 50, 250);
  spec.params.set("sketch_check", "1");  // every worker's check fails: Householder takes over
  run_distribution(
      spec, 1, [](std::int64_t b, int) { return static_cast<int>(b % world_size()); },
      "sketch+householder", "gram");
}

TEST(SvdMpi, SketchWithAnIdleWorkerAndTwoThreads) {
  CaseSpec spec = test::make_spec(2000, 50, 250, 1e10);
  spec.params.set("cpu_local", "sketch");
  run_distribution(
      spec, 2,
      [](std::int64_t b, int) {
        const int s = world_size();
        return s > 1 ? 1 + static_cast<int>(b % (s - 1)) : 0;  // rank 0 owns nothing
      },
      "sketch", "gesdd");
}

}  // namespace
}  // namespace sb::svd

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {  // only rank 0 prints; every rank still runs every test (collectives)
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int rc = RUN_ALL_TESTS();
  int all = 0;
  MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return all;
}
