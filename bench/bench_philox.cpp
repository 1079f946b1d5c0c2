// Deterministic-data kernels on one CPU thread: Philox4x32-10 words, u01 uniforms, Box-Muller
// normals (stored, and summed without storing), per SIMD variant (scalar, avx2, avx512) and math
// (own vector log/sincospi or SLEEF's), plus the reference of philox.hpp element by element.
//
//   build-*/bench/bench_philox --benchmark_counters_tabular=true
//
// Counters: draws/s (one draw = one 64-bit value; a Philox block gives two), and GB/s at
// 8 bytes per draw (the bytes a materialised float64 array of the draws would take).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "scalebench/philox.hpp"
#include "subset_mean/philox_simd.hpp"

namespace {

namespace simd = sb::data::simd;

constexpr std::uint64_t kSeed = 42;
constexpr std::size_t kBlocks = 1 << 14;  // 32768 draws per call: in L1/L2

void set_counters(benchmark::State& state, double draws_per_iteration) {
  const double draws = draws_per_iteration * static_cast<double>(state.iterations());
  state.counters["draws/s"] = benchmark::Counter(draws, benchmark::Counter::kIsRate);
  state.counters["GB/s"] = benchmark::Counter(8.0 * draws * 1e-9, benchmark::Counter::kIsRate);
}

void bm_words(benchmark::State& state, simd::Isa isa) {
  const auto& k = simd::kernels(isa);
  std::vector<std::uint32_t> out(4 * kBlocks);
  std::uint64_t first = 0;
  for (auto _ : state) {
    k.words(kSeed, 0, first, kBlocks, out.data());
    benchmark::DoNotOptimize(out.data());
    first += kBlocks;
  }
  set_counters(state, 2.0 * kBlocks);
}

void bm_uniforms(benchmark::State& state, simd::Isa isa) {
  const auto& k = simd::kernels(isa);
  std::vector<double> out(2 * kBlocks);
  std::uint64_t first = 0;
  for (auto _ : state) {
    k.uniforms(kSeed, 0, first, kBlocks, out.data());
    benchmark::DoNotOptimize(out.data());
    first += kBlocks;
  }
  set_counters(state, 2.0 * kBlocks);
}

void bm_normals(benchmark::State& state, simd::Isa isa, simd::Math math) {
  const auto& k = simd::kernels(isa, math);
  std::vector<double> out(2 * kBlocks);
  std::uint64_t first = 0;
  for (auto _ : state) {
    k.normals(kSeed, 0, first, kBlocks, out.data());
    benchmark::DoNotOptimize(out.data());
    first += kBlocks;
  }
  set_counters(state, 2.0 * kBlocks);
}

void bm_normal_sums(benchmark::State& state, simd::Isa isa, simd::Math math) {
  const auto& k = simd::kernels(isa, math);
  std::uint64_t first = 0;
  for (auto _ : state) {
    simd::NormalSums s = k.normal_sums(kSeed, 0, first, kBlocks);
    benchmark::DoNotOptimize(s);  // non-const: newer Google Benchmark deprecates the const form
    first += kBlocks;
  }
  set_counters(state, 2.0 * kBlocks);
}

/// philox.hpp's sb::data::normal, one element at a time (what a naive loop would do).
void bm_reference_normal(benchmark::State& state) {
  constexpr std::size_t kDraws = 1 << 12;
  std::uint64_t first = 0;
  for (auto _ : state) {
    double s = 0;
    for (std::size_t e = 0; e < kDraws; ++e) s += sb::data::normal(kSeed, first + e);
    benchmark::DoNotOptimize(s);
    first += kDraws;
  }
  set_counters(state, kDraws);
}

int register_all() {
  for (simd::Isa isa : simd::available_isas()) {
    const std::string n(simd::to_string(isa));
    benchmark::RegisterBenchmark(("words/" + n).c_str(), bm_words, isa);
    benchmark::RegisterBenchmark(("uniforms/" + n).c_str(), bm_uniforms, isa);
    for (simd::Math math : {simd::Math::own, simd::Math::sleef}) {
      const std::string m = n + "/" + std::string(simd::to_string(math));
      benchmark::RegisterBenchmark(("normals/" + m).c_str(), bm_normals, isa, math);
      benchmark::RegisterBenchmark(("normal_sums/" + m).c_str(), bm_normal_sums, isa, math);
    }
  }
  benchmark::RegisterBenchmark("normal/reference_element", bm_reference_normal);
  return 0;
}

const int registered = register_all();

}  // namespace

BENCHMARK_MAIN();
