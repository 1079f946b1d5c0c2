// groupby on the CPU (SPEC 4.3, 10): generation, hash aggregation and the whole CPU worker on
// the seed preset (30 days = 2 592 000 rows, generation included: the figure compared with
// Dask's timeseries groupby, 0.81 s on 2 cores).
//   bench_groupby_cpu --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "groupby/aggregate_cpu.hpp"
#include "groupby/config.hpp"
#include "groupby/generate.hpp"
#include "groupby/groupby.hpp"

namespace gb = sb::groupby;

namespace {

constexpr std::int64_t kSeedRows = 30 * gb::kRowsPerDay;

const char* query_name(int q) {
  return std::string_view(gb::to_string(static_cast<gb::Query>(q))).data();
}

void rates(benchmark::State& state, std::int64_t rows, double bytes) {
  state.counters["rows_per_s"] =
      benchmark::Counter(static_cast<double>(rows), benchmark::Counter::kIsIterationInvariantRate);
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes) * state.iterations());
}

struct Columns {
  explicit Columns(std::int64_t n) : id(n), name(n), x(n), y(n), key(n) {}
  gb::ColumnPtrs ptrs() {
    return {nullptr, id.data(), name.data(), x.data(), y.data(), key.data()};
  }
  std::vector<std::int64_t> id;
  std::vector<std::int32_t> name;
  std::vector<double> x, y;
  std::vector<std::int64_t> key;
};

/// Generation of a query's columns for the seed preset (bytes = bytes written).
void BM_Generate(benchmark::State& state) {
  const gb::QueryDef def = gb::query_def(static_cast<gb::Query>(state.range(0)));
  const int threads = static_cast<int>(state.range(1));
  state.SetLabel(query_name(static_cast<int>(state.range(0))));
  Columns c(kSeedRows);
  for (auto _ : state) {
    gb::generate_rows_parallel({42, 10'000'000}, 0, kSeedRows, def.columns, c.ptrs(), threads);
    benchmark::DoNotOptimize(c.x.data());
  }
  rates(state, kSeedRows, static_cast<double>(def.bytes_per_row()) * kSeedRows);
}

/// Hash aggregation of pre-generated seed-preset columns into thread tables, then the merge.
void BM_Aggregate(benchmark::State& state) {
  const gb::QueryDef def = gb::query_def(static_cast<gb::Query>(state.range(0)));
  const int threads = static_cast<int>(state.range(1));
  state.SetLabel(query_name(static_cast<int>(state.range(0))));
  Columns c(kSeedRows);
  gb::generate_rows_parallel({42, 10'000'000}, 0, kSeedRows, def.columns, c.ptrs(), 2);
  const int bits = def.high_cardinality ? 6 : 0;
  const std::size_t expect = def.high_cardinality ? kSeedRows / threads : 1024;
  std::vector<gb::PartitionedTable> tables;
  for (int t = 0; t < threads; ++t) tables.emplace_back(bits, expect);
  std::vector<gb::PartitionedTable*> ptrs;
  for (auto& t : tables) ptrs.push_back(&t);
  std::size_t groups = 0;
  for (auto _ : state) {
    for (auto& t : tables) t.clear();
    gb::aggregate_rows_parallel(def, c.ptrs(), kSeedRows, ptrs);
    gb::PartitionedTable::merge_into(tables[0], ptrs, threads);
    groups = tables[0].size();
  }
  state.counters["groups"] = static_cast<double>(groups);
  rates(state, kSeedRows, static_cast<double>(def.bytes_per_row()) * kSeedRows);
}

/// The CPU worker on the seed preset, one repeat per iteration: generation of every task,
/// aggregation, merge (what `scalebench run --preset seed --paths single-cpu|multi-cpu` times).
void BM_WorkerSeed(benchmark::State& state) {
  const auto q = static_cast<gb::Query>(state.range(0));
  const int threads = static_cast<int>(state.range(1));
  state.SetLabel(query_name(static_cast<int>(state.range(0))));
  const sb::Workload w = sb::groupby_workload();
  sb::Params p = w.preset("seed");
  p.set("query", std::string(gb::to_string(q)));
  const sb::Params params = w.expand(p)[0];
  sb::CaseSpec spec;
  spec.workload = "groupby";
  spec.params = params;
  sb::CaseEnv env;
  env.threads = threads;
  auto worker = w.make_worker(spec, env);
  const std::int64_t tasks = gb::parse(params).num_tasks();
  double gen = 0, comp = 0;
  for (auto _ : state) {
    worker->begin_repeat();
    for (std::int64_t t = 0; t < tasks; ++t) {
      worker->submit(t);
      while (worker->in_flight() > 0) (void)worker->poll(true);
    }
    benchmark::DoNotOptimize(worker->finish_repeat());
    gen += worker->phase_times().generate;
    comp += worker->phase_times().compute;
  }
  state.counters["generate_ms"] = 1e3 * gen / static_cast<double>(state.iterations());
  state.counters["compute_ms"] = 1e3 * comp / static_cast<double>(state.iterations());
  rates(state, kSeedRows, static_cast<double>(gb::query_def(q).bytes_per_row()) * kSeedRows);
}

void args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"query", "threads"});
  for (int q = 0; q < 3; ++q)
    for (int t : {1, 2}) b->Args({q, t});
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}

}  // namespace

BENCHMARK(BM_Generate)->Apply(args);
BENCHMARK(BM_Aggregate)->Apply(args);
BENCHMARK(BM_WorkerSeed)->Apply(args);

BENCHMARK_MAIN();
