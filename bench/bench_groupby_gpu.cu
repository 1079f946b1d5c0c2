// groupby GPU kernels (docs/specification.md §4.3, §10): the GPU's ceilings, generation against
// its write bandwidth, and the aggregation of each query on 10^8 rows (by-key with 10^7 groups)
// from stored columns and from rows generated inside the kernels, plus the GPU worker end to
// end on the large preset, and the peer exchange's push across every visible GPU.
// Times are CUDA-event times of warm runs (manual time).
//   bench_groupby_gpu --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "groupby/config.hpp"
#include "groupby/gpu/dense_agg.cuh"
#include "groupby/gpu/generate.cuh"
#include "groupby/gpu/hash_stage.cuh"
#include "groupby/gpu/hash_table.cuh"
#include "groupby/gpu/row_shuffle.cuh"
#include "groupby/gpu/row_source.cuh"
#include "groupby/groupby.hpp"
#include "scalebench/gpu_context.cuh"
#include "scalebench/gpu_error.cuh"
#include "scalebench/gpu_runtime.hpp"

namespace gb = sb::groupby;

namespace {

constexpr std::int64_t kRows = 100'000'000;
constexpr std::uint64_t kCardinality = 10'000'000;

struct Gpu {
  Gpu() {
    SB_CUDA_CHECK(cudaSetDevice(0));
    SB_CUDA_CHECK(cudaGetDeviceProperties(&ctx.prop, 0));
    SB_CUDA_CHECK(cudaStreamCreateWithFlags(&ctx.stream, cudaStreamNonBlocking));
    ctx.device = 0;
    SB_CUDA_CHECK(cudaEventCreate(&a));
    SB_CUDA_CHECK(cudaEventCreate(&b));
    poisson = gb::gpu::upload_poisson_table(gb::id_poisson_table(), ctx.stream);
  }
  /// The 10^8-row table (every column), generated once.
  gb::ColumnPtrs& table() {
    if (cols.x == nullptr) {
      SB_CUDA_CHECK(cudaMalloc(&cols.timestamp, 8 * kRows));
      SB_CUDA_CHECK(cudaMalloc(&cols.id, 8 * kRows));
      SB_CUDA_CHECK(cudaMalloc(&cols.name, 4 * kRows));
      SB_CUDA_CHECK(cudaMalloc(&cols.x, 8 * kRows));
      SB_CUDA_CHECK(cudaMalloc(&cols.y, 8 * kRows));
      SB_CUDA_CHECK(cudaMalloc(&cols.key, 8 * kRows));
      gb::gpu::generate({42, kCardinality}, poisson, 0, kRows, gb::kColAll, cols, ctx.stream);
      SB_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
    }
    return cols;
  }
  /// Milliseconds of f() on the stream.
  template <class F>
  double time_ms(F&& f) {
    SB_CUDA_CHECK(cudaEventRecord(a, ctx.stream));
    f();
    SB_CUDA_CHECK(cudaEventRecord(b, ctx.stream));
    SB_CUDA_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    SB_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    return ms;
  }
  sb::GpuContext ctx;
  cudaEvent_t a = nullptr, b = nullptr;
  gb::PoissonTable* poisson = nullptr;
  gb::ColumnPtrs cols;
};

Gpu& gpu() {
  static Gpu g;
  return g;
}

/// Write bandwidth of this GPU: cudaMemsetAsync of 1.2 GB, best of 5 (bytes/s).
double write_bandwidth() {
  static const double bw = [] {
    Gpu& g = gpu();
    const std::size_t bytes = 1'200'000'000;
    void* p = nullptr;
    SB_CUDA_CHECK(cudaMalloc(&p, bytes));
    double best = 1e30;
    for (int i = 0; i < 6; ++i) {
      const double ms =
          g.time_ms([&] { SB_CUDA_CHECK(cudaMemsetAsync(p, i, bytes, g.ctx.stream)); });
      if (i > 0) best = std::min(best, ms);
    }
    SB_CUDA_CHECK(cudaFree(p));
    return static_cast<double>(bytes) / (best * 1e-3);
  }();
  return bw;
}

void finish(benchmark::State& state, std::int64_t rows, double bytes) {
  state.counters["rows_per_s"] =
      benchmark::Counter(static_cast<double>(rows), benchmark::Counter::kIsIterationInvariantRate);
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes) * state.iterations());
}

void BM_WriteBandwidth(benchmark::State& state) {
  const double bw = write_bandwidth();
  for (auto _ : state) state.SetIterationTime(1.2e9 / bw);
  state.counters["GBps"] = bw / 1e9;
  state.SetBytesProcessed(static_cast<std::int64_t>(1.2e9) * state.iterations());
}

