// The cost of one telemetry reading (runtime/include/scalebench/telemetry_source.hpp): the
// Linux CPU source of this process's CPUs, the vector units' probe (CPU cases), and the NVML
// source of GPU 0 where NVML sees one.
// A worker takes one reading per repeat mark and one per period (20 ms by default), so the
// reading's time over the period is the sampling thread's share of one core.
//
//   build-*/bench/bench_telemetry
#include <benchmark/benchmark.h>

#include <memory>

#include "scalebench/nvml_probe.hpp"
#include "scalebench/telemetry_source.hpp"

namespace {

/// One reading of a source that every machine has.
void bm_reading(benchmark::State& state, std::unique_ptr<sb::TelemetrySource> (*make)()) {
  auto src = make();
  for (auto _ : state) {
    sb::TelemetrySample s;
    src->read(s);
    benchmark::DoNotOptimize(s);
  }
}
BENCHMARK_CAPTURE(bm_reading, cpu, &sb::make_cpu_telemetry)->Name("bm_cpu_reading");
BENCHMARK_CAPTURE(bm_reading, vector, &sb::make_vector_telemetry)->Name("bm_vector_reading");

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
