/// The fused subset-mean kernel and the GPU worker against the CPU reference: block sums of
/// sb::data::normal accumulated in long double, on the tiny preset's blocks and on odd blocks
/// (odd n, odd column offsets and widths, single rows/columns, a Philox counter crossing 2^32).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "scalebench/gpu_context.cuh"
#include "scalebench/gpu_runtime.hpp"
#include "scalebench/philox.hpp"
#include "subset_mean/fused_variants.cuh"
#include "subset_mean/subset_mean_kernel.cuh"
#include "subset_mean/worker_gpu.hpp"

namespace {

using sb::subset_mean::BlockShape;
using sb::subset_mean::GpuMath;

struct Ref {
  double subset = 0;
  double full = 0;
  double abs = 0;  ///< sum of |z|: scale of the rounding differences
};

Ref cpu_block(const BlockShape& b, std::uint64_t seed) {
  long double sub = 0;
  long double full = 0;
  long double abs = 0;
  for (std::int64_t i = b.row0; i < b.row0 + b.rows; ++i) {
    for (std::int64_t j = b.col0; j < b.col0 + b.cols; ++j) {
      const double z = sb::data::normal(seed, static_cast<std::uint64_t>(i * b.n + j));
      full += z;
      abs += std::fabs(z);
      if (i % 2 == 0 && j % 2 == 0) sub += z;
    }
  }
  return {static_cast<double>(sub), static_cast<double>(full), static_cast<double>(abs)};
}

class SubsetMeanGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (sb::visible_gpu_count(&why) == 0) GTEST_SKIP() << why;
    ctx_ = sb::create_gpu_context(0, MPI_COMM_NULL, nullptr);
    SB_CUDA_CHECK(cudaMalloc(&out_, sizeof(sb::subset_mean::FusedResult)));
  }
  void TearDown() override {
    if (out_ != nullptr) (void)cudaFree(out_);
  }

  std::pair<double, double> gpu_block(const BlockShape& b, std::uint64_t seed, GpuMath m,
                                      int unroll = sb::subset_mean::FusedKernel::kDefaultUnroll) {
    return gpu_block(b, seed, sb::subset_mean::fused_variant(m, unroll));
  }

  std::pair<double, double> gpu_block(const BlockShape& b, std::uint64_t seed,
                                      const sb::subset_mean::FusedVariant& v) {
    const sb::subset_mean::FusedKernel k(ctx_->device, ctx_->stream, v);
    SB_CUDA_CHECK(cudaMemsetAsync(out_, 0xFF, sizeof *out_, ctx_->stream));  // poison
    k.launch(b, seed, out_);
    sb::subset_mean::FusedResult h;
    SB_CUDA_CHECK(cudaMemcpyAsync(&h, out_, sizeof h, cudaMemcpyDeviceToHost, ctx_->stream));
    SB_CUDA_CHECK(cudaStreamSynchronize(ctx_->stream));
    EXPECT_NE(h.end_ns, ~0ull) << "end time written";
    EXPECT_NE(h.start_ns, ~0ull) << "start time written";
    EXPECT_LE(h.start_ns, h.end_ns);
    return {h.subset, h.full};
  }

  void check(const BlockShape& b, std::uint64_t seed) {
    const Ref ref = cpu_block(b, seed);
    const double tol = 2e-14 * ref.abs + 1e-300;
    const std::pair<GpuMath, const char*> maths[] = {
        {GpuMath::table, "table"}, {GpuMath::fast, "fast"}, {GpuMath::cuda, "cuda"}};
    const int unrolls[] = {1, 2, 6};
    for (int v = 0; v < 9; ++v) {
      const GpuMath m = maths[v % 3].first;
      const int unroll = unrolls[v / 3];
      const auto [sub, full] = gpu_block(b, seed, m, unroll);
      const std::string name =
          std::string(maths[v % 3].second) + " unroll " + std::to_string(unroll);
      EXPECT_NEAR(sub, ref.subset, tol) << name << " subset, block n=" << b.n << " row0=" << b.row0
                                        << " col0=" << b.col0 << " " << b.rows << "x" << b.cols;
      EXPECT_NEAR(full, ref.full, tol) << name << " full, block n=" << b.n << " row0=" << b.row0
                                       << " col0=" << b.col0 << " " << b.rows << "x" << b.cols;
    }
  }

  sb::GpuContextPtr ctx_;
  sb::subset_mean::FusedResult* out_ = nullptr;
};

TEST_F(SubsetMeanGpu, TaskBlocksCoverTheMatrix) {
  const std::int64_t n = 1001;
  const std::int64_t chunk = 250;
  std::int64_t cells = 0;
  for (std::int64_t t = 0; t < 25; ++t) {
    const auto b = sb::subset_mean::task_block(n, chunk, t);
    EXPECT_EQ(b.row0, (t / 5) * chunk);
    EXPECT_EQ(b.col0, (t % 5) * chunk);
    cells += b.rows * b.cols;
  }
  EXPECT_EQ(cells, n * n);
}

TEST_F(SubsetMeanGpu, TinyPresetBlocks) {
  for (std::int64_t t = 0; t < 16; ++t) check(sb::subset_mean::task_block(2000, 500, t), 42);
}

