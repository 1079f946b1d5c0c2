// comms on CPU workers under real mpiexec (every rank a worker of one multi-cpu case, MPI
// between them): every collective's sweep delivers exact values and its figures, the pair
// matrix measures every ordered pair, and a corrupted result fails the case.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <string>
#include <vector>

#include "comms/collective.hpp"
#include "comms/payload.hpp"
#include "comms/sweep.hpp"
#include "harness.hpp"

namespace {

using sb::comms::test::run_case;

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int world_size() {
  int s = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

sb::Params tiny(const std::string& op) {
  sb::Params p = sb::comms_workload().preset("tiny");
  p.set("op", op);
  return sb::comms_workload().expand(p).at(0);
}

const sb::Check* find(const std::vector<sb::Check>& checks, const std::string& name) {
  for (const auto& c : checks)
    if (c.name == name) return &c;
  return nullptr;
}

TEST(CommsMpi, EveryCollectiveIsExactAndReportsItsSweep) {
  for (const sb::comms::Collective* c : sb::comms::collectives()) {
    const sb::Params p = tiny(std::string(c->name));
    const auto run = run_case(p, MPI_COMM_WORLD);
    if (world_rank() != 0) continue;
    SCOPED_TRACE(c->name);
    for (const auto& ch : run.checks) EXPECT_TRUE(ch.pass) << ch.name << ": " << ch.detail;
    ASSERT_EQ(run.results.size(), 3u);
    const auto& r = run.results.back();
    EXPECT_EQ(r.at("op"), std::string(c->name));
    EXPECT_EQ(r.at("wrong"), 0);
    const auto sizes = sb::comms::sweep_sizes(sb::comms::parse(p), world_size());
    ASSERT_EQ(r.at("sizes").size(), sizes.size());
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      const auto& row = r.at("sizes")[k];
      EXPECT_EQ(row.at("bytes").get<std::int64_t>(), sizes[k].layout.bytes);
      EXPECT_GT(row.at("time_s").get<double>(), 0.0);
      // busbw = algbw * the collective's factor (nccl-tests).
      EXPECT_NEAR(row.at("busbw_gbps").get<double>(),
                  row.at("algbw_gbps").get<double>() * c->bus_factor(world_size()),
                  1e-9 * row.at("algbw_gbps").get<double>());
    }
    const auto& m = run.metrics;
    ASSERT_TRUE(m.contains("sizes"));
    EXPECT_EQ(m.at("sizes").size(), sizes.size());
    EXPECT_GT(m.at("throughput").get<double>(), 0.0);
    EXPECT_EQ(m.at("throughput_unit"), "B/s busbw");
    EXPECT_FALSE(m.contains("efficiency"));  // MPI links have no nominal rate
  }
}

TEST(CommsMpi, ACorruptedResultFailsTheCase) {
  // A real all-reduce whose output one rank then damages: the check finds the element.
  const int n = world_size();
  const auto& ar = *sb::comms::find_collective("all-reduce");
  const sb::comms::Layout l = ar.layout(4096, n);
  std::vector<float> send(static_cast<std::size_t>(l.send)), recv(static_cast<std::size_t>(l.recv));
  sb::comms::fill_payload(9, world_rank(), send.data(), l.send);
  ar.run_mpi(send.data(), recv.data(), l, MPI_COMM_WORLD);
  EXPECT_EQ(sb::comms::count_wrong(ar.expected, 9, world_rank(), n, l.count, 0, recv.data(), l.recv)
                .count,
            0);
  if (world_rank() == 1) recv[17] = -recv[17] + 1.0f;
  const auto w =
      sb::comms::count_wrong(ar.expected, 9, world_rank(), n, l.count, 0, recv.data(), l.recv);
  EXPECT_EQ(w.count, world_rank() == 1 ? 1 : 0);
  if (world_rank() == 1) EXPECT_EQ(w.first, 17);

  // A worker that reports wrong elements for one size fails the case's check, named.
  const auto run =
      run_case(tiny("all-gather"), MPI_COMM_WORLD, 2, [](int rank, std::vector<double>& fin) {
        if (rank == 1) {
          fin[sb::comms::kSweepHeaderWords + 2] = 3;   // 3 wrong elements of the first size
          fin[sb::comms::kSweepHeaderWords + 3] = 11;  // the first at element 11
        }
      });
  if (world_rank() != 0) return;
  const sb::Check* wrong = find(run.checks, "wrong_elements");
  ASSERT_NE(wrong, nullptr);
  EXPECT_FALSE(wrong->pass);
  EXPECT_EQ(wrong->value, 9);  // 3 in each of the warm-up and two timed repeats
  EXPECT_NE(wrong->detail.find("worker 1, element 11"), std::string::npos) << wrong->detail;
}

TEST(CommsMpi, PairMatrixMeasuresEveryOrderedPair) {
  for (const char* schedule : {"serial", "rounds"}) {
    sb::Params p = tiny("pairs");
    p.set("schedule", schedule);
    const auto run = run_case(p, MPI_COMM_WORLD);
    if (world_rank() != 0) continue;
    SCOPED_TRACE(schedule);
    const int n = world_size();
    for (const auto& ch : run.checks) EXPECT_TRUE(ch.pass) << ch.name << ": " << ch.detail;
    const auto& r = run.results.back();
    ASSERT_EQ(r.at("bandwidth_gbps").size(), static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        const double bw = r.at("bandwidth_gbps")[i][j].get<double>();
        if (i == j) {
          EXPECT_EQ(bw, 0.0);
        } else {
          EXPECT_GT(bw, 0.0) << i << "->" << j;
          EXPECT_GT(r.at("latency_us")[i][j].get<double>(), 0.0);
        }
      }
    const auto& m = run.metrics;
    ASSERT_EQ(m.at("links").size(), static_cast<std::size_t>(n * (n - 1)));
    for (const auto& link : m.at("links")) {
      EXPECT_EQ(link.at("kind"), "shared memory");  // one host
      EXPECT_EQ(link.at("transport"), "mpi");
    }
    EXPECT_EQ(m.at("labels")[1], "worker 1");
    EXPECT_TRUE(m.at("notes").is_array());
    EXPECT_GT(m.at("slowest_link_gbps").get<double>(), 0.0);
  }
}

TEST(CommsMpi, ADamagedPairTransferFailsTheCase) {
  const auto run =
      run_case(tiny("pairs"), MPI_COMM_WORLD, 1, [](int rank, std::vector<double>& fin) {
        // The receiver's count of wrong elements from worker 0 (row 0, 4th word after the host).
        if (rank != 1) return;
        const std::size_t host_len = static_cast<std::size_t>(fin[3]);
        fin[4 + host_len + 3] = 5;
      });
  if (world_rank() != 0) return;
  const sb::Check* wrong = find(run.checks, "wrong_elements");
  ASSERT_NE(wrong, nullptr);
  EXPECT_FALSE(wrong->pass);
  EXPECT_NE(wrong->detail.find("from worker 0 to worker 1"), std::string::npos) << wrong->detail;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  ::testing::InitGoogleTest(&argc, argv);
  if (world_rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int rc = RUN_ALL_TESTS();
  int worst = rc;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
