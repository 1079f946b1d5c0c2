// groupby on the GPU against its CPU twin on the same deterministic data: generation must be
// bit-identical; aggregation (each query, tiny and small presets, plus kernel-level cases with
// hot keys, var/std fields, the owner-grouped compaction, the slices folded straight into
// records, and rows generated inside the aggregating kernels instead of read from columns)
// must equal the CPU result.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <vector>

#include "groupby/aggregate_cpu.hpp"
#include "groupby/config.hpp"
#include "groupby/generate.hpp"
#include "groupby/gpu/dense_agg.cuh"
#include "groupby/gpu/generate.cuh"
#include "groupby/gpu/hash_stage.cuh"
#include "groupby/gpu/hash_table.cuh"
#include "groupby/gpu/row_shuffle.cuh"
#include "groupby/group_table.hpp"
#include "groupby/validation.hpp"
#include "harness.hpp"
#include "scalebench/gpu_context.cuh"
#include "scalebench/gpu_runtime.hpp"

namespace gb = sb::groupby;

namespace {

sb::GpuContext* context() {
  static sb::GpuContext* ctx = [] {
    auto* c = new sb::GpuContext;
    c->device = 0;
    SB_CUDA_CHECK(cudaSetDevice(0));
    SB_CUDA_CHECK(cudaGetDeviceProperties(&c->prop, 0));
    SB_CUDA_CHECK(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
    return c;
  }();
  return ctx;
}

#define REQUIRE_GPU()                                                   \
  do {                                                                  \
    if (sb::visible_gpu_count() == 0) GTEST_SKIP() << "no GPU visible"; \
  } while (0)

template <class T>
struct DevBuf {
  explicit DevBuf(std::size_t count) : n(count) {
    SB_CUDA_CHECK(cudaMalloc(&p, sizeof(T) * (n ? n : 1)));
  }
  ~DevBuf() { (void)cudaFree(p); }
  std::vector<T> host() const {
    std::vector<T> h(n);
    SB_CUDA_CHECK(cudaMemcpy(h.data(), p, sizeof(T) * n, cudaMemcpyDeviceToHost));
    return h;
  }
  T* p = nullptr;
  std::size_t n;
};

struct DevCols {
  explicit DevCols(std::int64_t n) : ts(n), id(n), name(n), x(n), y(n), key(n) {}
  gb::ColumnPtrs ptrs() { return {ts.p, id.p, name.p, x.p, y.p, key.p}; }
  DevBuf<std::int64_t> ts, id;
  DevBuf<std::int32_t> name;
  DevBuf<double> x, y;
  DevBuf<std::int64_t> key;
};

/// The checksums hash_finish sums, of the first `count` records of `recs`, on the host:
/// {groups, sum count, sum sum_x, sum sum_y, sum min_x, sum max_x}.
std::array<double, 6> checksums(const std::vector<std::uint64_t>& recs, std::int64_t count,
                                unsigned fields) {
  std::array<double, 6> v{};
  const int w = gb::record_width(fields);
  for (std::int64_t i = 0; i < count; ++i) {
    std::int64_t k = 0;
    gb::GroupState g;
    gb::unpack_record(&recs[static_cast<std::size_t>(i * w)], fields, k, g);
    v[0] += 1.0;
    v[1] += static_cast<double>(g.count);
    if (fields & gb::kSumX) v[2] += g.sum_x;
    if (fields & gb::kSumY) v[3] += g.sum_y;
    if (fields & gb::kMinX) v[4] += g.min_x;
    if (fields & gb::kMaxX) v[5] += g.max_x;
  }
  return v;
}

/// The CPU twin's groups of rows [0, n) of c's table.
gb::PartitionedTable cpu_groups(const gb::Config& c, std::int64_t n) {
  std::vector<std::int64_t> key(n);
  std::vector<double> x(n), y(n);
  gb::ColumnPtrs hc;
  hc.key = key.data();
  hc.x = x.data();
  hc.y = y.data();
  gb::generate_rows(c.table(), 0, n, c.def.columns, hc);
  gb::PartitionedTable cpu(4, 16);
  gb::aggregate_rows(c.def, hc, 0, n, cpu);
  return cpu;
}

/// One GPU record against the CPU's group: a missing group or a different count, min or max
/// counts in `bad`, the sums' error goes into `worst`. Returns the record's key.
std::int64_t compare_record(const gb::PartitionedTable& cpu, const std::uint64_t* rec,
                            unsigned fields, std::int64_t& bad, double& worst) {
  std::int64_t k = 0;
  gb::GroupState g;
  gb::unpack_record(rec, fields, k, g);
  const gb::GroupState* r = cpu.find(k);
  if (r == nullptr || r->count != g.count || r->min_x != g.min_x || r->max_x != g.max_x) {
    ++bad;
  } else {
    worst = std::max({worst, gb::sum_error(r->sum_x, g.sum_x, r->count),
                      gb::sum_error(r->sum_y, g.sum_y, r->count)});
  }
  return k;
}

/// The tiny preset's by-key query over `cardinality` keys.
gb::Config by_key_config(const char* cardinality) {
  sb::Params p = gb::preset_params("tiny");
  p.set("query", "by-key");
  p.set("cardinality", cardinality);
  return gb::parse(p);
}

/// The first ts.records records of `out` against the CPU's groups: no overflow, as many groups,
/// every one equal (sums within 1e-9). Returns the records as copied back.
std::vector<std::uint64_t> expect_cpu_groups(const gb::PartitionedTable& cpu,
                                             const DevBuf<std::uint64_t>& out,
                                             const gb::gpu::TableStatus& ts, unsigned fields) {
  EXPECT_EQ(ts.overflow, 0);
  EXPECT_EQ(static_cast<std::size_t>(ts.records), cpu.size());
  const std::vector<std::uint64_t> recs = out.host();
  const auto w = static_cast<unsigned long long>(gb::record_width(fields));
  std::int64_t bad = 0;
  double worst = 0;
  for (unsigned long long i = 0; i < ts.records && (i + 1) * w <= recs.size(); ++i)
    (void)compare_record(cpu, &recs[i * w], fields, bad, worst);
  EXPECT_EQ(bad, 0);
  EXPECT_LE(worst, 1e-9);
  return recs;
}

}  // namespace

TEST(GroupbyGpu, GenerationIsBitIdentical) {
  REQUIRE_GPU();
  cudaStream_t s = context()->stream;
  gb::PoissonTable* dpt = gb::gpu::upload_poisson_table(gb::id_poisson_table(), s);
  for (const auto& [spec, row0, n] :
       {std::tuple{gb::TableSpec{42, 10'000'000}, std::int64_t{0}, std::int64_t{172'800}},
        std::tuple{gb::TableSpec{7, 12345}, std::int64_t{86400 * 5 + 3}, std::int64_t{200'003}},
        std::tuple{gb::TableSpec{0xdeadbeefcafeull, 1ull << 40}, std::int64_t{(1ll << 32) - 1000},
                   std::int64_t{5000}}}) {
    DevCols d(n);
    gb::gpu::generate(spec, dpt, row0, n, gb::kColAll, d.ptrs(), s);
    SB_CUDA_CHECK(cudaStreamSynchronize(s));
    std::vector<std::int64_t> ts(n), id(n), key(n);
    std::vector<std::int32_t> name(n);
    std::vector<double> x(n), y(n);
    gb::generate_rows(spec, row0, n, gb::kColAll,
                      {ts.data(), id.data(), name.data(), x.data(), y.data(), key.data()});
    EXPECT_EQ(d.ts.host(), ts);
    EXPECT_EQ(d.id.host(), id);
    EXPECT_EQ(d.name.host(), name);
    EXPECT_EQ(d.key.host(), key);
    EXPECT_EQ(0, std::memcmp(d.x.host().data(), x.data(), sizeof(double) * n));
    EXPECT_EQ(0, std::memcmp(d.y.host().data(), y.data(), sizeof(double) * n));
  }
  SB_CUDA_CHECK(cudaFree(dpt));
}

TEST(GroupbyGpu, HashTableWithHotKeysAndOwnerCompaction) {
  REQUIRE_GPU();
  cudaStream_t s = context()->stream;
  sb::Params p = gb::preset_params("tiny");
  p.set("query", "by-key");
  // mode 0: direct global atomics; 1: staged, one-level flush (L2); 2: staged, slices in
  // shared memory (with a 16-region first level, hot regions overflow into the table); 3: as 2
  // with 32-bit keys in the first level.
  for (const auto& [card, mode] :
       {std::pair{"1000", 0}, std::pair{"3000000", 0}, std::pair{"1000", 2},
        std::pair{"3000000", 1}, std::pair{"3000000", 2}, std::pair{"3000000", 3}}) {
    SCOPED_TRACE(std::string(card) + " mode " + std::to_string(mode));
    p.set("cardinality", card);
    const gb::Config c = gb::parse(p);
    const std::int64_t n = 1'000'000;
    DevCols d(n);
    gb::gpu::generate(c.table(), nullptr, 0, n, c.def.columns, d.ptrs(), s);
    gb::gpu::HashTable t = gb::gpu::make_hash(c.max_groups(n), c.def.fields);
    gb::gpu::hash_clear(t, s);
    gb::ColumnPtrs rest = d.ptrs();
    rest.key += n / 2;
    rest.x += n / 2;
    rest.y += n / 2;
    if (mode > 0) {
      // Buckets for a third of the rows and 16 regions: hot regions overflow into the table.
      gb::gpu::HashStage st =
          gb::gpu::make_stage(t, context()->prop, n / 3, 4, mode >= 2, mode == 3);
      if (mode >= 2 && std::string(card) != "1000") EXPECT_GT(st.slice_bits, 0);
      EXPECT_EQ(st.narrow_keys, mode == 3);
      gb::gpu::stage_clear(st, s);
      gb::gpu::stage_rows(t, st, d.ptrs(), n / 2, s);
      gb::gpu::stage_rows(t, st, rest, n - n / 2, s);
      gb::gpu::stage_flush(t, st, s);
      SB_CUDA_CHECK(cudaStreamSynchronize(s));
      gb::gpu::free_stage(st);
    } else {
      gb::gpu::hash_aggregate(t, d.ptrs(), n / 2, s);  // two launches into one table
      gb::gpu::hash_aggregate(t, rest, n - n / 2, s);
    }
    const gb::PartitionedTable cpu = cpu_groups(c, n);
    // Compaction grouped by 3 owners.
    const int w = gb::record_width(c.def.fields);
    DevBuf<std::uint64_t> out(static_cast<std::size_t>(c.max_groups(n)) * w);
    long long counts[3], offsets[3];
    const std::int64_t total = gb::gpu::hash_compact(t, 3, out.p, counts, offsets, s);
    EXPECT_FALSE(gb::gpu::hash_overflowed(t, s));
    ASSERT_EQ(static_cast<std::size_t>(total), cpu.size()) << card;
    const std::vector<std::uint64_t> recs = out.host();
    std::int64_t bad = 0;
    double worst = 0;
    for (int o = 0; o < 3; ++o) {
      for (long long i = offsets[o]; i < offsets[o] + counts[o]; ++i) {
        const std::int64_t k =
            compare_record(cpu, &recs[static_cast<std::size_t>(i) * w], c.def.fields, bad, worst);
        EXPECT_EQ(gb::owner_of(k, 3), o);
      }
    }
    EXPECT_EQ(bad, 0) << card;
    EXPECT_LE(worst, 1e-9) << card;
    // Checksums, and re-inserting the records into a cleared table (the owner's merge).
    const std::array<double, 6> sum6 = checksums(recs, total, c.def.fields);
    EXPECT_EQ(sum6[0], static_cast<double>(total));
    EXPECT_EQ(sum6[1], static_cast<double>(n));
    gb::gpu::hash_clear(t, s);
    gb::gpu::hash_insert_records(t, out.p, total, s);
    gb::gpu::hash_insert_records(t, out.p, total, s);  // twice: every count doubles
    DevBuf<std::uint64_t> again(out.n);
    const std::int64_t total2 = gb::gpu::hash_compact(t, 1, again.p, counts, offsets, s);
    EXPECT_EQ(total2, total);
    const std::vector<std::uint64_t> again_host = again.host();
    const std::array<double, 6> sum6b = checksums(again_host, total2, c.def.fields);
    EXPECT_EQ(sum6b[1], 2.0 * n);
    EXPECT_NEAR(sum6b[4], sum6[4], 1e-9 * std::fabs(sum6[4]) + 1e-9);  // mins unchanged
    // The one-pass compaction with checksums: the same records (in its own order) and sums.
    DevBuf<std::uint64_t> third(out.n);
    const gb::gpu::TableStatus st = gb::gpu::hash_finish(t, third.p, s);
    EXPECT_EQ(st.overflow, 0);
    ASSERT_EQ(static_cast<std::int64_t>(st.records), total2);
    EXPECT_EQ(st.sum[0], static_cast<double>(total2));
    EXPECT_EQ(st.sum[1], 2.0 * n);
    for (int k = 2; k < 6; ++k)
      EXPECT_NEAR(st.sum[k], sum6b[k], 1e-9 * std::fabs(sum6b[k]) + 1e-9) << k;
    auto sorted = [&](const std::vector<std::uint64_t>& v) {
      std::vector<std::vector<std::uint64_t>> r(static_cast<std::size_t>(total2));
      for (std::size_t i = 0; i < r.size(); ++i)
        r[i].assign(v.begin() + static_cast<std::ptrdiff_t>(i * w),
                    v.begin() + static_cast<std::ptrdiff_t>((i + 1) * w));
      std::sort(r.begin(), r.end());
      return r;
    };
    EXPECT_TRUE(sorted(third.host()) == sorted(again_host));
    gb::gpu::free_hash(t);
  }
}

// stage_finish: the slices folded straight into records, where every bucket held its rows (the
// table is never touched) and where the first level's buckets were too small (rows reached the
// table during the staging, and the records were merged there). Each case runs twice on the
// same table and stage: the table must be clean again after either way. Every group is
// compared with the CPU's, and the checksums with the records'.
TEST(GroupbyGpu, StageFinishEqualsTheCpu) {
  REQUIRE_GPU();
  cudaStream_t s = context()->stream;
  const gb::Config c = by_key_config("3000000");
  const std::int64_t n = 1'000'000;
  const gb::PartitionedTable cpu = cpu_groups(c, n);
  const int w = gb::record_width(c.def.fields);
  DevCols d(n);
  gb::gpu::generate(c.table(), nullptr, 0, n, c.def.columns, d.ptrs(), s);
  // {bucket rows, region bits, narrow keys, spilled}: room for every row (regions picked by
  // make_stage), and a third of the rows in 16 regions (every region overflows).
  struct Case {
    std::int64_t rows;
    int region_bits;
    bool narrow;
    int spilled;
  };
  for (const Case& k : {Case{n, 0, true, 0}, Case{n / 3, 4, false, 1}, Case{n, 0, false, 0}}) {
    SCOPED_TRACE("bucket rows " + std::to_string(k.rows) + " spilled " + std::to_string(k.spilled));
    gb::gpu::HashTable t = gb::gpu::make_hash(c.max_groups(n), c.def.fields);
    gb::gpu::hash_clear(t, s);
    gb::gpu::HashStage st =
        gb::gpu::make_stage(t, context()->prop, k.rows, k.region_bits, true, k.narrow);
    ASSERT_GT(st.slice_bits, 0);
    gb::gpu::stage_clear(st, s);
    DevBuf<std::uint64_t> out(static_cast<std::size_t>(c.max_groups(n)) * w);
    for (int pass = 0; pass < 2; ++pass) {
      SCOPED_TRACE("pass " + std::to_string(pass));
      gb::ColumnPtrs rest = d.ptrs();
      rest.key += n / 2;
      rest.x += n / 2;
      rest.y += n / 2;
      gb::gpu::stage_rows(t, st, d.ptrs(), n / 2, s);
      gb::gpu::stage_rows(t, st, rest, n - n / 2, s);
      const gb::gpu::TableStatus ts = gb::gpu::stage_finish(t, st, out.p, s);
      EXPECT_EQ(ts.spilled, k.spilled);
      const std::vector<std::uint64_t> recs = expect_cpu_groups(cpu, out, ts, c.def.fields);
      ASSERT_LE(ts.records * w, recs.size());
      const std::array<double, 6> sum6 =
          checksums(recs, static_cast<std::int64_t>(ts.records), c.def.fields);
      EXPECT_EQ(ts.sum[0], static_cast<double>(ts.records));
      EXPECT_EQ(ts.sum[1], static_cast<double>(n));
      for (int q = 2; q < 6; ++q)
        EXPECT_NEAR(ts.sum[q], sum6[q], 1e-9 * std::fabs(sum6[q]) + 1e-9) << q;
    }
    gb::gpu::free_stage(st);
    gb::gpu::free_hash(t);
  }
}

// The staging kernels take more than 48 KB of shared memory, an opt-in that belongs to the
// device: a process that drives several GPUs (the benchmarks) must get it on each. Stages and
// folds the same rows on every visible GPU in turn (two at the most) and compares every group
// with the CPU's. Needs two GPUs.
TEST(GroupbyGpu, StagingRunsOnEveryDeviceOfOneProcess) {
  REQUIRE_GPU();
  int devices = 0;
  SB_CUDA_CHECK(cudaGetDeviceCount(&devices));
  if (devices < 2) GTEST_SKIP() << "needs two GPUs in this process";
  const gb::Config c = by_key_config("3000000");
  const std::int64_t n = 1'000'000;
  const gb::PartitionedTable cpu = cpu_groups(c, n);
  const int w = gb::record_width(c.def.fields);
  for (int dev = 0; dev < 2; ++dev) {
    SCOPED_TRACE("device " + std::to_string(dev));
    SB_CUDA_CHECK(cudaSetDevice(dev));
    cudaDeviceProp prop{};
    SB_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    cudaStream_t s = nullptr;
    SB_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    {
      DevCols d(n);
      gb::gpu::generate(c.table(), nullptr, 0, n, c.def.columns, d.ptrs(), s);
      gb::gpu::HashTable t = gb::gpu::make_hash(c.max_groups(n), c.def.fields);
      gb::gpu::hash_clear(t, s);
      gb::gpu::HashStage st = gb::gpu::make_stage(t, prop, n, 0, true, true);
      EXPECT_GT(st.slice_bits, 0);
      gb::gpu::stage_clear(st, s);
      gb::gpu::stage_rows(t, st, d.ptrs(), n, s);
      gb::gpu::stage_flush(t, st, s);
      DevBuf<std::uint64_t> out(static_cast<std::size_t>(c.max_groups(n)) * w);
      (void)expect_cpu_groups(cpu, out, gb::gpu::hash_finish(t, out.p, s), c.def.fields);
      gb::gpu::free_stage(st);
      gb::gpu::free_hash(t);
    }
    SB_CUDA_CHECK(cudaStreamDestroy(s));
  }
  SB_CUDA_CHECK(cudaSetDevice(0));
}

// The peer exchange of the row shuffle for three workers, all in this process on one GPU (the
// push kernel stores into a landing area through a pointer whether it is another GPU's memory
// mapped here or this one's): each worker stages its third of the rows task by task and pushes
// what its buckets gained to the other owners beside the next staging; each owner then splits
// its own rows and the landed ones into its slices and folds once, into its table and then
// compacted (first repeat) or straight into records (second, the peer exchange's way, the rows
// of all pushes but the last split first, from the host copies of the snapshots). Every
// group of each owner equals the CPU's. Keys as 64-bit words from stored columns and as 32-bit
// words from rows generated in the staging kernel; two repeats over
// the same buffers each (the second overwrites the first's rows), with one and with seven push
// blocks.
TEST(GroupbyGpu, PeerExchangeEqualsTheCpu) {
  REQUIRE_GPU();
  cudaStream_t s = context()->stream;
  const gb::Config c = by_key_config("3000000");
  const std::int64_t n = 1'200'000;
  const int P = 3;
  const std::int64_t share = c.max_groups(n) / P;
  DevCols d(n);
  gb::gpu::generate(c.table(), nullptr, 0, n, c.def.columns, d.ptrs(), s);
  struct Worker {
    gb::gpu::HashTable owner, spill;
    gb::gpu::RowShuffle sh;
    std::vector<unsigned long long> cur;
  };
  const gb::PartitionedTable cpu = cpu_groups(c, n);
  const int tasks = 3;  // per worker; worker j stages rows [j n / P, (j + 1) n / P)
  const std::int64_t part = n / P, per_task = part / tasks;
  const int wd = gb::record_width(c.def.fields);
  cudaStream_t ps = nullptr;  // the pushes run beside the next staging, as in the worker
  SB_CUDA_CHECK(cudaStreamCreateWithFlags(&ps, cudaStreamNonBlocking));
  cudaEvent_t staged = nullptr;
  SB_CUDA_CHECK(cudaEventCreateWithFlags(&staged, cudaEventDisableTiming));
  for (const bool narrow : {false, true}) {
    SCOPED_TRACE(narrow ? "32-bit keys" : "64-bit keys");
    std::vector<Worker> w(P);
    for (Worker& k : w) {
      k.owner = gb::gpu::make_hash(share + share / 8 + 1024, c.def.fields);
      k.spill = gb::gpu::make_hash(c.max_groups(n), c.def.fields);
      gb::gpu::hash_clear(k.spill, s);
      k.sh = gb::gpu::plan_row_shuffle(k.owner, P, n);
      ASSERT_EQ(k.sh.owners, P);
      k.sh.owner_bits = std::bit_width(static_cast<std::uint64_t>(k.spill.capacity)) - 1;
      k.sh.narrow_keys = narrow;
      gb::gpu::alloc_row_shuffle(k.sh);
      gb::gpu::alloc_landing(k.sh);
      k.cur.resize(static_cast<std::size_t>(k.sh.buckets()));
    }
    std::vector<void*> landings;
    for (Worker& k : w) landings.push_back(k.sh.landing);
    for (Worker& k : w) gb::gpu::shuffle_set_landings(k.sh, landings, s);
    const int R = w[0].sh.regions();
    for (int repeat = 0; repeat < 2; ++repeat) {
      const int ctas = repeat == 0 ? 1 : 7;  // one block takes every item; several share them
      SCOPED_TRACE("repeat " + std::to_string(repeat));
      for (Worker& k : w) {
        gb::gpu::hash_clear(k.owner, s);
        gb::gpu::shuffle_clear(k.sh, s);
      }
      for (int t = 0; t < tasks; ++t) {
        for (int j = 0; j < P; ++j) {
          gb::ColumnPtrs in = d.ptrs();
          const std::int64_t r0 = j * part + t * per_task;
          const std::int64_t end = j + 1 < P ? (j + 1) * part : n;
          const std::int64_t rows = t + 1 < tasks ? per_task : end - r0;
          in.key += r0;
          in.x += r0;
          in.y += r0;
          // 32-bit keys: the rows generated in the staging kernel, as the worker stages them
          if (narrow) {
            gb::gpu::shuffle_stage(w[j].owner, w[j].spill, w[j].sh,
                                   gb::gpu::RowSource::generated(c.table(), r0), rows, s);
          } else {
            gb::gpu::shuffle_stage(w[j].owner, w[j].spill, w[j].sh, in, rows, s);
          }
          gb::gpu::shuffle_snapshot(w[j].sh, t, repeat == 1, s);
          SB_CUDA_CHECK(cudaEventRecord(staged, s));
          SB_CUDA_CHECK(cudaStreamWaitEvent(ps, staged, 0));
          gb::gpu::shuffle_push(w[j].sh, j, t - 1, t, ctas, ps);
        }
      }
      SB_CUDA_CHECK(cudaDeviceSynchronize());
      for (Worker& k : w) gb::gpu::shuffle_cursors(k.sh, k.cur.data(), s);
      std::int64_t groups = 0, bad = 0;
      double worst = 0, counted = 0;
      for (int o = 0; o < P; ++o) {
        gb::gpu::RowShuffle& sh = w[o].sh;
        EXPECT_EQ(gb::gpu::shuffle_own_segments(sh, o, w[o].cur.data()), R);
        std::vector<long long> landed(static_cast<std::size_t>(P) * R);
        for (int q = 0; q < P; ++q)
          for (int r = 0; r < R; ++r) {
            const unsigned long long cnt = w[q].cur[static_cast<std::size_t>(o) * R + r];
            ASSERT_LE(cnt, static_cast<unsigned long long>(sh.bucket_capacity));  // no spill here
            landed[static_cast<std::size_t>(q) * R + r] = static_cast<long long>(cnt);
          }
        gb::gpu::shuffle_upload(sh, s);
        gb::gpu::shuffle_slices_clear(sh, 0, R, s);
        gb::gpu::shuffle_restage(w[o].owner, sh, 0, R, sh.key, s);
        std::vector<long long> early;  // second repeat: the rows of the first tasks split first
        if (repeat == 1) {
          const std::size_t B = static_cast<std::size_t>(sh.buckets());
          for (int q = 0; q < P; ++q)
            for (int r = 0; r < R; ++r) {
              const std::size_t b = static_cast<std::size_t>(o) * R + r;
              early.push_back(static_cast<long long>(w[q].sh.host_snapshots[(tasks - 2) * B + b]));
              ASSERT_LE(early.back(), landed[early.size() - 1]);
            }
          SB_CUDA_CHECK(cudaStreamSynchronize(s));  // host_segments is read by the upload
          EXPECT_EQ(gb::gpu::shuffle_landing_segments(sh, o, early.data(), R), (P - 1) * R);
          gb::gpu::shuffle_upload(sh, s);
          gb::gpu::shuffle_restage(w[o].owner, sh, R, (P - 1) * R, sh.landing, s);
          SB_CUDA_CHECK(cudaStreamSynchronize(s));
        }
        const int nl = gb::gpu::shuffle_landing_segments(sh, o, landed.data(), R,
                                                         early.empty() ? nullptr : early.data());
        EXPECT_EQ(nl, (P - 1) * R);
        gb::gpu::shuffle_upload(sh, s);
        gb::gpu::shuffle_restage(w[o].owner, sh, R, nl, sh.landing, s);
        DevBuf<std::uint64_t> out(static_cast<std::size_t>(w[o].owner.capacity) * wd);
        gb::gpu::TableStatus st{};
        if (repeat == 0) {
          gb::gpu::shuffle_fold(w[o].owner, sh, 0, R, s);
          st = gb::gpu::hash_finish(w[o].owner, out.p, s);
        } else {  // the peer exchange's fold: every slice straight into records
          gb::gpu::shuffle_fold_emit(w[o].owner, sh, out.p, s);
          SB_CUDA_CHECK(
              cudaMemcpyAsync(&st, w[o].owner.status, sizeof st, cudaMemcpyDeviceToHost, s));
          SB_CUDA_CHECK(cudaStreamSynchronize(s));
          EXPECT_EQ(st.spilled, 0);
        }
        EXPECT_EQ(st.overflow, 0);
        EXPECT_EQ(st.sum[0], static_cast<double>(st.records));
        counted += st.sum[1];
        const std::vector<std::uint64_t> recs = out.host();
        for (unsigned long long i = 0; i < st.records; ++i) {
          const std::int64_t k = compare_record(cpu, &recs[i * wd], c.def.fields, bad, worst);
          EXPECT_EQ(gb::owner_of(k, P, sh.owner_bits), o);
        }
        groups += static_cast<std::int64_t>(st.records);
      }
      EXPECT_EQ(static_cast<std::size_t>(groups), cpu.size());
      EXPECT_EQ(counted, static_cast<double>(n));
      EXPECT_EQ(bad, 0);
      EXPECT_LE(worst, 1e-9);
    }
    for (Worker& k : w) {
      gb::gpu::free_row_shuffle(k.sh);
      gb::gpu::free_hash(k.owner);
      gb::gpu::free_hash(k.spill);
    }
  }
  SB_CUDA_CHECK(cudaEventDestroy(staged));
  SB_CUDA_CHECK(cudaStreamDestroy(ps));
}

// The dense kernels with var/std's sum of squares, on stored columns and on rows generated in
// the kernel (in two launches, the second from a row that is not the first: the partials
// carry over), each against the CPU twin's groups of the same rows.
TEST(GroupbyGpu, DenseKernelsWithVariance) {
  REQUIRE_GPU();
  cudaStream_t s = context()->stream;
  for (gb::Query q : {gb::Query::by_name, gb::Query::by_id}) {
    gb::QueryDef def =
        gb::with_outputs(gb::query_def(q), {{"var_x", gb::Agg::var, gb::ValueColumn::x}});
    const std::int64_t n = 777'777;
    const gb::TableSpec spec{42, 1};
    DevCols d(n);
    gb::PoissonTable* dpt = gb::gpu::upload_poisson_table(gb::id_poisson_table(), s);
    gb::gpu::generate(spec, dpt, 0, n, gb::kColAll, d.ptrs(), s);
    std::vector<std::int64_t> id(n);
    std::vector<std::int32_t> name(n);
    std::vector<double> x(n), y(n);
    gb::ColumnPtrs hc{nullptr, id.data(), name.data(), x.data(), y.data(), nullptr};
    gb::generate_rows(spec, 0, n, gb::kColAll & ~(gb::kColTimestamp | gb::kColKey), hc);
    gb::PartitionedTable cpu(0, 16);
    gb::aggregate_rows(def, hc, 0, n, cpu);
    gb::gpu::DenseAgg a = gb::gpu::make_dense(def, context()->prop);
    for (const bool generated : {false, true}) {
      SCOPED_TRACE(std::string(gb::to_string(q)) + (generated ? " generated" : " columns"));
      gb::gpu::dense_clear(a, s);
      if (generated) {
        gb::gpu::dense_generate(a, spec, dpt, 0, 300'001, s);
        gb::gpu::dense_generate(a, spec, dpt, 300'001, n - 300'001, s);
      } else {
        gb::gpu::dense_aggregate(def, a, d.ptrs(), n, s);
      }
      gb::gpu::dense_finish(a, s);
      std::vector<double> acc(static_cast<std::size_t>(a.words));
      SB_CUDA_CHECK(cudaMemcpyAsync(acc.data(), a.acc, sizeof(double) * acc.size(),
                                    cudaMemcpyDeviceToHost, s));
      SB_CUDA_CHECK(cudaStreamSynchronize(s));
      const auto D = static_cast<std::size_t>(a.domain);
      std::size_t groups = 0;
      for (std::size_t u = 0; u < D; ++u) {
        const gb::GroupState* r = cpu.find(def.domain_lo + static_cast<std::int64_t>(u));
        if (r == nullptr) {
          EXPECT_EQ(acc[u], 0.0);
          continue;
        }
        ++groups;
        EXPECT_EQ(acc[u], static_cast<double>(r->count));
        std::size_t j = 1;
        EXPECT_LE(gb::sum_error(acc[j++ * D + u], r->sum_x, r->count), 1e-12);
        if (def.fields & gb::kSumY)
          EXPECT_LE(gb::sum_error(acc[j++ * D + u], r->sum_y, r->count), 1e-12);
        EXPECT_LE(gb::sum_error(acc[j++ * D + u], r->sumsq_x, r->count), 1e-12);
      }
      EXPECT_EQ(groups, cpu.size());
    }
    gb::gpu::free_dense(a);
    SB_CUDA_CHECK(cudaFree(dpt));
  }
}

// by-key's first pass on rows generated in the kernel, from a row that is not the first:
// staged (both levels, then every slice folded into records) and, for a table that fits L2,
// straight into the table; every group equals the CPU twin's of the same rows.
TEST(GroupbyGpu, GeneratedRowsEqualTheCpu) {
  REQUIRE_GPU();
  cudaStream_t s = context()->stream;
  for (const char* card : {"3000000", "1000"}) {
    SCOPED_TRACE(std::string("cardinality ") + card);
    const gb::Config c = by_key_config(card);
    const std::int64_t row0 = 86'400 * 3 + 17, n = 1'000'000;
    std::vector<std::int64_t> key(n);
    std::vector<double> x(n), y(n);
    gb::ColumnPtrs hc;
    hc.key = key.data();
    hc.x = x.data();
    hc.y = y.data();
    gb::generate_rows(c.table(), row0, n, c.def.columns, hc);
    gb::PartitionedTable cpu(4, 16);
    gb::aggregate_rows(c.def, hc, 0, n, cpu);
    const int w = gb::record_width(c.def.fields);
    gb::gpu::HashTable t = gb::gpu::make_hash(c.max_groups(n), c.def.fields);
    gb::gpu::hash_clear(t, s);
    DevBuf<std::uint64_t> out(static_cast<std::size_t>(c.max_groups(n)) * w);
    const gb::gpu::RowSource first = gb::gpu::RowSource::generated(c.table(), row0);
    const gb::gpu::RowSource second = gb::gpu::RowSource::generated(c.table(), row0 + n / 2);
    if (std::string(card) == "1000") {
      gb::gpu::hash_aggregate(t, first, n / 2, s);
      gb::gpu::hash_aggregate(t, second, n - n / 2, s);
      (void)expect_cpu_groups(cpu, out, gb::gpu::hash_finish(t, out.p, s), c.def.fields);
    } else {
      gb::gpu::HashStage st = gb::gpu::make_stage(t, context()->prop, n, 0, true, true);
      ASSERT_GT(st.slice_bits, 0);
      gb::gpu::stage_clear(st, s);
      gb::gpu::stage_rows(t, st, first, n / 2, s);
      gb::gpu::stage_rows(t, st, second, n - n / 2, s);
      const gb::gpu::TableStatus ts = gb::gpu::stage_finish(t, st, out.p, s);
      EXPECT_EQ(ts.spilled, 0);
      (void)expect_cpu_groups(cpu, out, ts, c.def.fields);
      gb::gpu::free_stage(st);
    }
    gb::gpu::free_hash(t);
  }
}

TEST(GroupbyGpu, WholeCasesEqualTheCpuOnTinyAndSmall) {
  REQUIRE_GPU();
  const auto w = sb::groupby_workload();
  for (const char* preset : {"tiny", "small"}) {
    for (const auto& params : w.expand(w.preset(preset))) {
      SCOPED_TRACE(std::string(preset) + " " + params.canonical());
      sb::CaseEnv cpu_env;
      cpu_env.threads = 8;
      sb::CaseEnv gpu_env;
      gpu_env.device = sb::Device::gpu;
      gpu_env.threads = 8;
      gpu_env.gpu = context();
      const sb::test::CaseRun c = sb::test::run_single(params, cpu_env, 1);
      const sb::test::CaseRun g = sb::test::run_single(params, gpu_env, 2);
      for (const auto& ch : g.checks) EXPECT_TRUE(ch.pass) << ch.name << " " << ch.value;
      ASSERT_FALSE(g.fingerprint.data.empty());
      for (const auto& ch : w.cross_check(c.fingerprint, g.fingerprint))
        EXPECT_TRUE(ch.pass) << ch.name << " " << ch.value << " " << ch.detail;
      EXPECT_EQ(g.result["sum_count"], c.result["sum_count"]);
      EXPECT_EQ(g.result["groups"], c.result["groups"]);
    }
  }
}
