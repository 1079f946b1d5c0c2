// svd workload, GPU path, against the CPU path on the same deterministic data: generation bits,
// singular values, U (up to column signs), validation on tiny/small and the badly conditioned
// case, every cuSOLVER SVD routine the worker offers.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>
#include <numeric>
#include <thread>
#include <utility>

#include "scalebench/gpu_context.cuh"
#include "scalebench/gpu_runtime.hpp"
#include "svd/config.hpp"
#include "svd/sketch.hpp"
#include "svd/svd.hpp"
#include "svd/svd_data.hpp"
#include "svd/svd_gpu_kernels.cuh"
#include "svd/tsqr_cpu.hpp"
#include "svd/tsqr_gpu.cuh"
#include "svd/tsqr_gpu_detail.cuh"
#include "svd_driver.hpp"
#include "svd_gpu_fixture.cuh"

namespace sb::svd {
namespace {

class SvdGpu : public test::GpuFixture {
 protected:
  CaseEnv env(Device d) {
    CaseEnv e;
    e.device = d;
    e.threads = 2;
    e.comm = MPI_COMM_SELF;
    e.gpu = d == Device::gpu ? ctx_.get() : nullptr;
    return e;
  }
};

std::vector<std::vector<std::int64_t>> all_tasks(std::int64_t blocks, int repeats) {
  std::vector<std::int64_t> t(static_cast<std::size_t>(blocks));
  std::iota(t.begin(), t.end(), 0);
  return std::vector<std::vector<std::int64_t>>(static_cast<std::size_t>(repeats), t);
}

TEST_F(SvdGpu, GenerationIsBitIdenticalToTheCpu) {
  for (std::int64_t n : {50, 51}) {
    Config c;
    c.m = 4000;
    c.n = n;
    c.chunk = 1000;
    c.seed = 0x123456789abcULL;
    c.condition = n == 51 ? 1e8 : 1.0;
    const auto scales = column_scales(c);
    std::vector<double> cpu(static_cast<std::size_t>(c.chunk * n)), gpu(cpu.size());
    generate_block(c, scales.data(), 3, cpu.data());
    double *d = nullptr, *ds = nullptr;
    SB_CUDA_CHECK(cudaMalloc(&d, cpu.size() * sizeof(double)));
    SB_CUDA_CHECK(cudaMalloc(&ds, scales.size() * sizeof(double)));
    // Stream-ordered: the context's stream (non-blocking) does not wait for the legacy stream.
    SB_CUDA_CHECK(cudaMemcpyAsync(ds, scales.data(), scales.size() * sizeof(double),
                                  cudaMemcpyHostToDevice, ctx_->stream));
    gpu::generate_rows(d, c.chunk, 3 * c.chunk, c.chunk, n, c.seed, ds, ctx_->stream);
    SB_CUDA_CHECK(cudaStreamSynchronize(ctx_->stream));
    SB_CUDA_CHECK(cudaMemcpy(gpu.data(), d, gpu.size() * sizeof(double), cudaMemcpyDeviceToHost));
    cudaFree(d);
    cudaFree(ds);
    EXPECT_EQ(std::memcmp(cpu.data(), gpu.data(), cpu.size() * sizeof(double)), 0) << "n=" << n;
  }
}

TEST_F(SvdGpu, SketchIsBitIdenticalToTheCpuTwin) {
  // Two row ranges added into one sketch (a segment boundary inside the second), odd and
  // preset widths, plain and badly conditioned columns.
  for (std::int64_t n : {37, 1000}) {
    Config c;
    c.n = n;
    c.chunk = 5000;
    c.m = 4 * c.chunk;
    c.seed = 0xfeedULL + static_cast<std::uint64_t>(n);
    c.condition = n == 37 ? 1e10 : 1.0;
    const auto scales = column_scales(c);
    std::vector<double> inv(scales.size());
    for (std::size_t j = 0; j < inv.size(); ++j) inv[j] = 1.0 / scales[j];
    const std::int64_t s = sketch_height(n);
    std::vector<double> a(static_cast<std::size_t>(c.chunk * n));
    std::vector<std::int64_t> cpu(static_cast<std::size_t>(s * n), 0), gpu(cpu.size(), 0);
    double *da = nullptr, *dinv = nullptr;
    unsigned long long* dy = nullptr;
    SB_CUDA_CHECK(cudaMalloc(&da, a.size() * sizeof(double)));
    SB_CUDA_CHECK(cudaMalloc(&dinv, inv.size() * sizeof(double)));
    SB_CUDA_CHECK(cudaMalloc(&dy, cpu.size() * sizeof(std::int64_t)));
    SB_CUDA_CHECK(cudaMemcpyAsync(dinv, inv.data(), inv.size() * sizeof(double),
                                  cudaMemcpyHostToDevice, ctx_->stream));
    SB_CUDA_CHECK(cudaMemsetAsync(dy, 0, cpu.size() * sizeof(std::int64_t), ctx_->stream));
    const std::uint64_t key = sketch_key(c.seed);
    for (const std::int64_t block : {std::int64_t{1}, std::int64_t{3}}) {
      generate_block(c, scales.data(), block, a.data());
      sketch_rows_cpu(a.data(), c.chunk, block * c.chunk, c.chunk, n, key, inv.data(), cpu.data());
      // On the context's stream, and waited for: the stream does not sync with cudaMemcpy's
      // legacy stream, so the next block's copy would overwrite da while this sketch reads it.
      SB_CUDA_CHECK(cudaMemcpyAsync(da, a.data(), a.size() * sizeof(double), cudaMemcpyHostToDevice,
                                    ctx_->stream));
      gpu::sketch_rows(da, c.chunk, block * c.chunk, c.chunk, n, key, dinv, dy, ctx_->stream);
      SB_CUDA_CHECK(cudaStreamSynchronize(ctx_->stream));
    }
    SB_CUDA_CHECK(cudaStreamSynchronize(ctx_->stream));
    SB_CUDA_CHECK(
        cudaMemcpy(gpu.data(), dy, gpu.size() * sizeof(std::int64_t), cudaMemcpyDeviceToHost));
    cudaFree(da);
    cudaFree(dinv);
    cudaFree(dy);
    EXPECT_EQ(cpu, gpu) << "n=" << n;
    EXPECT_NE(std::count(cpu.begin(), cpu.end(), 0), static_cast<long>(cpu.size()));
  }
}

/// The CPU engine's answer for cfg on one worker, two threads, by Householder QR (the reference
/// of these tests, independent of the sketch that both engines also have).
std::unique_ptr<CpuTsqr> cpu_reference(Config cfg) {
  cfg.cpu_local = "householder";
  auto cpu = std::make_unique<CpuTsqr>(cfg, 2, MPI_COMM_SELF, cfg.blocks());
  cpu->begin_repeat();
  std::atomic<int> done{0};
  for (std::int64_t b = 0; b < cfg.blocks(); ++b) cpu->submit(b, [&](double, double) { ++done; });
  while (done.load() < cfg.blocks()) std::this_thread::yield();
  PhaseTimes t;
  cpu->finish(t);
  return cpu;
}

/// GPU engine vs CPU engine on one worker: S to 1e-12 relative to s_max, U column by column up
/// to sign.
void compare_engines(GpuContext& ctx, const Config& cfg) {
  const auto reference = cpu_reference(cfg);
  const CpuTsqr& cpu = *reference;

  GpuTsqr gpu(cfg, ctx, MPI_COMM_SELF, 0, 1, 3);
  for (int rep = 0; rep < 2; ++rep) {  // the second repeat reuses every buffer
    gpu.begin_repeat();
    for (std::int64_t b = cfg.blocks(); b-- > 0;) gpu.submit(b);  // reverse order
    PhaseTimes tg;
    gpu.finish(tg);
    EXPECT_GT(tg.compute, 0.0);
  }
  ASSERT_EQ(gpu.sigma().size(), cpu.sigma().size());
  const double smax = cpu.sigma()[0];
  for (std::size_t i = 0; i < cpu.sigma().size(); ++i)
    EXPECT_NEAR(gpu.sigma()[i], cpu.sigma()[i], 1e-12 * smax)
        << "sigma " << i << " " << cfg.gpu_svd;

  // U: the GPU slot of block b is blocks-1-b (reverse submission); the CPU's is b.
  double worst = 0;
  std::vector<std::vector<double>> ug(static_cast<std::size_t>(cfg.blocks()));
  for (int i = 0; i < gpu.blocks_owned(); ++i)
    ug[static_cast<std::size_t>(gpu.block_of(i))] = gpu.u_host(i);
  for (std::int64_t j = 0; j < cfg.n; ++j) {
    double dot = 0;
    for (int i = 0; i < cpu.blocks_owned(); ++i) {
      const double* uc = cpu.u(i) + j * cfg.chunk;
      const double* g = ug[static_cast<std::size_t>(cpu.block_of(i))].data() + j * cfg.chunk;
      for (std::int64_t r = 0; r < cfg.chunk; ++r) dot += uc[r] * g[r];
    }
    const double sign = dot < 0 ? -1.0 : 1.0;
    for (int i = 0; i < cpu.blocks_owned(); ++i) {
      const double* uc = cpu.u(i) + j * cfg.chunk;
      const double* g = ug[static_cast<std::size_t>(cpu.block_of(i))].data() + j * cfg.chunk;
      for (std::int64_t r = 0; r < cfg.chunk; ++r)
        worst = std::max(worst, std::fabs(g[r] - sign * uc[r]));
    }
  }
  EXPECT_LT(worst, 1e-8) << cfg.gpu_svd << " " << cfg.gpu_local;
  EXPECT_EQ(gpu.stacked(), cfg.gpu_stack());
  EXPECT_EQ(gpu.sketched(), cfg.gpu_sketch());
  if (cfg.gpu_sketch())
    EXPECT_STREQ(gpu.local_routine(), cfg.sketch_diag_ratio <= 1 ? "sketch+geqrf" : "sketch");
  const auto v = gpu.validate();
  ASSERT_EQ(v.size(), 3u);
  EXPECT_LT(std::sqrt(v[0] / v[1]), 1e-12) << cfg.gpu_svd;
  EXPECT_LT(v[2], 1e-10) << cfg.gpu_svd;
  // Uniform data is well conditioned: auto takes the Gram eigen-decomposition.
  if (cfg.gpu_svd == "auto" && cfg.condition == 1.0) EXPECT_STREQ(gpu.svd_routine(), "gram");
}

TEST_F(SvdGpu, TinyMatchesCpuWithEverySvdRoutine) {
  for (const char* method : {"auto", "gesvdj", "gesvd", "gesvdp"}) {
    Config cfg = parse(preset("tiny"));
    cfg.gpu_svd = method;
    compare_engines(*ctx_, cfg);
  }
}

TEST_F(SvdGpu, StackedAndPerBlockFirstLevelsMatchCpu) {
  // Square blocks (auto stacks them) and tall blocks (auto factors each), both ways.
  for (const char* local : {"stack", "blocks", "sketch"}) {
    for (const char* preset_name : {"tiny", "small"}) {
      Config cfg = parse(preset(preset_name));
      cfg.gpu_local = local;
      compare_engines(*ctx_, cfg);
    }
    Config square;
    square.m = 1200;
    square.n = 100;
    square.chunk = 100;
    square.gpu_local = local;
    compare_engines(*ctx_, square);
  }
}

TEST_F(SvdGpu, SketchSliceRowsChangeTheSlicesNotTheAnswer) {
  // svd.slice_rows = 1: a row slice per stream; 10^6: one slice for every row. Both match the
  // CPU, as the default (32) does.
  for (const char* rows : {"1", "1000000"}) {
    Params p = preset("small");
    p.set("slice_rows", rows);
    const Config cfg = parse(p);
    ASSERT_TRUE(cfg.gpu_sketch());
    compare_engines(*ctx_, cfg);
  }
}

TEST(SvdGpuSlices, StartOnAlignedRowsAndCoverEveryRow) {
  // A worker's rows of the large preset on four GPUs (500 000 in 8 slices of 62 500, whose even
  // split starts 32 bytes off), a small case, and one with fewer rows than slices x 32.
  constexpr std::int64_t kRows = tsqr_detail::kAlign / sizeof(double);
  for (const auto& [rows, slices] : {std::pair<std::int64_t, std::int64_t>{500000, 8},
                                     {20000, 8},
                                     {2000000, 8},
                                     {80, 8},
                                     {7, 1}}) {
    EXPECT_EQ(tsqr_detail::slice_start(rows, 0, slices), 0);
    EXPECT_EQ(tsqr_detail::slice_start(rows, slices, slices), rows);
    for (std::int64_t p = 1; p < slices; ++p) {
      const std::int64_t r0 = tsqr_detail::slice_start(rows, p, slices);
      EXPECT_EQ(r0 % kRows, 0) << rows << " rows, slice " << p;
      EXPECT_LE(r0, rows * p / slices);
      EXPECT_GT(r0, rows * p / slices - kRows);
      EXPECT_LE(tsqr_detail::slice_start(rows, p - 1, slices), r0);
    }
  }
}

TEST_F(SvdGpu, TracePrintsTheStepsOfEveryFinishOnlyWhenAsked) {
  const Config cfg = parse(preset("tiny"));
  for (const bool trace : {false, true}) {
    GpuTsqr gpu(cfg, *ctx_, MPI_COMM_SELF, 0, 1, 2, trace);
    testing::internal::CaptureStderr();
    for (int rep = 0; rep < 2; ++rep) {
      gpu.begin_repeat();
      for (std::int64_t b = 0; b < cfg.blocks(); ++b) gpu.submit(b);
      PhaseTimes t;
      gpu.finish(t);
    }
    const std::string err = testing::internal::GetCapturedStderr();
    if (!trace) {
      EXPECT_EQ(err.find("svd trace"), std::string::npos) << err;
      continue;
    }
    const std::string head = "svd trace rank 0 (" + std::string(gpu.local_routine()) + "): tasks";
    const std::size_t first = err.find(head);
    ASSERT_NE(first, std::string::npos) << err;
    EXPECT_NE(err.find(head, first + 1), std::string::npos) << err;
  }
}

TEST_F(SvdGpu, SmallMatchesCpu) {
  compare_engines(*ctx_, parse(preset("small")));
}

TEST_F(SvdGpu, AutoFallsBackToJacobiOnBadlyConditionedR) {
  Config cfg;
  cfg.m = 2000;
  cfg.n = 60;
  cfg.chunk = 500;
  cfg.condition = 1e6;
  compare_engines(*ctx_, cfg);
  GpuTsqr gpu(cfg, *ctx_, MPI_COMM_SELF, 0, 1, 2);
  gpu.begin_repeat();
  for (std::int64_t b = 0; b < cfg.blocks(); ++b) gpu.submit(b);
  PhaseTimes t;
  gpu.finish(t);
  EXPECT_STREQ(gpu.svd_routine(), "gesvdj");
}

TEST_F(SvdGpu, SketchCheckFailureFallsBackToHouseholder) {
  // A ratio no Cholesky factor meets: every worker takes geqrf of A_p; answers stay right.
  for (const char* name : {"tiny", "small"}) {
    Config cfg = parse(preset(name));
    cfg.gpu_local = "sketch";
    cfg.sketch_diag_ratio = 1.0;
    compare_engines(*ctx_, cfg);
  }
}

TEST_F(SvdGpu, SketchStaysAccurateOnBadlyConditionedMatrices) {
  // The sketch preconditions cond(A) = 1e8 and 1e12 down to a few: no fallback, and the
  // residual, orthogonality and singular values meet the spec's limits.
  for (const double cond : {1e8, 1e12}) {
    Config cfg = test::make_config(6000, 120, 1000, cond);
    cfg.gpu_local = "sketch";
    const auto reference = cpu_reference(cfg);
    const CpuTsqr& cpu = *reference;
    PhaseTimes t;
    GpuTsqr gpu(cfg, *ctx_, MPI_COMM_SELF, 0, 1, 3);
    gpu.begin_repeat();
    for (std::int64_t b = 0; b < cfg.blocks(); ++b) gpu.submit(b);
    gpu.finish(t);
    EXPECT_STREQ(gpu.local_routine(), "sketch") << cond;
    const double smax = cpu.sigma()[0];
    for (std::size_t i = 0; i < cpu.sigma().size(); ++i)
      EXPECT_NEAR(gpu.sigma()[i], cpu.sigma()[i], 1e-12 * smax) << "sigma " << i << " " << cond;
    const auto v = gpu.validate();
    ASSERT_EQ(v.size(), 3u);
    EXPECT_LT(std::sqrt(v[0] / v[1]), 1e-12) << cond;
    EXPECT_LT(v[2], 1e-10) << cond;
  }
}

TEST_F(SvdGpu, OneBlockAndOddN) {
  Config cfg;
  cfg.m = 300;
  cfg.n = 37;
  cfg.chunk = 300;
  compare_engines(*ctx_, cfg);
  cfg.m = 700;
  cfg.chunk = 100;
  compare_engines(*ctx_, cfg);
}

void workload_case(SvdGpu& t, CaseEnv cpu_env, CaseEnv gpu_env, const CaseSpec& spec) {
  const Workload w = svd_workload();
  const Config cfg = parse(spec.params);
  auto cpu_worker = w.make_worker(spec, cpu_env);
  const auto cpu = test::drive(spec, cpu_env, *cpu_worker, all_tasks(cfg.blocks(), 1));
  auto gpu_worker = w.make_worker(spec, gpu_env);
  const auto gpu = test::drive(spec, gpu_env, *gpu_worker, all_tasks(cfg.blocks(), 2));
  ASSERT_EQ(gpu.results.size(), 2u);
  for (const auto& c : gpu.checks)
    EXPECT_TRUE(c.pass) << c.name << " = " << c.value << " (limit " << c.limit << ")";
  const auto cc = w.cross_check(cpu.fingerprint, gpu.fingerprint);
  ASSERT_EQ(cc.size(), 1u);
  EXPECT_TRUE(cc[0].pass) << cc[0].value;
  const auto times = gpu_worker->phase_times();
  EXPECT_GT(times.compute, 0.0);
  (void)t;
}

TEST_F(SvdGpu, WorkloadTinyAndSmallValidateAndAgreeWithCpu) {
  workload_case(*this, env(Device::cpu), env(Device::gpu), test::make_spec(2000, 50, 500));
  CaseSpec small;
  small.workload = "svd";
  small.params = preset("small");
  workload_case(*this, env(Device::cpu), env(Device::gpu), small);
}

TEST_F(SvdGpu, BadlyConditionedStaysAccurate) {
  for (const char* method : {"auto", "gesvdj", "gesvd", "gesvdp"}) {
    CaseSpec spec = test::make_spec(4000, 100, 1000, 1e8);
    spec.params.set("gpu_svd", method);
    workload_case(*this, env(Device::cpu), env(Device::gpu), spec);
  }
}

}  // namespace
}  // namespace sb::svd