TEST_F(SubsetMeanGpu, OddBlocks) {
  const BlockShape blocks[] = {
      {1001, 0, 0, 7, 13},
      {1001, 3, 5, 9, 250},
      {1000, 1, 1, 5, 9},
      {1000, 2, 3, 4, 8},
      {1000, 0, 2, 6, 7},
      {7, 0, 0, 7, 7},
      {2, 0, 0, 2, 2},
      {1, 0, 0, 1, 1},
      {999, 998, 0, 1, 999},
      {999, 0, 998, 999, 1},
      {1001, 250, 750, 251, 251},
      {100000, 85899, 34000, 2, 1200},  // pair counters cross 2^32 at element 2^33
      {99999, 85900, 33001, 3, 777},    // the same with odd n
  };
  for (const auto& b : blocks) check(b, 42);
  check({1001, 3, 5, 9, 250}, 0xFFFFFFFFFFFFull);
}

TEST_F(SubsetMeanGpu, WorkloadVariantIsTheTableAtSixPairsPerStep) {
  // The library's own instantiation, against the same template compiled by fused_variants.cuh.
  const auto& w = sb::subset_mean::workload_variant();
  EXPECT_EQ(w.math, GpuMath::table);
  EXPECT_EQ(w.unroll, sb::subset_mean::FusedKernel::kDefaultUnroll);
  for (const BlockShape& b :
       {sb::subset_mean::task_block(2000, 500, 5), BlockShape{1001, 3, 5, 9, 250}}) {
    const Ref ref = cpu_block(b, 42);
    const auto lib = gpu_block(b, 42, w);
    EXPECT_EQ(lib, gpu_block(b, 42, GpuMath::table, 6));
    EXPECT_NEAR(lib.first, ref.subset, 2e-14 * ref.abs);
    EXPECT_NEAR(lib.second, ref.full, 2e-14 * ref.abs);
  }
  EXPECT_THROW((void)sb::subset_mean::fused_variant(GpuMath::table, 3), sb::UsageError);
}

TEST_F(SubsetMeanGpu, LargeBlockIsDeterministicAndAccurate) {
  const BlockShape b{20000, 0, 2000, 2000, 2000};  // a small-preset block: 4e6 draws
  const Ref ref = cpu_block(b, 7);
  const auto first = gpu_block(b, 7, sb::subset_mean::workload_variant());
  const auto again = gpu_block(b, 7, sb::subset_mean::workload_variant());
  EXPECT_EQ(first, again) << "fixed-order reduction must give identical bits";
  EXPECT_NEAR(first.first, ref.subset, 2e-14 * ref.abs);
  EXPECT_NEAR(first.second, ref.full, 2e-14 * ref.abs);
}

TEST_F(SubsetMeanGpu, WorkerRunsTinyPreset) {
  sb::CaseSpec spec;
  spec.workload = "subset-mean";
  spec.path = sb::ExecPath::single_gpu;
  spec.params.set("n", "2000");
  spec.params.set("chunk", "500");
  spec.params.set("seed", "42");
  sb::CaseEnv env;
  env.device = sb::Device::gpu;
  env.gpu = ctx_.get();
  auto worker = sb::subset_mean::make_gpu_worker(spec, env);
  ASSERT_GE(worker->prefetch(), 4);
  for (int repeat = 0; repeat < 2; ++repeat) {
    worker->begin_repeat();
    std::set<std::int64_t> seen;
    std::int64_t next = 0;
    double last_end = 0;
    double busy = 0;  // the union of the tasks' intervals
    while (static_cast<std::int64_t>(seen.size()) < 16) {
      while (next < 16 && worker->in_flight() < static_cast<std::size_t>(worker->prefetch()) + 1)
        worker->submit(next++);
      auto out = worker->poll(true);
      ASSERT_TRUE(out.has_value());
      ASSERT_EQ(out->partial.size(), 2u);
      const Ref ref = cpu_block(sb::subset_mean::task_block(2000, 500, out->task), 42);
      EXPECT_NEAR(out->partial[0], ref.subset, 2e-14 * ref.abs) << "task " << out->task;
      EXPECT_NEAR(out->partial[1], ref.full, 2e-14 * ref.abs) << "task " << out->task;
      EXPECT_EQ(out->bytes, 8 * 500 * 500);
      EXPECT_EQ(out->phase, sb::Phase::compute);
      EXPECT_GE(out->start, 0.0);
      EXPECT_GE(out->end, out->start);
      // one stream: a block's first CTAs may start while the previous block's last ones run,
      // but blocks end in order
      EXPECT_GE(out->end, last_end) << "tasks end in order on one stream";
      busy += out->end - std::max(out->start, last_end);
      last_end = out->end;
      EXPECT_TRUE(seen.insert(out->task).second);
    }
    EXPECT_EQ(worker->in_flight(), 0u);
    EXPECT_FALSE(worker->poll(false).has_value());
    EXPECT_DOUBLE_EQ(worker->phase_times().compute, busy);
    EXPECT_GT(busy, 0.0);
  }
}

}  // namespace
