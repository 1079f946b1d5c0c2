// groupby across several CPU workers under real mpiexec (3 ranks): every rank is a worker of
// one case; finish_repeat combines over MPI_COMM_WORLD (dense reduction for by-name / by-id,
// MPI_Alltoallv shuffle for by-key); rank 0 then compares with a single worker run locally.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>

#include "groupby/protocol.hpp"
#include "harness.hpp"

namespace {

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

void expect_agree(const sb::Params& params) {
  const auto w = sb::groupby_workload();
  const sb::test::CaseRun multi = sb::test::run_mpi(params, MPI_COMM_WORLD, 1);
  if (world_rank() != 0) return;
  SCOPED_TRACE(params.canonical());
  sb::CaseEnv env;
  const sb::test::CaseRun single = sb::test::run_single(params, env, 1);
  for (const auto& ch : multi.checks) EXPECT_TRUE(ch.pass) << ch.name << " " << ch.value;
  ASSERT_FALSE(multi.fingerprint.data.empty());
  for (const auto& ch : w.cross_check(single.fingerprint, multi.fingerprint))
    EXPECT_TRUE(ch.pass) << ch.name << " " << ch.value;
  EXPECT_EQ(multi.result["sum_count"], single.result["sum_count"]);
  EXPECT_EQ(multi.result["groups"], single.result["groups"]);
  ASSERT_TRUE(multi.result.contains("shuffle"));
  const auto& s = multi.result["shuffle"];
  EXPECT_GT(s["bytes"].get<double>(), 0.0);
  EXPECT_GE(s["busbw_gbps"].get<double>(), 0.0);
  if (params.str("query") == "by-key") {
    EXPECT_EQ(s["kind"], "alltoall");
    // Every worker owns a share of the groups; the shares add up to the whole.
    double groups = 0;
    for (const auto& p : multi.finish_partials) {
      EXPECT_GT(p[sb::groupby::kGroups], 0.0);
      EXPECT_GT(p[sb::groupby::kShuffleBytes], 0.0);
      groups += p[sb::groupby::kGroups];
    }
    EXPECT_EQ(groups, single.result["groups"].get<double>());
    // ~2/3 of each worker's send buffer leaves it.
    EXPECT_LT(s["bytes"].get<double>(), s["send_bytes"].get<double>());
  } else {
    EXPECT_EQ(s["kind"], "reduce");
    const auto& ta = multi.result["table"];
    const auto& tb = single.result["table"];
    ASSERT_EQ(ta.size(), tb.size());
    for (const auto& [col, vals] : tb.items()) {
      ASSERT_EQ(ta[col].size(), vals.size()) << col;
      for (std::size_t i = 0; i < vals.size(); ++i) {
        if (vals[i].is_number()) {
          EXPECT_NEAR(ta[col][i].get<double>(), vals[i].get<double>(),
                      1e-9 * std::fabs(vals[i].get<double>()) + 1e-12)
              << col << " " << i;
        } else {
          EXPECT_EQ(ta[col][i], vals[i]);
        }
      }
    }
  }
}

}  // namespace

TEST(GroupbyMpi, ByNameReduces) {
  sb::Params p = sb::groupby_workload().preset("tiny");
  p.set("query", "by-name");
  p.set("partition", "20000");
  expect_agree(sb::groupby_workload().expand(p)[0]);
}

TEST(GroupbyMpi, ByIdReduces) {
  sb::Params p = sb::groupby_workload().preset("tiny");
  p.set("query", "by-id");
  p.set("partition", "20000");
  expect_agree(sb::groupby_workload().expand(p)[0]);
}

TEST(GroupbyMpi, ByKeyShufflesAllToAll) {
  sb::Params p = sb::groupby_workload().preset("tiny");
  p.set("query", "by-key");
  p.set("partition", "20000");
  p.set("cardinality", "50000");
  expect_agree(sb::groupby_workload().expand(p)[0]);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  ::testing::InitGoogleTest(&argc, argv);
  if (world_rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int rc = RUN_ALL_TESTS();
  // A failure on any rank fails the test.
  int worst = 0;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
