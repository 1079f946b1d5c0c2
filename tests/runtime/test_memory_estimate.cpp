// The workloads' memory estimates and the worker's memory check (no MPI job needed).
#include <gtest/gtest.h>

#include <cstdlib>
#include <limits>
#include <string>

#include "groupby/memory_estimate.hpp"
#include "memory_check.hpp"
#include "scalebench/byte_size.hpp"
#include "scalebench/error.hpp"
#include "subset_mean/memory_estimate.hpp"
#include "svd/memory_estimate.hpp"

namespace {

sb::CaseSpec spec_of(const std::string& workload, sb::Params params) {
  sb::CaseSpec s;
  s.workload = workload;
  s.params = std::move(params);
  return s;
}

sb::CaseEnv env_of(sb::Device device, int rank, int size, int threads) {
  sb::CaseEnv e;
  e.device = device;
  e.rank = rank;
  e.size = size;
  e.threads = threads;
  return e;
}

sb::Params svd_params(const std::string& m, const std::string& n, const std::string& chunk) {
  sb::Params p;
  p.set("m", m);
  p.set("n", n);
  p.set("chunk", chunk);
  return p;
}

TEST(MemoryEstimate, SvdCpuHoldsTwoCopiesOfItsShareOfA) {
  // 10^9 x 50 in blocks of 500 rows: A is 400 GB; a worker keeps A_i and U_i of its blocks.
  const auto spec = spec_of("svd", svd_params("1000000000", "50", "500"));
  const double a_bytes = 1e9 * 50 * 8;
  const auto one = sb::svd::memory_needed(spec, env_of(sb::Device::cpu, 0, 1, 2));
  EXPECT_GE(one.host_bytes, 2 * a_bytes);
  EXPECT_LE(one.host_bytes, 2.6 * a_bytes);  // plus R, X, T per block: 2*50*50 + 82*50 doubles
  EXPECT_EQ(one.device_bytes, 0);
  const auto four = sb::svd::memory_needed(spec, env_of(sb::Device::cpu, 3, 4, 2));
  EXPECT_NEAR(four.host_bytes / one.host_bytes, 0.25, 0.01);
}

TEST(MemoryEstimate, SvdGpuMirrorsTheEngineBudget) {
  // The seed-like 10^6 x 1000 case in blocks of 10^5 rows on one GPU: 16 GB of blocks, plus the
  // fixed part, the sketch mode's buffers (Y in fixed point and as doubles, 2n x n each, and 11
  // n x n factors and partial Grams) and 1 GiB of workspaces, within 85% of the free memory.
  const auto spec = spec_of("svd", svd_params("1000000", "1000", "100000"));
  const auto g = sb::svd::memory_needed(spec, env_of(sb::Device::gpu, 0, 1, 1));
  const double blocks = 10 * (2 * 1e5 * 1000 * 8 + 1000 * 8 + 2 * 1e6 * 8);
  EXPECT_GT(g.device_bytes, (blocks + (1 << 30)) / 0.85);
  const double sketch = 2 * 2000 * 1000 * 8 + 11 * 1e6 * 8;
  EXPECT_GT(g.device_bytes, (blocks + sketch + (1 << 30)) / 0.85);
  EXPECT_LT(g.device_bytes, (blocks + sketch + (1 << 30) + 12 * 1e6 * 8 + 1e5) / 0.85);
  EXPECT_LT(g.host_bytes, 1e9);  // validation copy of one block only
}

TEST(MemoryEstimate, SvdBadParametersAreUsageErrors) {
  EXPECT_THROW((void)sb::svd::memory_needed(spec_of("svd", svd_params("1000", "50", "30")),
                                            env_of(sb::Device::cpu, 0, 1, 1)),
               sb::UsageError);
}

TEST(MemoryEstimate, GroupbyByKeyGrowsWithGroupsAndColumnsWithPartition) {
  sb::Params p;
  p.set("rows", "100000000");
  p.set("partition", "5000000");
  p.set("query", "by-key");
  p.set("cardinality", "10000000");
  const auto cpu =
      sb::groupby::memory_needed(spec_of("groupby", p), env_of(sb::Device::cpu, 0, 1, 2));
  // Columns of one task (key, x, y: 24 B a row) plus tables of 10^7 groups in 64-byte slots.
  EXPECT_GT(cpu.host_bytes, 5e6 * 24 + 1e7 * 64);
  EXPECT_LT(cpu.host_bytes, 5e6 * 24 + 4 * 3.2e7 * 64);
  const auto gpu =
      sb::groupby::memory_needed(spec_of("groupby", p), env_of(sb::Device::gpu, 0, 1, 1));
  EXPECT_GT(gpu.device_bytes, 5e6 * 24 + 1e7 * 7 * 8);
  p.set("cardinality", "1000");
  const auto few =
      sb::groupby::memory_needed(spec_of("groupby", p), env_of(sb::Device::cpu, 0, 1, 2));
  EXPECT_LT(few.host_bytes, cpu.host_bytes / 4);
  sb::Params name;
  name.set("days", "30");
  name.set("query", "by-name");
  const auto low =
      sb::groupby::memory_needed(spec_of("groupby", name), env_of(sb::Device::cpu, 0, 2, 1));
  EXPECT_LT(low.host_bytes, 86400.0 * 12 + 1e6);
}

TEST(MemoryEstimate, SubsetMeanDoesNotGrowWithN) {
  sb::Params p;
  p.set("n", "3000000000");
  p.set("chunk", "3000000");
  const auto m =
      sb::subset_mean::memory_needed(spec_of("subset-mean", p), env_of(sb::Device::gpu, 0, 1, 1));
  EXPECT_LE(m.host_bytes, 2 * 3e6 * 8);
  EXPECT_LE(m.device_bytes, 1 << 20);
}

TEST(MemoryCheck, MessagesNameWhatWasNeededAndWhatWasThere) {
  sb::MemoryNeed need;
  need.device_bytes = 81.6e9;
  sb::detail::MemoryBudget budget;
  budget.gpu = 0;
  budget.gpu_free = 79.1e9;
  try {
    sb::detail::check_memory("svd", need, budget);
    FAIL() << "no error";
  } catch (const sb::EnvironmentError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(
                  "svd: needs 76.0 GiB of GPU memory per worker, GPU 0 has 73.7 GiB free", 0),
              0u)
        << e.what();
  }
  need = {};
  need.host_bytes = 945.6e9;
  budget = {};
  budget.host_total = 24.4e9;
  budget.host_sharers = 2;
  try {
    sb::detail::check_memory("svd", need, budget);
    FAIL() << "no error";
  } catch (const sb::EnvironmentError& e) {
    EXPECT_NE(std::string(e.what()).find("svd: needs 881 GiB of host memory per worker, this "
                                         "node has 11.4 GiB available per worker (22.7 GiB shared "
                                         "by the case's 2 workers on it)"),
              std::string::npos)
        << e.what();
  }
  // Fits, or nothing known: no error.
  need.host_bytes = 1e9;
  EXPECT_NO_THROW(sb::detail::check_memory("svd", need, budget));
  need.host_bytes = 1e15;
  EXPECT_NO_THROW(sb::detail::check_memory("svd", need, sb::detail::MemoryBudget{}));
}