/// The ceilings scalebench holds the cases to on this GPU (measure_gpu_ceilings): the copy
/// bandwidth (bytes read and written) and the Philox4x32-10 rate the floors of docs/workloads.md
/// are taken at.
void BM_Ceilings(benchmark::State& state) {
  const nlohmann::json c = sb::measure_gpu_ceilings(gpu().ctx);
  double copy = 0, philox = 0;
  for (const auto& r : c) {
    if (r.value("kind", "") == "copy_bandwidth") copy = r.value("value", 0.0);
    if (r.value("kind", "") == "philox") philox = r.value("value", 0.0);
  }
  for (auto _ : state) state.SetIterationTime(1e-3);
  state.counters["copy_GBps"] = copy / 1e9;
  state.counters["philox_Gcalls_per_s"] = philox / 1e9;
}

/// Generation of the columns of a query (or all), 10^8 rows, into fresh buffers.
void BM_Generate(benchmark::State& state) {
  const auto columns = static_cast<unsigned>(state.range(0));
  Gpu& g = gpu();
  gb::ColumnPtrs out;
  double row_bytes = 0;
  auto alloc = [&](auto*& p, unsigned bit, int size) {
    if (columns & bit) {
      SB_CUDA_CHECK(cudaMalloc(&p, static_cast<std::size_t>(size) * kRows));
      row_bytes += size;
    }
  };
  alloc(out.timestamp, gb::kColTimestamp, 8);
  alloc(out.id, gb::kColId, 8);
  alloc(out.name, gb::kColName, 4);
  alloc(out.x, gb::kColX, 8);
  alloc(out.y, gb::kColY, 8);
  alloc(out.key, gb::kColKey, 8);
  for (auto _ : state) {
    state.SetIterationTime(1e-3 * g.time_ms([&] {
      gb::gpu::generate({42, kCardinality}, g.poisson, 0, kRows, columns, out, g.ctx.stream);
    }));
  }
  finish(state, kRows, row_bytes * kRows);
  // Generation rate over the memset rate (docs/specification.md §10: at least half of the write
  // bandwidth).
  state.counters["write_bw_fraction"] = benchmark::Counter(
      row_bytes * kRows / write_bandwidth(), benchmark::Counter::kIsIterationInvariantRate);
  for (void* p :
       {static_cast<void*>(out.timestamp), static_cast<void*>(out.id), static_cast<void*>(out.name),
        static_cast<void*>(out.x), static_cast<void*>(out.y), static_cast<void*>(out.key)})
    if (p != nullptr) SB_CUDA_CHECK(cudaFree(p));
}

/// Low-cardinality aggregation of 10^8 rows (by-name: 26 groups; by-id: ~600), in one launch,
/// then the block partials added (dense_finish). source 0: from the stored columns; 1: the rows
/// generated inside the kernel (the worker's way: no row is stored or read).
void BM_AggregateDense(benchmark::State& state) {
  const auto q = static_cast<gb::Query>(state.range(0));
  const bool generated = state.range(1) != 0;
  Gpu& g = gpu();
  const gb::QueryDef def = gb::query_def(q);
  gb::ColumnPtrs in = generated ? gb::ColumnPtrs{} : g.table();
  gb::gpu::DenseAgg a = gb::gpu::make_dense(def, g.ctx.prop);
  for (auto _ : state) {
    state.SetIterationTime(1e-3 * g.time_ms([&] {
      gb::gpu::dense_clear(a, g.ctx.stream);
      if (generated) {
        gb::gpu::dense_generate(a, {42, kCardinality}, g.poisson, 0, kRows, g.ctx.stream);
      } else {
        gb::gpu::dense_aggregate(def, a, in, kRows, g.ctx.stream);
      }
      gb::gpu::dense_finish(a, g.ctx.stream);
    }));
  }
  finish(state, kRows, generated ? 0.0 : static_cast<double>(def.bytes_per_row()) * kRows);
  gb::gpu::free_dense(a);
}

