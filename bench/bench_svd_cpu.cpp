// svd workload on the CPU (docs/specification.md §4.2): one timed repeat per iteration through the
// WorkerCase contract (cpu_local=auto: the sketch-preconditioned Cholesky QR for these tall
// presets; _householder: dgeqrt of every block, dtpqrt tree, dgemqrt for U), and its LAPACK stages
// alone. `scalebench run --trace` prints the stages of every finish() of a real case to stderr.
//
//   OPENBLAS_CORETYPE=SkylakeX build-*/bench/bench_svd_cpu --benchmark_counters_tabular=true
//
// (OpenBLAS 0.3.21 does not recognise recent Xeons and falls back to its far slower Prescott
// kernels; name the core type when openblas_get_corename() says Prescott on an AVX-512 CPU.)
// Counters: GFLOP/s at docs/specification.md §4.2's count 6mn^2 per repeat; stage counters at each
// LAPACK routine's own flop count.
#include <benchmark/benchmark.h>
#include <lapacke.h>
#include <mpi.h>

#include <cstdint>
#include <ctime>
#include <string>
#include <vector>

#include "scalebench/philox.hpp"
#include "svd/blas_threads.hpp"
#include "svd/config.hpp"
#include "svd/svd.hpp"
#include "svd/svd_data.hpp"

namespace {

using sb::svd::Config;

void set_gflops(benchmark::State& state, double flops_per_iteration) {
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops_per_iteration * 1e-9 * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
}

/// One repeat of the case per iteration: single-cpu (threads = 1) or one multi-cpu worker.
void bm_case(benchmark::State& state, const std::string& preset, int threads,
             const std::string& cpu_svd = "auto", const std::string& cpu_local = "auto") {
  const sb::Workload w = sb::svd_workload();
  sb::CaseSpec spec;
  spec.workload = "svd";
  spec.params = w.preset(preset);
  spec.params.set("cpu_svd", cpu_svd);
  spec.params.set("cpu_local", cpu_local);
  const Config cfg = sb::svd::parse(spec.params);
  sb::CaseEnv env;
  env.device = sb::Device::cpu;
  env.threads = threads;
  env.comm = MPI_COMM_SELF;
  auto worker = w.make_worker(spec, env);
  const std::clock_t c0 = std::clock();
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
  }
  // CPU seconds of every thread of the process per repeat (load-independent work measure).
  state.counters["process_cpu_s"] = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC /
                                    static_cast<double>(state.iterations());
  const auto t = worker->phase_times();
  state.counters["generate_s"] = t.generate;
  state.counters["communicate_s"] = t.communicate;
  set_gflops(state, cfg.flops());
}

Config stage_config(std::int64_t chunk, std::int64_t n) {
  Config c;
  c.m = chunk;
  c.n = n;
  c.chunk = chunk;
  return c;
}

void bm_generate(benchmark::State& state) {
  const Config c = stage_config(state.range(0), state.range(1));
  const auto scales = sb::svd::column_scales(c);
  std::vector<double> a(static_cast<std::size_t>(c.chunk * c.n));
  for (auto _ : state) {
    sb::svd::generate_block(c, scales.data(), 0, a.data());
    benchmark::DoNotOptimize(a.data());
  }
  state.counters["draws/s"] = benchmark::Counter(
      static_cast<double>(c.chunk * c.n) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate);
}

void bm_geqrf(benchmark::State& state) {
  sb::svd::ScopedBlasThreads t(static_cast<int>(state.range(2)));
  const Config c = stage_config(state.range(0), state.range(1));
  const auto scales = sb::svd::column_scales(c);
  std::vector<double> a0(static_cast<std::size_t>(c.chunk * c.n)), a(a0.size()),
      tau(static_cast<std::size_t>(c.n));
  sb::svd::generate_block(c, scales.data(), 0, a0.data());
  const auto m = static_cast<lapack_int>(c.chunk), n = static_cast<lapack_int>(c.n);
  for (auto _ : state) {
    state.PauseTiming();
    a = a0;
    state.ResumeTiming();
    LAPACKE_dgeqrf(LAPACK_COL_MAJOR, m, n, a.data(), m, tau.data());
  }
  const double dm = static_cast<double>(m), dn = static_cast<double>(n);
  set_gflops(state, 2 * dm * dn * dn - 2.0 / 3.0 * dn * dn * dn);
}

