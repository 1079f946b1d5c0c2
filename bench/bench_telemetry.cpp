// The cost of one telemetry reading (runtime/include/scalebench/telemetry_source.hpp): the
// Linux CPU source of this process's CPUs, and the NVML source of GPU 0 where NVML sees one.
// A worker takes one reading per repeat mark and one per period (20 ms by default), so the
// reading's time over the period is the sampling thread's share of one core.
//
//   build-*/bench/bench_telemetry
#include <benchmark/benchmark.h>

#include "scalebench/nvml_probe.hpp"
#include "scalebench/telemetry_source.hpp"

namespace {

void bm_cpu_reading(benchmark::State& state) {
  auto src = sb::make_cpu_telemetry();
  for (auto _ : state) {
    sb::TelemetrySample s;
    src->read(s);
    benchmark::DoNotOptimize(s);
  }
}
BENCHMARK(bm_cpu_reading);

void bm_vector_reading(benchmark::State& state) {
  auto src = sb::make_vector_telemetry();
  for (auto _ : state) {
    sb::TelemetrySample s;
    src->read(s);
    benchmark::DoNotOptimize(s);
  }
}
BENCHMARK(bm_vector_reading);

void bm_gpu_reading(benchmark::State& state) {
  const auto gpus = sb::probe_gpus_nvml();
  auto src =
      gpus.empty() ? nullptr : sb::make_gpu_telemetry(gpus[0].value("pci_bus_id", std::string()));
  if (!src) {
    state.SkipWithError("no GPU seen by NVML");
    return;
  }
  for (auto _ : state) {
    sb::TelemetrySample s;
    src->read(s);
    benchmark::DoNotOptimize(s);
  }
}
BENCHMARK(bm_gpu_reading);

}  // namespace

BENCHMARK_MAIN();