/// by-key: 10^8 rows into 10^7 groups: table clear + aggregation (+ compaction to records with
/// checksums, hash_finish).
/// mode 0: direct global-table atomics; 1: the same + compaction; 2: partitioned (rows staged
/// by table region, split into shared-memory slices, aggregated slice by slice) + compaction;
/// 3: staged by region and aggregated region by region in L2 (no slices) + compaction; 4: as
/// 2, each slice folded from empty straight into records (stage_finish: no clear, no table, no
/// compaction); 5: as 4 with the rows generated inside the staging kernel instead of read from
/// stored columns, what the one-GPU worker runs.
void BM_AggregateByKey(benchmark::State& state) {
  const int mode = static_cast<int>(state.range(0));
  const bool with_compact = mode != 0;
  const bool sliced = mode == 2 || mode >= 4;
  const bool emit = mode >= 4;
  Gpu& g = gpu();
  const gb::QueryDef def = gb::query_def(gb::Query::by_key);
  const gb::gpu::RowSource in = mode == 5 ? gb::gpu::RowSource::generated({42, kCardinality}, 0)
                                          : gb::gpu::RowSource::columns(g.table());
  gb::gpu::HashTable t = gb::gpu::make_hash(static_cast<std::int64_t>(kCardinality), def.fields);
  std::uint64_t* out = nullptr;
  SB_CUDA_CHECK(cudaMalloc(&out, sizeof(std::uint64_t) * kCardinality * t.width));
  std::int64_t groups = 0;
  gb::gpu::HashStage stage;
  // keys below 2^32: the first level keeps them as 32-bit words, as the worker does
  if (mode >= 2) stage = gb::gpu::make_stage(t, g.ctx.prop, kRows, 0, sliced, sliced);
  if (emit) gb::gpu::hash_clear(t, g.ctx.stream);  // stage_finish leaves it clean
  for (auto _ : state) {
    state.SetIterationTime(1e-3 * g.time_ms([&] {
      if (emit) {
        gb::gpu::stage_rows(t, stage, in, kRows, g.ctx.stream);
        groups =
            static_cast<std::int64_t>(gb::gpu::stage_finish(t, stage, out, g.ctx.stream).records);
        return;
      }
      gb::gpu::hash_clear(t, g.ctx.stream);
      if (mode >= 2) {
        gb::gpu::stage_rows(t, stage, in, kRows, g.ctx.stream);
        gb::gpu::stage_flush(t, stage, g.ctx.stream);
      } else {
        gb::gpu::hash_aggregate(t, in, kRows, g.ctx.stream);
      }
      if (with_compact)
        groups = static_cast<std::int64_t>(gb::gpu::hash_finish(t, out, g.ctx.stream).records);
    }));
  }
  if (mode >= 2) {
    state.counters["regions"] = static_cast<double>(1 << stage.region_bits);
    state.counters["slices"] =
        static_cast<double>(stage.slices_per_region) * static_cast<double>(1 << stage.region_bits);
    gb::gpu::free_stage(stage);
  }
  finish(state, kRows, mode == 5 ? 0.0 : static_cast<double>(def.bytes_per_row()) * kRows);
  if (with_compact) state.counters["groups"] = static_cast<double>(groups);
  if (gb::gpu::hash_overflowed(t, g.ctx.stream)) state.SkipWithError("hash table overflow");
  SB_CUDA_CHECK(cudaFree(out));
  gb::gpu::free_hash(t);
}