void bm_ormqr(benchmark::State& state) {
  sb::svd::ScopedBlasThreads t(static_cast<int>(state.range(2)));
  const Config c = stage_config(state.range(0), state.range(1));
  const auto scales = sb::svd::column_scales(c);
  std::vector<double> a(static_cast<std::size_t>(c.chunk * c.n)), u(a.size()),
      tau(static_cast<std::size_t>(c.n));
  sb::svd::generate_block(c, scales.data(), 0, a.data());
  const auto m = static_cast<lapack_int>(c.chunk), n = static_cast<lapack_int>(c.n);
  LAPACKE_dgeqrf(LAPACK_COL_MAJOR, m, n, a.data(), m, tau.data());
  for (auto _ : state) {
    state.PauseTiming();
    std::fill(u.begin(), u.end(), 0.0);
    for (lapack_int j = 0; j < n; ++j) u[static_cast<std::size_t>(j + j * m)] = 1.0;
    state.ResumeTiming();
    LAPACKE_dormqr(LAPACK_COL_MAJOR, 'L', 'N', m, n, n, a.data(), m, tau.data(), u.data(), m);
  }
  const double dm = static_cast<double>(m), dn = static_cast<double>(n);
  set_gflops(state, 4 * dm * dn * dn - 2 * dn * dn * dn);
}

/// The tree merge: QR of two stacked n x n triangles (dtpqrt), and applying it (dtpmqrt).
void bm_tpqrt(benchmark::State& state) {
  sb::svd::ScopedBlasThreads t(static_cast<int>(state.range(2)));
  const auto n = static_cast<lapack_int>(state.range(0));
  const auto nb = static_cast<lapack_int>(state.range(1));
  std::vector<double> r1(static_cast<std::size_t>(n) * n), r2(r1.size()), a(r1.size()),
      b(r1.size()), tt(static_cast<std::size_t>(nb) * n);
  for (lapack_int j = 0; j < n; ++j)
    for (lapack_int i = 0; i <= j; ++i) {
      r1[static_cast<std::size_t>(i + j * n)] =
          sb::data::uniform(1, static_cast<std::uint64_t>(i + j * n));
      r2[static_cast<std::size_t>(i + j * n)] =
          sb::data::uniform(2, static_cast<std::uint64_t>(i + j * n));
    }
  for (auto _ : state) {
    state.PauseTiming();
    a = r1;
    b = r2;
    state.ResumeTiming();
    LAPACKE_dtpqrt(LAPACK_COL_MAJOR, n, n, n, nb, a.data(), n, b.data(), n, tt.data(), nb);
  }
  const double dn = static_cast<double>(n);
  set_gflops(state, 2.0 / 3.0 * dn * dn * dn);
}

void bm_gesdd(benchmark::State& state) {
  sb::svd::ScopedBlasThreads t(static_cast<int>(state.range(1)));
  const auto n = static_cast<lapack_int>(state.range(0));
  std::vector<double> r(static_cast<std::size_t>(n) * n, 0.0), a(r.size()), u(r.size()),
      vt(r.size()), s(static_cast<std::size_t>(n));
  for (lapack_int j = 0; j < n; ++j)
    for (lapack_int i = 0; i <= j; ++i)
      r[static_cast<std::size_t>(i + j * n)] =
          sb::data::uniform(3, static_cast<std::uint64_t>(i + j * n));
  for (auto _ : state) {
    state.PauseTiming();
    a = r;
    state.ResumeTiming();
    LAPACKE_dgesdd(LAPACK_COL_MAJOR, 'S', n, n, a.data(), n, s.data(), u.data(), n, vt.data(), n);
  }
}

}  // namespace

BENCHMARK_CAPTURE(bm_case, tiny_1thread, std::string("tiny"), 1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(bm_case, small_1thread, std::string("small"), 1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(bm_case, small_2threads, std::string("small"), 2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(bm_case, seed_1thread, std::string("seed"), 1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(bm_case, seed_2threads, std::string("seed"), 2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(bm_case, seed_2threads_gesdd, std::string("seed"), 2, std::string("gesdd"))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(bm_case, seed_1thread_householder, std::string("seed"), 1, std::string("auto"),
                  std::string("householder"))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(bm_case, seed_2threads_householder, std::string("seed"), 2, std::string("auto"),
                  std::string("householder"))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(bm_generate)
    ->Args({1000, 1000})
    ->Args({1000, 999})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(bm_geqrf)
    ->Args({1000, 1000, 1})
    ->Args({1000, 1000, 2})
    ->Args({2000, 500, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(bm_ormqr)
    ->Args({1000, 1000, 1})
    ->Args({1000, 1000, 2})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(bm_tpqrt)
    ->Args({1000, 32, 1})
    ->Args({1000, 64, 1})
    ->Args({1000, 32, 2})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(bm_gesdd)
    ->Args({1000, 1})
    ->Args({1000, 2})
    ->Args({500, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  MPI_Finalize();
  return 0;
}
