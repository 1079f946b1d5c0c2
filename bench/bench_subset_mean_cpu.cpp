// subset-mean on the CPU worker's kernel: one repeat of a preset = every task's block, fused
// generate + reduce, with T OpenMP threads (what `scalebench run` does per repeat on multi-cpu
// with one worker of T threads, minus the runtime's messages).
//
//   build-*/bench/bench_subset_mean_cpu --benchmark_counters_tabular=true
//
// The tiny preset also runs with the SIMD variant capped at avx2 and at scalar (the
// subset-mean.simd parameter of a real case); the label names the variant that ran.
// Counters: draws/s, GB/s at 8 bytes per draw (docs/specification.md §4.1's effective bandwidth),
// s/repeat. The peer: Dask's threaded scheduler on the small preset (docs/specification.md §10).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "scalebench/params.hpp"
#include "subset_mean/config.hpp"
#include "subset_mean/philox_simd.hpp"
#include "subset_mean/worker_cpu.hpp"

namespace {

namespace sm = sb::subset_mean;

void bm_repeat(benchmark::State& state, const std::string& preset,
               sb::data::simd::Isa cap = sb::data::simd::Isa::avx512) {
  const int threads = static_cast<int>(state.range(0));
  const sm::Config cfg = sm::parse(sm::preset_params(preset));
  const auto& kernels = sb::data::simd::best_kernels(cap);
  std::vector<double> scratch(static_cast<std::size_t>(2 * cfg.chunk));
  double checksum = 0;
  for (auto _ : state) {
    for (std::int64_t t = 0; t < cfg.tasks; ++t) {
      const sm::BlockSums s = sm::block_sums(cfg, t, kernels, threads, scratch.data());
      checksum += s.subset + s.full;
    }
  }
  benchmark::DoNotOptimize(checksum);
  const double draws = static_cast<double>(cfg.draws()) * static_cast<double>(state.iterations());
  state.counters["draws/s"] = benchmark::Counter(draws, benchmark::Counter::kIsRate);
  state.counters["GB/s"] = benchmark::Counter(8.0 * draws * 1e-9, benchmark::Counter::kIsRate);
  state.counters["s/repeat"] =
      benchmark::Counter(static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.SetLabel(std::string(sb::data::simd::to_string(kernels.isa)));
}

}  // namespace

BENCHMARK_CAPTURE(bm_repeat, tiny, std::string("tiny"))
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(bm_repeat, tiny_avx2, std::string("tiny"), sb::data::simd::Isa::avx2)
    ->Arg(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(bm_repeat, tiny_scalar, std::string("tiny"), sb::data::simd::Isa::scalar)
    ->Arg(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(bm_repeat, small, std::string("small"))
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(2.0);

BENCHMARK_MAIN();