// Sizes take binary prefixes wherever scalebench prints one (scalebench/byte_size.hpp).
TEST(MemoryCheck, FormatsBytesWithBinaryPrefixes) {
  EXPECT_EQ(sb::human_bytes(81.6e9), "76.0 GiB");
  EXPECT_EQ(sb::human_bytes(1.5e12), "1.36 TiB");
  EXPECT_EQ(sb::human_bytes(512.0 * 1024 * 1024), "512 MiB");
  EXPECT_EQ(sb::human_bytes(4096), "4.00 KiB");
  EXPECT_EQ(sb::human_bytes(17), "17 B");
  EXPECT_EQ(sb::human_bytes(std::numeric_limits<double>::quiet_NaN()), "-");
}

TEST(MemoryCheck, HostMemoryIsReadAndCanBeOverridden) {
  unsetenv("SCALEBENCH_HOST_MEMORY_BYTES");
  const double avail = sb::detail::host_memory_available();
  EXPECT_GT(avail, 1e6);  // this machine has more than a megabyte free
  EXPECT_LT(avail, 1e16);
  setenv("SCALEBENCH_HOST_MEMORY_BYTES", "123456789", 1);
  EXPECT_EQ(sb::detail::host_memory_available(), 123456789.0);
  unsetenv("SCALEBENCH_HOST_MEMORY_BYTES");
}

}  // namespace
