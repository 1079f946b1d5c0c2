// svd workload on one GPU (SPEC 4.2 and 10): one timed repeat per iteration through the
// WorkerCase contract (generation + geqrf per block over 4 streams, stacked-R geqrf, SVD of R,
// ormqr for the pieces of U, or the sketch-preconditioned Cholesky QR), for each first QR level
// and cuSOLVER SVD routine, and the cuSOLVER stages alone.
//
//   build-gpu/bench/bench_svd_gpu --benchmark_counters_tabular=true
//
// Counters: GFLOP/s at the SPEC's count 6mn^2 per repeat; stages at their own flop counts.
#include <benchmark/benchmark.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "scalebench/gpu_context.cuh"
#include "scalebench/gpu_runtime.hpp"
#include "svd/config.hpp"
#include "svd/svd.hpp"
#include "svd/svd_gpu_kernels.cuh"
#include "svd/tsqr_gpu.cuh"

namespace {

sb::GpuContext* context() {
  static sb::GpuContextPtr ctx = sb::create_gpu_context(0, MPI_COMM_NULL, nullptr);
  return ctx.get();
}

void set_gflops(benchmark::State& state, double flops_per_iteration) {
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops_per_iteration * 1e-9 * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
}

/// One repeat per iteration (finish_repeat is synchronous, so wall time is GPU time).
void bm_case(benchmark::State& state, std::int64_t m, std::int64_t n, std::int64_t chunk,
             const std::string& method) {
  const sb::Workload w = sb::svd_workload();
  sb::CaseSpec spec;
  spec.workload = "svd";
  spec.params.set("m", std::to_string(m));
  spec.params.set("n", std::to_string(n));
  spec.params.set("chunk", std::to_string(chunk));
  spec.params.set("seed", "42");
  spec.params.set("condition", "1");
  spec.params.set("gpu_svd", method);
  const sb::svd::Config cfg = sb::svd::parse(spec.params);
  sb::CaseEnv env;
  env.device = sb::Device::gpu;
  env.gpu = context();
  env.comm = MPI_COMM_SELF;
  auto worker = w.make_worker(spec, env);
  sb::PhaseTimes last;
  for (auto _ : state) {
    worker->begin_repeat();
    std::int64_t next = 0;
    const auto depth = static_cast<std::size_t>(worker->prefetch());
    while (next < cfg.blocks() || worker->in_flight() > 0) {
      while (next < cfg.blocks() && worker->in_flight() < depth) worker->submit(next++);
      (void)worker->poll(true);
    }
    auto sigma = worker->finish_repeat();
    benchmark::DoNotOptimize(sigma.data());
    last = worker->phase_times();
  }
  state.counters["generate_ms"] = 1e3 * last.generate;
  set_gflops(state, cfg.flops());
}

/// The engine alone, with a chosen number of streams; counter gram = 1 when the SVD of R took
/// the Gram eigen-decomposition.
void bm_engine(benchmark::State& state, std::int64_t m, std::int64_t n, std::int64_t chunk,
               const std::string& method, int streams, const std::string& local) {
  sb::svd::Config cfg;
  cfg.m = m;
  cfg.n = n;
  cfg.chunk = chunk;
  cfg.gpu_svd = method;
  cfg.gpu_local = local;
  sb::svd::GpuTsqr engine(cfg, *context(), MPI_COMM_SELF, 0, 1, streams);
  sb::PhaseTimes t;
  for (auto _ : state) {
    engine.begin_repeat();
    for (std::int64_t b = 0; b < cfg.blocks(); ++b) engine.submit(b);
    t = {};
    engine.finish(t);
  }
  state.counters["gram"] = std::string(engine.svd_routine()) == "gram" ? 1 : 0;
  state.counters["sketch"] = std::string(engine.local_routine()) == "sketch" ? 1 : 0;
  set_gflops(state, cfg.flops());
}

/// cuSOLVER stages, timed with events on the context's stream.
struct Buffers {
  double* a = nullptr;
  double* b = nullptr;
  double* tau = nullptr;
  double* work = nullptr;
  int* info = nullptr;
  double* s = nullptr;
  double* u = nullptr;
  double* v = nullptr;
  Buffers(std::int64_t m, std::int64_t n, std::size_t work_doubles) {
    SB_CUDA_CHECK(cudaMalloc(&a, sizeof(double) * m * n));
    SB_CUDA_CHECK(cudaMalloc(&b, sizeof(double) * m * n));
    SB_CUDA_CHECK(cudaMalloc(&tau, sizeof(double) * n));
    SB_CUDA_CHECK(cudaMalloc(&work, sizeof(double) * work_doubles));
    SB_CUDA_CHECK(cudaMalloc(&info, sizeof(int)));
    SB_CUDA_CHECK(cudaMalloc(&s, sizeof(double) * n));
    SB_CUDA_CHECK(cudaMalloc(&u, sizeof(double) * n * n));
    SB_CUDA_CHECK(cudaMalloc(&v, sizeof(double) * n * n));
  }
  ~Buffers() {
    for (void* p : {static_cast<void*>(a), static_cast<void*>(b), static_cast<void*>(tau),
                    static_cast<void*>(work), static_cast<void*>(info), static_cast<void*>(s),
                    static_cast<void*>(u), static_cast<void*>(v)})
      cudaFree(p);
  }
};

template <typename F>
void time_events(benchmark::State& state, cudaStream_t st, F&& body) {
  cudaEvent_t e0, e1;
  SB_CUDA_CHECK(cudaEventCreate(&e0));
  SB_CUDA_CHECK(cudaEventCreate(&e1));
  body();  // untimed: loads the library's kernels (lazy module loading) and warms its caches
  SB_CUDA_CHECK(cudaStreamSynchronize(st));
  for (auto _ : state) {
    SB_CUDA_CHECK(cudaEventRecord(e0, st));
    body();
    SB_CUDA_CHECK(cudaEventRecord(e1, st));
    SB_CUDA_CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    SB_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    state.SetIterationTime(1e-3 * ms);
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
}

double* scales_on_device(std::int64_t n) {
  static double* d = nullptr;
  static std::int64_t have = 0;
  if (have < n) {
    if (d) cudaFree(d);
    std::vector<double> ones(static_cast<std::size_t>(n), 1.0);
    SB_CUDA_CHECK(cudaMalloc(&d, sizeof(double) * n));
    SB_CUDA_CHECK(cudaMemcpy(d, ones.data(), sizeof(double) * n, cudaMemcpyHostToDevice));
    have = n;
  }
  return d;
}

void bm_geqrf(benchmark::State& state) {
  const std::int64_t m = state.range(0), n = state.range(1);
  auto* ctx = context();
  auto h = ctx->cusolver();
  int lw = 0;
  Buffers b(m, n, 1);
  SB_CUSOLVER_CHECK(cusolverDnDgeqrf_bufferSize(h, m, n, b.a, m, &lw));
  double* work = nullptr;
  SB_CUDA_CHECK(cudaMalloc(&work, sizeof(double) * lw));
  sb::svd::gpu::generate_rows(b.b, m, 0, m, n, 42, scales_on_device(n), ctx->stream);
  time_events(state, ctx->stream, [&] {
    SB_CUDA_CHECK(
        cudaMemcpyAsync(b.a, b.b, sizeof(double) * m * n, cudaMemcpyDeviceToDevice, ctx->stream));
    SB_CUSOLVER_CHECK(cusolverDnDgeqrf(h, m, n, b.a, m, b.tau, work, lw, b.info));
  });
  cudaFree(work);
  const double dm = static_cast<double>(m), dn = static_cast<double>(n);
  set_gflops(state, 2 * dm * dn * dn - 2.0 / 3.0 * dn * dn * dn);
}

/// The 64-bit API (cusolverDnXgeqrf), in case its implementation differs.
void bm_xgeqrf(benchmark::State& state) {
  const std::int64_t m = state.range(0), n = state.range(1);
  auto* ctx = context();
  auto h = ctx->cusolver();
  cusolverDnParams_t p = nullptr;
  SB_CUSOLVER_CHECK(cusolverDnCreateParams(&p));
  Buffers b(m, n, 1);
  std::size_t dev_bytes = 0, host_bytes = 0;
  SB_CUSOLVER_CHECK(cusolverDnXgeqrf_bufferSize(h, p, m, n, CUDA_R_64F, b.a, m, CUDA_R_64F, b.tau,
                                                CUDA_R_64F, &dev_bytes, &host_bytes));
  void* work = nullptr;
  SB_CUDA_CHECK(cudaMalloc(&work, dev_bytes + 8));
  std::vector<char> hwork(host_bytes + 8);
  sb::svd::gpu::generate_rows(b.b, m, 0, m, n, 42, scales_on_device(n), ctx->stream);
  time_events(state, ctx->stream, [&] {
    SB_CUDA_CHECK(
        cudaMemcpyAsync(b.a, b.b, sizeof(double) * m * n, cudaMemcpyDeviceToDevice, ctx->stream));
    SB_CUSOLVER_CHECK(cusolverDnXgeqrf(h, p, m, n, CUDA_R_64F, b.a, m, CUDA_R_64F, b.tau,
                                       CUDA_R_64F, work, dev_bytes, hwork.data(), host_bytes,
                                       b.info));
  });
  cudaFree(work);
  cusolverDnDestroyParams(p);
  const double dm = static_cast<double>(m), dn = static_cast<double>(n);
  set_gflops(state, 2 * dm * dn * dn - 2.0 / 3.0 * dn * dn * dn);
}

void bm_ormqr(benchmark::State& state) {
  const std::int64_t m = state.range(0), n = state.range(1);
  auto* ctx = context();
  auto h = ctx->cusolver();
  Buffers b(m, n, 1);
  sb::svd::gpu::generate_rows(b.a, m, 0, m, n, 42, scales_on_device(n), ctx->stream);
  int lw = 0, lw2 = 0;
  SB_CUSOLVER_CHECK(cusolverDnDgeqrf_bufferSize(h, m, n, b.a, m, &lw));
  SB_CUSOLVER_CHECK(cusolverDnDormqr_bufferSize(h, CUBLAS_SIDE_LEFT, CUBLAS_OP_N, m, n, n, b.a, m,
                                                b.tau, b.b, m, &lw2));
  lw = std::max(lw, lw2);
  double* work = nullptr;
  SB_CUDA_CHECK(cudaMalloc(&work, sizeof(double) * lw));
  SB_CUSOLVER_CHECK(cusolverDnDgeqrf(h, m, n, b.a, m, b.tau, work, lw, b.info));
  time_events(state, ctx->stream, [&] {
    sb::svd::gpu::pad_copy(b.b, m, m, n, b.a, m, n, true, ctx->stream);  // [X; 0] stand-in
    SB_CUSOLVER_CHECK(cusolverDnDormqr(h, CUBLAS_SIDE_LEFT, CUBLAS_OP_N, m, n, n, b.a, m, b.tau,
                                       b.b, m, work, lw, b.info));
  });
  cudaFree(work);
  const double dm = static_cast<double>(m), dn = static_cast<double>(n);
  set_gflops(state, 4 * dm * dn * dn - 2 * dn * dn * dn);
}

/// A new n x n Gram matrix (upper triangle) of a uniform n x n block, generated into b.b.
double* uniform_gram(sb::GpuContext& ctx, Buffers& b, int n) {
  sb::svd::gpu::generate_rows(b.b, n, 0, n, n, 42, scales_on_device(n), ctx.stream);
  const double one = 1.0, zero = 0.0;
  double* g = nullptr;
  SB_CUDA_CHECK(cudaMalloc(&g, sizeof(double) * n * n));
  SB_CUBLAS_CHECK(cublasDsyrk(ctx.cublas(), CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T, n, n, &one, b.b, n,
                              &zero, g, n));
  return g;
}

/// Eigen-decomposition (syevd) of an n x n Gram matrix R^T R.
void bm_syevd(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  auto* ctx = context();
  auto h = ctx->cusolver();
  Buffers b(n, n, 1);
  double* g = uniform_gram(*ctx, b, n);
  int lw = 0;
  SB_CUSOLVER_CHECK(cusolverDnDsyevd_bufferSize(h, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER,
                                                n, b.a, n, b.s, &lw));
  double* work = nullptr;
  SB_CUDA_CHECK(cudaMalloc(&work, sizeof(double) * lw));
  time_events(state, ctx->stream, [&] {
    SB_CUDA_CHECK(
        cudaMemcpyAsync(b.a, g, sizeof(double) * n * n, cudaMemcpyDeviceToDevice, ctx->stream));
    SB_CUSOLVER_CHECK(cusolverDnDsyevd(h, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, n, b.a,
                                       n, b.s, work, lw, b.info));
  });
  cudaFree(work);
  cudaFree(g);
}

/// Cholesky of an n x n Gram matrix (the sketch's R_s and R_c each take one): 0 = Dpotrf,
/// 1 = Xpotrf (64-bit API), 2 = the matrix copy alone, which the other two include.
void bm_potrf(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const int variant = static_cast<int>(state.range(1));
  auto* ctx = context();
  auto h = ctx->cusolver();
  Buffers b(n, n, 1);
  double* g = uniform_gram(*ctx, b, n);
  int lw = 0;
  SB_CUSOLVER_CHECK(cusolverDnDpotrf_bufferSize(h, CUBLAS_FILL_MODE_UPPER, n, b.a, n, &lw));
  std::size_t dev_bytes = sizeof(double) * static_cast<std::size_t>(lw), host_bytes = 0;
  cusolverDnParams_t params = nullptr;
  SB_CUSOLVER_CHECK(cusolverDnCreateParams(&params));
  SB_CUSOLVER_CHECK(cusolverDnXpotrf_bufferSize(h, params, CUBLAS_FILL_MODE_UPPER, n, CUDA_R_64F,
                                                b.a, n, CUDA_R_64F, &dev_bytes, &host_bytes));
  dev_bytes = std::max(dev_bytes, sizeof(double) * static_cast<std::size_t>(lw));
  void* work = nullptr;
  SB_CUDA_CHECK(cudaMalloc(&work, dev_bytes));
  std::vector<char> host_work(std::max<std::size_t>(1, host_bytes));
  time_events(state, ctx->stream, [&] {
    SB_CUDA_CHECK(
        cudaMemcpyAsync(b.a, g, sizeof(double) * n * n, cudaMemcpyDeviceToDevice, ctx->stream));
    if (variant == 0) {
      SB_CUSOLVER_CHECK(cusolverDnDpotrf(h, CUBLAS_FILL_MODE_UPPER, n, b.a, n,
                                         static_cast<double*>(work), lw, b.info));
    } else if (variant == 1) {
      SB_CUSOLVER_CHECK(cusolverDnXpotrf(h, params, CUBLAS_FILL_MODE_UPPER, n, CUDA_R_64F, b.a, n,
                                         CUDA_R_64F, work, dev_bytes, host_work.data(), host_bytes,
                                         b.info));
    }
  });
  cusolverDnDestroyParams(params);
  cudaFree(work);
  cudaFree(g);
}

/// The same eigen-decomposition by other cuSOLVER routines: 0 = Xsyevd (64-bit API), 1 = syevj
/// (Jacobi, default tolerance), 2 = Ssyevd (fp32, for scale); and its parts: 3 = syevd without
/// vectors, 4 = the tridiagonal reduction (sytrd) alone, 5 = Xsyevdx for the lowest quarter of
/// the eigenpairs, 6 = Xsyevdx for all of them (what splitting the vectors over GPUs would save).
void bm_syevd_alt(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const int method = static_cast<int>(state.range(1));
  auto* ctx = context();
  auto h = ctx->cusolver();
  Buffers b(n, n, 1);
  double* g = uniform_gram(*ctx, b, n);
  float* gf = reinterpret_cast<float*>(b.u);  // n x n floats fit in an n x n double buffer
  float* wf = reinterpret_cast<float*>(b.v);
  float* pristine = reinterpret_cast<float*>(b.b);  // G in fp32 (b.b is free after the syrk)
  {
    std::vector<double> gh(static_cast<std::size_t>(n) * n);
    SB_CUDA_CHECK(cudaMemcpy(gh.data(), g, gh.size() * sizeof(double), cudaMemcpyDeviceToHost));
    std::vector<float> gfh(gh.begin(), gh.end());
    SB_CUDA_CHECK(
        cudaMemcpy(pristine, gfh.data(), gfh.size() * sizeof(float), cudaMemcpyHostToDevice));
  }
  cusolverDnParams_t dp = nullptr;
  syevjInfo_t jp = nullptr;
  SB_CUSOLVER_CHECK(cusolverDnCreateParams(&dp));
  SB_CUSOLVER_CHECK(cusolverDnCreateSyevjInfo(&jp));
  std::size_t dev_bytes = 0, host_bytes = 0;
  int lw = 0;
  double bounds[2] = {0, 0};  // Xsyevdx's value range, unused with an index range
  if (method == 0) {
    SB_CUSOLVER_CHECK(cusolverDnXsyevd_bufferSize(
        h, dp, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, n, CUDA_R_64F, b.a, n, CUDA_R_64F,
        b.s, CUDA_R_64F, &dev_bytes, &host_bytes));
  } else if (method == 1) {
    SB_CUSOLVER_CHECK(cusolverDnDsyevj_bufferSize(h, CUSOLVER_EIG_MODE_VECTOR,
                                                  CUBLAS_FILL_MODE_UPPER, n, b.a, n, b.s, &lw, jp));
    dev_bytes = sizeof(double) * static_cast<std::size_t>(lw);
  } else if (method == 3) {
    SB_CUSOLVER_CHECK(cusolverDnDsyevd_bufferSize(h, CUSOLVER_EIG_MODE_NOVECTOR,
                                                  CUBLAS_FILL_MODE_UPPER, n, b.a, n, b.s, &lw));
    dev_bytes = sizeof(double) * static_cast<std::size_t>(lw);
  } else if (method == 4) {
    SB_CUSOLVER_CHECK(
        cusolverDnDsytrd_bufferSize(h, CUBLAS_FILL_MODE_UPPER, n, b.a, n, b.s, b.s, b.tau, &lw));
    dev_bytes = sizeof(double) * static_cast<std::size_t>(lw);
  } else if (method == 5 || method == 6) {
    std::int64_t found = 0;
    SB_CUSOLVER_CHECK(cusolverDnXsyevdx_bufferSize(
        h, dp, CUSOLVER_EIG_MODE_VECTOR, CUSOLVER_EIG_RANGE_I, CUBLAS_FILL_MODE_UPPER, n,
        CUDA_R_64F, b.a, n, &bounds[0], &bounds[1], 1, method == 5 ? n / 4 : n, &found, CUDA_R_64F,
        b.s, CUDA_R_64F, &dev_bytes, &host_bytes));
  } else {
    SB_CUSOLVER_CHECK(cusolverDnSsyevd_bufferSize(h, CUSOLVER_EIG_MODE_VECTOR,
                                                  CUBLAS_FILL_MODE_UPPER, n, gf, n, wf, &lw));
    dev_bytes = sizeof(float) * static_cast<std::size_t>(lw);
  }
  void* work = nullptr;
  SB_CUDA_CHECK(cudaMalloc(&work, dev_bytes + 8));
  std::vector<char> hwork(host_bytes + 8);
  time_events(state, ctx->stream, [&] {
    if (method == 2) {
      SB_CUDA_CHECK(cudaMemcpyAsync(gf, pristine, sizeof(float) * n * n, cudaMemcpyDeviceToDevice,
                                    ctx->stream));
      SB_CUSOLVER_CHECK(cusolverDnSsyevd(h, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, n, gf,
                                         n, wf, static_cast<float*>(work), lw, b.info));
      return;
    }
    SB_CUDA_CHECK(
        cudaMemcpyAsync(b.a, g, sizeof(double) * n * n, cudaMemcpyDeviceToDevice, ctx->stream));
    if (method == 0) {
      SB_CUSOLVER_CHECK(cusolverDnXsyevd(h, dp, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, n,
                                         CUDA_R_64F, b.a, n, CUDA_R_64F, b.s, CUDA_R_64F, work,
                                         dev_bytes, hwork.data(), host_bytes, b.info));
    } else if (method == 3) {
      SB_CUSOLVER_CHECK(cusolverDnDsyevd(h, CUSOLVER_EIG_MODE_NOVECTOR, CUBLAS_FILL_MODE_UPPER, n,
                                         b.a, n, b.s, static_cast<double*>(work),
                                         static_cast<int>(dev_bytes / sizeof(double)), b.info));
    } else if (method == 4) {
      // d and e land in u's first two columns (free here), tau in b.tau.
      SB_CUSOLVER_CHECK(cusolverDnDsytrd(h, CUBLAS_FILL_MODE_UPPER, n, b.a, n, b.u, b.u + n, b.tau,
                                         static_cast<double*>(work),
                                         static_cast<int>(dev_bytes / sizeof(double)), b.info));
    } else if (method == 5 || method == 6) {
      std::int64_t found = 0;
      SB_CUSOLVER_CHECK(cusolverDnXsyevdx(
          h, dp, CUSOLVER_EIG_MODE_VECTOR, CUSOLVER_EIG_RANGE_I, CUBLAS_FILL_MODE_UPPER, n,
          CUDA_R_64F, b.a, n, &bounds[0], &bounds[1], 1, method == 5 ? n / 4 : n, &found,
          CUDA_R_64F, b.s, CUDA_R_64F, work, dev_bytes, hwork.data(), host_bytes, b.info));
    } else {
      SB_CUSOLVER_CHECK(cusolverDnDsyevj(h, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, n,
                                         b.a, n, b.s, static_cast<double*>(work), lw, b.info, jp));
    }
  });
  cudaFree(work);
  cudaFree(g);
  cusolverDnDestroyParams(dp);
  cusolverDnDestroySyevjInfo(jp);
}

/// SVD of an n x n upper triangular R: 0 = gesvdj, 1 = gesvd, 2 = gesvdp.
void bm_svd_r(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const int method = static_cast<int>(state.range(1));
  auto* ctx = context();
  auto h = ctx->cusolver();
  Buffers b(n, n, 1);
  // R of a uniform n x n block.
  int lw = 0;
  SB_CUSOLVER_CHECK(cusolverDnDgeqrf_bufferSize(h, n, n, b.a, n, &lw));
  double* qwork = nullptr;
  SB_CUDA_CHECK(cudaMalloc(&qwork, sizeof(double) * lw));
  sb::svd::gpu::generate_rows(b.a, n, 0, n, n, 42, scales_on_device(n), ctx->stream);
  SB_CUSOLVER_CHECK(cusolverDnDgeqrf(h, n, n, b.a, n, b.tau, qwork, lw, b.info));
  sb::svd::gpu::pad_copy(b.b, n, n, n, b.a, n, n, true, ctx->stream);  // b = R
  gesvdjInfo_t jp = nullptr;
  cusolverDnParams_t dp = nullptr;
  SB_CUSOLVER_CHECK(cusolverDnCreateGesvdjInfo(&jp));
  SB_CUSOLVER_CHECK(cusolverDnCreateParams(&dp));
  std::size_t dev_bytes = 0, host_bytes = 0;
  if (method == 0) {
    SB_CUSOLVER_CHECK(cusolverDnDgesvdj_bufferSize(h, CUSOLVER_EIG_MODE_VECTOR, 0, n, n, b.a, n,
                                                   b.s, b.u, n, b.v, n, &lw, jp));
    dev_bytes = sizeof(double) * lw;
  } else if (method == 1) {
    SB_CUSOLVER_CHECK(cusolverDnDgesvd_bufferSize(h, n, n, &lw));
    dev_bytes = sizeof(double) * lw;
  } else {
    SB_CUSOLVER_CHECK(cusolverDnXgesvdp_bufferSize(
        h, dp, CUSOLVER_EIG_MODE_VECTOR, 0, n, n, CUDA_R_64F, b.a, n, CUDA_R_64F, b.s, CUDA_R_64F,
        b.u, n, CUDA_R_64F, b.v, n, CUDA_R_64F, &dev_bytes, &host_bytes));
  }
  void* work = nullptr;
  SB_CUDA_CHECK(cudaMalloc(&work, dev_bytes + 8));
  std::vector<char> hwork(host_bytes + 8);
  double* rwork = nullptr;
  SB_CUDA_CHECK(cudaMalloc(&rwork, sizeof(double) * n));
  time_events(state, ctx->stream, [&] {
    sb::svd::gpu::copy_matrix(b.a, n, b.b, n, n, n, ctx->stream);
    if (method == 0) {
      SB_CUSOLVER_CHECK(cusolverDnDgesvdj(h, CUSOLVER_EIG_MODE_VECTOR, 0, n, n, b.a, n, b.s, b.u, n,
                                          b.v, n, static_cast<double*>(work),
                                          static_cast<int>(dev_bytes / 8), b.info, jp));
    } else if (method == 1) {
      SB_CUSOLVER_CHECK(cusolverDnDgesvd(h, 'A', 'A', n, n, b.a, n, b.s, b.u, n, b.v, n,
                                         static_cast<double*>(work),
                                         static_cast<int>(dev_bytes / 8), rwork, b.info));
    } else {
      double err = 0;
      SB_CUSOLVER_CHECK(cusolverDnXgesvdp(h, dp, CUSOLVER_EIG_MODE_VECTOR, 0, n, n, CUDA_R_64F, b.a,
                                          n, CUDA_R_64F, b.s, CUDA_R_64F, b.u, n, CUDA_R_64F, b.v,
                                          n, CUDA_R_64F, work, dev_bytes, hwork.data(), host_bytes,
                                          b.info, &err));
    }
  });
  cudaFree(work);
  cudaFree(qwork);
  cudaFree(rwork);
  cusolverDnDestroyGesvdjInfo(jp);
  cusolverDnDestroyParams(dp);
}

}  // namespace

#define SB_SVD_CASE(label, m, n, chunk, method)                                            \
  BENCHMARK_CAPTURE(bm_case, label, std::int64_t{m}, std::int64_t{n}, std::int64_t{chunk}, \
                    std::string(method))                                                   \
      ->Unit(benchmark::kMillisecond)                                                      \
      ->UseRealTime()

#define SB_SVD_ENGINE(label, m, n, chunk, method, streams, local)                            \
  BENCHMARK_CAPTURE(bm_engine, label, std::int64_t{m}, std::int64_t{n}, std::int64_t{chunk}, \
                    std::string(method), streams, std::string(local))                        \
      ->Unit(benchmark::kMillisecond)                                                        \
      ->UseRealTime()

SB_SVD_CASE(tiny, 2000, 50, 500, "auto");
SB_SVD_CASE(small, 20000, 500, 2000, "auto");
SB_SVD_CASE(seed, 10000, 1000, 1000, "auto");
SB_SVD_CASE(m1e6_chunk1e5, 1000000, 1000, 100000, "auto");
SB_SVD_CASE(large, 2000000, 1000, 100000, "auto");
SB_SVD_ENGINE(seed_stack_s8, 10000, 1000, 1000, "auto", 8, "stack");
SB_SVD_ENGINE(seed_sketch_s8, 10000, 1000, 1000, "auto", 8, "sketch");
SB_SVD_ENGINE(seed_sketch_s4, 10000, 1000, 1000, "auto", 4, "sketch");
SB_SVD_ENGINE(m1e6_c1e5_blocks_s8, 1000000, 1000, 100000, "auto", 8, "blocks");
SB_SVD_ENGINE(m1e6_c1e5_sketch_s8, 1000000, 1000, 100000, "auto", 8, "sketch");
SB_SVD_ENGINE(m1e6_c1e5_sketch_s2, 1000000, 1000, 100000, "auto", 2, "sketch");
SB_SVD_ENGINE(m1e6_c1e4_sketch_s8, 1000000, 1000, 10000, "auto", 8, "sketch");
SB_SVD_ENGINE(large_sketch_s8, 2000000, 1000, 100000, "auto", 8, "sketch");
BENCHMARK(bm_geqrf)
    ->Args({1000, 1000})
    ->Args({2000, 1000})
    ->Args({10000, 1000})
    ->Args({100000, 1000})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(bm_xgeqrf)
    ->Args({1000, 1000})
    ->Args({10000, 1000})
    ->Args({100000, 1000})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(bm_ormqr)
    ->Args({1000, 1000})
    ->Args({10000, 1000})
    ->Args({100000, 1000})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(bm_svd_r)->Args({1000, 0})->Args({1000, 2})->UseManualTime()->Unit(
    benchmark::kMillisecond);
BENCHMARK(bm_syevd)->Arg(1000)->Arg(500)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(bm_potrf)->Args({1000, 0})->Args({1000, 1})->Args({1000, 2})->UseManualTime()->Unit(
    benchmark::kMicrosecond);
BENCHMARK(bm_syevd_alt)
    ->Args({1000, 0})
    ->Args({1000, 1})
    ->Args({1000, 2})
    ->Args({1000, 3})
    ->Args({1000, 4})
    ->Args({1000, 5})
    ->Args({1000, 6})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  MPI_Finalize();
  return 0;
}