/// The GPU worker end to end on the large preset (10^8 rows in 20 tasks): generation and
/// aggregation of every task, then finish_repeat (compaction and checksums for by-key).
void BM_WorkerLarge(benchmark::State& state) {
  const auto q = static_cast<gb::Query>(state.range(0));
  Gpu& g = gpu();
  const sb::Workload w = sb::groupby_workload();
  sb::Params p = w.preset("large");
  p.set("query", std::string(gb::to_string(q)));
  const sb::Params params = w.expand(p)[0];
  sb::CaseSpec spec;
  spec.workload = "groupby";
  spec.path = sb::ExecPath::single_gpu;
  spec.params = params;
  sb::CaseEnv env;
  env.device = sb::Device::gpu;
  env.gpu = &g.ctx;
  auto worker = w.make_worker(spec, env);
  const std::int64_t tasks = gb::parse(params).num_tasks();
  double gen = 0, comp = 0;
  for (auto _ : state) {
    SB_CUDA_CHECK(cudaStreamSynchronize(g.ctx.stream));
    const auto t0 = std::chrono::steady_clock::now();
    worker->begin_repeat();
    for (std::int64_t t = 0; t < tasks; ++t) {
      worker->submit(t);
      while (worker->in_flight() > 2) (void)worker->poll(true);
    }
    while (worker->in_flight() > 0) (void)worker->poll(true);
    (void)worker->finish_repeat();
    state.SetIterationTime(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    gen += worker->phase_times().generate;
    comp += worker->phase_times().compute;
  }
  finish(state, kRows, static_cast<double>(gb::query_def(q).bytes_per_row()) * kRows);
  state.counters["generate_ms"] = 1e3 * gen / static_cast<double>(state.iterations());
  state.counters["compute_ms"] = 1e3 * comp / static_cast<double>(state.iterations());
}

/// The peer exchange's push on every visible GPU at once (two or more, mapped to each other):
/// each GPU stages its 1 / P of the large preset's 10^8 rows (10^7 keys) into its send buckets,
/// then the timed part, one push kernel of `blocks` blocks per GPU (shuffle_push, as after a
/// task), stores the rows of every other owner into that owner's landing area, all GPUs at the
/// same time: the floor of the tasks of a multi-GPU by-key case, whose pushes move the same
/// bytes beside the staging. Time: the slowest GPU's kernel (CUDA events; the launches are
/// issued one GPU after the other, microseconds apart). GBps: bytes one GPU sends per second.
void BM_PushAllToAll(benchmark::State& state) {
  const int blocks = static_cast<int>(state.range(0));
  int P = 0;
  SB_CUDA_CHECK(cudaGetDeviceCount(&P));
  if (P < 2) {
    state.SkipWithError("needs two GPUs");
    return;
  }
  for (int g = 0; g < P; ++g)
    for (int h = 0; h < P; ++h) {
      int can = 0;
      if (h != g) SB_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, g, h));
      if (h != g && can == 0) {
        state.SkipWithError("GPUs without peer access to each other");
        return;
      }
    }
  const gb::QueryDef def = gb::query_def(gb::Query::by_key);
  const std::int64_t rows = kRows / P;
  struct Side {
    cudaStream_t stream = nullptr;
    cudaEvent_t a = nullptr, b = nullptr;
    gb::ColumnPtrs cols;
    gb::gpu::HashTable owner, spill;
    gb::gpu::RowShuffle sh;
  };
  std::vector<Side> side(static_cast<std::size_t>(P));
  std::vector<void*> landings;
  double sent = 0;  // rows every GPU sends away, in all
  for (int g = 0; g < P; ++g) {
    Side& d = side[static_cast<std::size_t>(g)];
    SB_CUDA_CHECK(cudaSetDevice(g));
    for (int h = 0; h < P; ++h)
      if (h != g) {
        const cudaError_t e = cudaDeviceEnablePeerAccess(h, 0);
        if (e == cudaErrorPeerAccessAlreadyEnabled)
          (void)cudaGetLastError();
        else
          SB_CUDA_CHECK(e);
      }
    SB_CUDA_CHECK(cudaStreamCreateWithFlags(&d.stream, cudaStreamNonBlocking));
    SB_CUDA_CHECK(cudaEventCreate(&d.a));
    SB_CUDA_CHECK(cudaEventCreate(&d.b));
    SB_CUDA_CHECK(cudaMalloc(&d.cols.key, 8 * rows));
    SB_CUDA_CHECK(cudaMalloc(&d.cols.x, 8 * rows));
    SB_CUDA_CHECK(cudaMalloc(&d.cols.y, 8 * rows));
    // rows [g n / P, (g + 1) n / P) of the table: only by-key's columns (no Poisson table)
    gb::gpu::generate({42, kCardinality}, nullptr, g * rows, rows, def.columns, d.cols, d.stream);
    const auto groups = static_cast<std::int64_t>(kCardinality);
    d.spill = gb::gpu::make_hash(groups, def.fields);
    d.owner = gb::gpu::make_hash(groups / P + groups / P / 8 + 1024, def.fields);
    d.sh = gb::gpu::plan_row_shuffle(d.owner, P, kRows);
    if (d.sh.owners != P) {
      state.SkipWithError("the row shuffle does not fit this table");
      return;
    }
    d.sh.owner_bits = std::bit_width(static_cast<std::uint64_t>(d.spill.capacity)) - 1;
    d.sh.narrow_keys = true;  // keys below 2^32, as the worker sends them
    gb::gpu::alloc_row_shuffle(d.sh);
    gb::gpu::alloc_landing(d.sh);
    gb::gpu::hash_clear(d.spill, d.stream);
    gb::gpu::shuffle_clear(d.sh, d.stream);
    gb::gpu::shuffle_stage(d.owner, d.spill, d.sh, d.cols, rows, d.stream);
    std::vector<unsigned long long> cur(static_cast<std::size_t>(d.sh.buckets()));
    gb::gpu::shuffle_cursors(d.sh, cur.data(), d.stream);
    for (int b = 0; b < d.sh.buckets(); ++b)
      if (b / d.sh.regions() != g)
        sent +=
            static_cast<double>(std::min(cur[static_cast<std::size_t>(b)],
                                         static_cast<unsigned long long>(d.sh.bucket_capacity)));
    landings.push_back(d.sh.landing);
  }
  for (int g = 0; g < P; ++g) {
    SB_CUDA_CHECK(cudaSetDevice(g));
    Side& d = side[static_cast<std::size_t>(g)];
    gb::gpu::shuffle_set_landings(d.sh, landings, d.stream);  // also allocates the snapshot ring
    gb::gpu::shuffle_snapshot(d.sh, 0, false, d.stream);
  }
  for (auto _ : state) {
    for (int g = 0; g < P; ++g) {
      SB_CUDA_CHECK(cudaSetDevice(g));
      SB_CUDA_CHECK(cudaStreamSynchronize(side[static_cast<std::size_t>(g)].stream));
    }
    for (int g = 0; g < P; ++g) {
      Side& d = side[static_cast<std::size_t>(g)];
      SB_CUDA_CHECK(cudaSetDevice(g));
      SB_CUDA_CHECK(cudaEventRecord(d.a, d.stream));
      gb::gpu::shuffle_push(d.sh, g, -1, 0, blocks, d.stream);
      SB_CUDA_CHECK(cudaEventRecord(d.b, d.stream));
    }
    float worst = 0;
    for (int g = 0; g < P; ++g) {
      Side& d = side[static_cast<std::size_t>(g)];
      SB_CUDA_CHECK(cudaSetDevice(g));
      SB_CUDA_CHECK(cudaEventSynchronize(d.b));
      float ms = 0;
      SB_CUDA_CHECK(cudaEventElapsedTime(&ms, d.a, d.b));
      worst = std::max(worst, ms);
    }
    state.SetIterationTime(1e-3 * worst);
  }
  const double row_bytes = 4.0 + 8.0 * (side[0].sh.planes() - 1);  // 32-bit key, x, y
  state.counters["GPUs"] = P;
  state.counters["MB_per_gpu"] = sent * row_bytes / P / 1e6;
  state.counters["GBps"] =
      benchmark::Counter(sent * row_bytes / P / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  state.SetBytesProcessed(static_cast<std::int64_t>(sent * row_bytes) * state.iterations());
  for (int g = 0; g < P; ++g) {
    Side& d = side[static_cast<std::size_t>(g)];
    SB_CUDA_CHECK(cudaSetDevice(g));
    SB_CUDA_CHECK(cudaStreamSynchronize(d.stream));
    gb::gpu::free_row_shuffle(d.sh);
    gb::gpu::free_hash(d.owner);
    gb::gpu::free_hash(d.spill);
    for (void* q : {static_cast<void*>(d.cols.key), static_cast<void*>(d.cols.x),
                    static_cast<void*>(d.cols.y)})
      SB_CUDA_CHECK(cudaFree(q));
    SB_CUDA_CHECK(cudaEventDestroy(d.a));
    SB_CUDA_CHECK(cudaEventDestroy(d.b));
    SB_CUDA_CHECK(cudaStreamDestroy(d.stream));
  }
  SB_CUDA_CHECK(cudaSetDevice(0));
}

}  // namespace

BENCHMARK(BM_Ceilings)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_WriteBandwidth)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_Generate)
    ->ArgName("columns")
    ->Arg(gb::kColName | gb::kColX)             // by-name: 12 B/row, 1 Philox call
    ->Arg(gb::kColKey | gb::kColX | gb::kColY)  // by-key: 24 B/row, 2 calls
    ->Arg(gb::kColId | gb::kColX | gb::kColY)   // by-id: 24 B/row, 3 calls + Poisson
    ->Arg(gb::kColAll)                          // the whole table: 44 B/row
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(0.2);
BENCHMARK(BM_AggregateDense)
    ->ArgNames({"query", "generated"})
    ->ArgsProduct({{static_cast<int>(gb::Query::by_name), static_cast<int>(gb::Query::by_id)},
                   {0, 1}})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(0.2);
BENCHMARK(BM_AggregateByKey)
    ->ArgName("mode")
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->Arg(3)
    ->Arg(4)
    ->Arg(5)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(0.3);
BENCHMARK(BM_WorkerLarge)
    ->ArgName("query")
    ->Arg(static_cast<int>(gb::Query::by_name))
    ->Arg(static_cast<int>(gb::Query::by_id))
    ->Arg(static_cast<int>(gb::Query::by_key))
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(0.3);

BENCHMARK(BM_PushAllToAll)
    ->ArgName("blocks")
    ->Arg(8)
    ->Arg(16)
    ->Arg(24)
    ->Arg(32)
    ->Arg(48)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(0.2);

BENCHMARK_MAIN();
