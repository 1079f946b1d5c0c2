// groupby aggregation on the CPU: the open-addressing table, each query against a plain
// std::unordered_map reference on the tiny preset, the merge of thread-local tables, var/std,
// parameters, and whole in-process cases through the scheduler.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <unordered_map>
#include <vector>

#include "groupby/aggregate_cpu.hpp"
#include "groupby/config.hpp"
#include "groupby/generate.hpp"
#include "groupby/group_table.hpp"
#include "groupby/validation.hpp"
#include "groupby/work_floor.hpp"
#include "harness.hpp"
#include "scalebench/error.hpp"

namespace gb = sb::groupby;

namespace {

struct Data {
  Data(const gb::Config& c, std::int64_t rows) : n(rows), id(n), name(n), x(n), y(n), key(n) {
    gb::generate_rows(c.table(), 0, n, gb::kColAll & ~gb::kColTimestamp, ptrs());
  }
  gb::ColumnPtrs ptrs() {
    return {nullptr, id.data(), name.data(), x.data(), y.data(), key.data()};
  }
  std::int64_t key_of(const gb::QueryDef& q, std::int64_t i) const {
    if (q.key_column == gb::kColName) return name[i];
    if (q.key_column == gb::kColId) return id[i];
    return key[i];
  }
  std::int64_t n;
  std::vector<std::int64_t> id;
  std::vector<std::int32_t> name;
  std::vector<double> x, y;
  std::vector<std::int64_t> key;
};

struct Ref {
  std::int64_t count = 0;
  double sx = 0, sy = 0, sxx = 0, mn = INFINITY, mx = -INFINITY;
};

std::unordered_map<std::int64_t, Ref> reference(const gb::QueryDef& q, const Data& d) {
  std::unordered_map<std::int64_t, Ref> m;
  for (std::int64_t i = 0; i < d.n; ++i) {
    Ref& r = m[d.key_of(q, i)];
    ++r.count;
    r.sx += d.x[i];
    r.sy += d.y[i];
    r.sxx += d.x[i] * d.x[i];
    r.mn = std::min(r.mn, d.x[i]);
    r.mx = std::max(r.mx, d.x[i]);
  }
  return m;
}

void expect_equal(const gb::QueryDef& q, const std::unordered_map<std::int64_t, Ref>& ref,
                  const gb::PartitionedTable& t) {
  ASSERT_EQ(t.size(), ref.size());
  for (const auto& [k, r] : ref) {
    const gb::GroupState* s = t.find(k);
    ASSERT_NE(s, nullptr) << k;
    EXPECT_EQ(s->count, r.count) << k;
    if (q.fields & gb::kSumX) {
      EXPECT_LE(gb::sum_error(s->sum_x, r.sx, r.count), 1e-12) << k;
    }
    if (q.fields & gb::kSumY) {
      EXPECT_LE(gb::sum_error(s->sum_y, r.sy, r.count), 1e-12) << k;
    }
    if (q.fields & gb::kSumSqX) {
      EXPECT_LE(gb::sum_error(s->sumsq_x, r.sxx, r.count), 1e-12);
    }
    if (q.fields & gb::kMinX) {
      EXPECT_EQ(s->min_x, r.mn) << k;
    }
    if (q.fields & gb::kMaxX) {
      EXPECT_EQ(s->max_x, r.mx) << k;
    }
  }
}

gb::Config tiny(gb::Query q, std::uint64_t card = 10'000'000) {
  sb::Params p = gb::preset_params("tiny");
  p.set("query", std::string(gb::to_string(q)));
  p.set("cardinality", std::to_string(card));
  return gb::parse(p);
}

}  // namespace

TEST(GroupbyTable, InsertGrowFindMerge) {
  gb::GroupTable t(4);
  const std::size_t cap0 = t.capacity();
  for (std::int64_t k = -500; k < 1500; k += 2) t.upsert(k * 1000003).add<gb::kSumX>(1.0, 0.0);
  EXPECT_EQ(t.size(), 1000u);
  EXPECT_GT(t.capacity(), cap0);
  EXPECT_LE(static_cast<double>(t.size()), 0.7 * static_cast<double>(t.capacity()));
  for (std::int64_t k = -500; k < 1500; ++k) {
    const gb::GroupState* s = t.find(k * 1000003);
    if (k % 2 == 0) {
      ASSERT_NE(s, nullptr);
      EXPECT_EQ(s->count, 1);
      EXPECT_EQ(s->sum_x, 1.0);
    } else {
      EXPECT_EQ(s, nullptr);
    }
  }
  gb::GroupTable u;
  u.upsert(0).add<gb::kSumX | gb::kMinX | gb::kMaxX>(-0.5, 0.0);
  u.upsert(3).add<gb::kSumX | gb::kMinX | gb::kMaxX>(0.25, 0.0);
  t.merge(u);
  EXPECT_EQ(t.size(), 1001u);
  EXPECT_EQ(t.find(0)->count, 2);
  EXPECT_EQ(t.find(0)->sum_x, 0.5);
  EXPECT_EQ(t.find(0)->min_x, -0.5);
  EXPECT_EQ(t.find(3)->max_x, 0.25);
  const std::size_t cap = t.capacity();
  t.clear();
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.capacity(), cap);
  EXPECT_EQ(t.find(0), nullptr);
}

TEST(GroupbyTable, OwnersAndPartitionsSpread) {
  std::vector<int> owners(3, 0);
  gb::PartitionedTable pt(6, 0);
  std::vector<int> parts(64, 0);
  for (std::int64_t k = 0; k < 30000; ++k) {
    ++owners[static_cast<std::size_t>(gb::owner_of(k, 3))];
    ++parts[static_cast<std::size_t>(pt.partition_of(k))];
  }
  for (int o : owners) EXPECT_NEAR(o, 10000, 600);
  for (int p : parts) EXPECT_NEAR(p, 30000 / 64.0, 150);
}

// Owners by ranges of the slot hash (the GPU row shuffle): balanced, and the consecutive keys
// below 2^bits that one table of 2^bits slots holds without a collision keep their slots
// distinct in an owner's table of 2^bits / owners slots.
TEST(GroupbyTable, OwnersBySlotRangesKeepDenseKeysApart) {
  const int bits = 20;
  for (int workers : {2, 3, 4}) {
    std::vector<int> owners(static_cast<std::size_t>(workers), 0);
    const std::uint64_t owner_slots = std::bit_ceil((std::uint64_t{1} << bits) / workers);
    std::vector<std::vector<char>> used(static_cast<std::size_t>(workers),
                                        std::vector<char>(owner_slots, 0));
    std::int64_t collisions = 0;
    const std::int64_t keys = 700000;  // load 0.67 of 2^20 slots
    for (std::int64_t k = 0; k < keys; ++k) {
      const int o = gb::owner_of(k, workers, bits);
      ASSERT_GE(o, 0);
      ASSERT_LT(o, workers);
      ++owners[static_cast<std::size_t>(o)];
      char& u = used[static_cast<std::size_t>(o)][gb::slot_hash(k) & (owner_slots - 1)];
      collisions += u;
      u = 1;
    }
    EXPECT_EQ(collisions, 0) << workers;
    for (int o : owners)
      EXPECT_NEAR(o, static_cast<double>(keys) / workers, 0.01 * keys) << workers;
  }
  EXPECT_EQ(gb::owner_of(12345, 3, 0), gb::owner_of(12345, 3));
}

TEST(GroupbyAggregate, EachQueryEqualsReferenceOnTiny) {
  for (gb::Query q : {gb::Query::by_name, gb::Query::by_id, gb::Query::by_key}) {
    const gb::Config c = tiny(q);
    Data d(c, c.rows);
    gb::PartitionedTable t(q == gb::Query::by_key ? 6 : 0, 16);
    gb::aggregate_rows(c.def, d.ptrs(), 0, d.n, t);
    const auto ref = reference(c.def, d);
    SCOPED_TRACE(std::string(gb::to_string(q)));
    expect_equal(c.def, ref, t);
    if (q == gb::Query::by_name) {
      EXPECT_EQ(t.size(), 26u);
    }
  }
}

TEST(GroupbyAggregate, ThreadLocalTablesMerge) {
  for (gb::Query q : {gb::Query::by_name, gb::Query::by_key}) {
    const gb::Config c = tiny(q, 50'000);
    Data d(c, c.rows);
    const int bits = q == gb::Query::by_key ? 4 : 0;
    std::vector<gb::PartitionedTable> tables;
    for (int i = 0; i < 3; ++i) tables.emplace_back(bits, 8);
    std::vector<gb::PartitionedTable*> ptrs = {&tables[0], &tables[1], &tables[2]};
    gb::aggregate_rows_parallel(c.def, d.ptrs(), d.n, ptrs);
    for (const auto& t : tables) EXPECT_GT(t.size(), 0u);
    gb::PartitionedTable::merge_into(tables[0], ptrs, 2);
    SCOPED_TRACE(std::string(gb::to_string(q)));
    expect_equal(c.def, reference(c.def, d), tables[0]);
  }
}

TEST(GroupbyAggregate, VarianceAndStd) {
  gb::Config c = tiny(gb::Query::by_name);
  c.def = gb::with_outputs(c.def, {{"var_x", gb::Agg::var, gb::ValueColumn::x},
                                   {"std_x", gb::Agg::std, gb::ValueColumn::x}});
  EXPECT_TRUE(c.def.fields & gb::kSumSqX);
  Data d(c, 20000);
  gb::PartitionedTable t(0, 26);
  gb::aggregate_rows(c.def, d.ptrs(), 0, d.n, t);
  // Two-pass variance per name as the reference.
  for (std::int32_t code = 0; code < 26; ++code) {
    double s = 0;
    std::int64_t n = 0;
    for (std::int64_t i = 0; i < d.n; ++i)
      if (d.name[i] == code) {
        s += d.x[i];
        ++n;
      }
    const double mean = s / n;
    double m2 = 0;
    for (std::int64_t i = 0; i < d.n; ++i)
      if (d.name[i] == code) m2 += (d.x[i] - mean) * (d.x[i] - mean);
    const gb::GroupState* g = t.find(code);
    ASSERT_NE(g, nullptr);
    EXPECT_NEAR(gb::aggregate(*g, gb::Agg::var, gb::ValueColumn::x), m2 / (n - 1), 1e-12);
    EXPECT_NEAR(gb::aggregate(*g, gb::Agg::std, gb::ValueColumn::x), std::sqrt(m2 / (n - 1)),
                1e-12);
    EXPECT_NEAR(gb::aggregate(*g, gb::Agg::mean, gb::ValueColumn::x), mean, 1e-15);
  }
}

TEST(GroupbyParams, PresetsExpandAndErrors) {
  const auto w = sb::groupby_workload();
  EXPECT_EQ(w.name, "groupby");
  const auto cases = w.expand(w.preset("small"));
  ASSERT_EQ(cases.size(), 3u);
  EXPECT_EQ(cases[0].str("query"), "by-name");
  EXPECT_FALSE(cases[0].has("cardinality"));
  EXPECT_EQ(cases[2].str("query"), "by-key");
  EXPECT_EQ(cases[2].str("cardinality"), "10000000");
  EXPECT_EQ(gb::parse(cases[0]).rows, 2'592'000);
  EXPECT_EQ(gb::parse(cases[0]).num_tasks(), 30);
  const auto large = w.expand(w.preset("large"));
  ASSERT_EQ(large.size(), 3u);
  const gb::Config lc = gb::parse(large[2]);
  EXPECT_EQ(lc.rows, 100'000'000);
  EXPECT_EQ(lc.num_tasks(), 20);
  EXPECT_EQ(lc.cardinality, 10'000'000u);
  EXPECT_EQ(lc.task_rows(19).second, 100'000'000);
  // rows overrides days; the id has no days then.
  sb::Params p = w.preset("tiny");
  p.set("rows", "1000");
  p.set("query", "by-id");
  const auto one = w.expand(p);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_FALSE(one[0].has("days"));
  EXPECT_EQ(gb::parse(one[0]).rows, 1000);
  // Bad values: one clear UsageError each.
  auto bad = [&](const char* k, const char* v) {
    sb::Params b = w.preset("tiny");
    b.set(k, v);
    EXPECT_THROW((void)w.expand(b), sb::UsageError) << k << "=" << v;
  };
  bad("query", "by-color");
  bad("days", "0");
  bad("rows", "-5");
  bad("partition", "0");
  bad("cardinality", "0");
  bad("cardinality", "1e30");
  bad("seed", "-1");
  bad("gpu_shuffle", "records");
  bad("gpu_exchange", "mpi");
  bad("push_blocks", "0");
  bad("push_blocks", "1025");
  bad("push_blocks", "many");
  bad("shuffle_chunks", "0");
  bad("shuffle_chunks", "9");
  bad("shuffle_chunks", "2.5");
  EXPECT_THROW((void)w.preset("huge"), sb::UsageError);
  // The tuning keys are in no preset (the default case ids stay as they are), reach the by-key
  // case only, and keep their defaults (0) when absent.
  for (const char* preset : {"tiny", "small", "seed", "large"}) {
    EXPECT_FALSE(w.preset(preset).has("push_blocks")) << preset;
    EXPECT_FALSE(w.preset(preset).has("shuffle_chunks")) << preset;
  }
  {
    sb::Params s = w.preset("tiny");
    EXPECT_EQ(gb::parse(w.expand(s)[2]).push_blocks, 0);
    EXPECT_EQ(gb::parse(w.expand(s)[2]).shuffle_chunks, 0);
    s.set("push_blocks", "1024");
    s.set("shuffle_chunks", "8");
    const auto v = w.expand(s);
    ASSERT_EQ(v.size(), 3u);
    EXPECT_FALSE(v[0].has("push_blocks"));
    EXPECT_FALSE(v[1].has("shuffle_chunks"));
    EXPECT_EQ(gb::parse(v[2]).push_blocks, 1024);
    EXPECT_EQ(gb::parse(v[2]).shuffle_chunks, 8);
    EXPECT_NE(v[2].canonical().find("push_blocks=1024"), std::string::npos);
    EXPECT_NE(v[2].canonical().find("shuffle_chunks=8"), std::string::npos);
  }
  {
    // Checked even where no by-key case keeps them.
    sb::Params b = w.preset("tiny");
    b.set("query", "by-name");
    b.set("shuffle_chunks", "0");
    EXPECT_THROW((void)w.expand(b), sb::UsageError);
  }
  try {
    sb::Params b = w.preset("tiny");
    b.set("push_blocks", "0");
    (void)w.expand(b);
    ADD_FAILURE() << "push_blocks=0 was accepted";
  } catch (const sb::UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "groupby: parameter 'push_blocks' must be an integer in [1, 1024] (got '0')");
  }
  // gpu_shuffle reaches the by-key case only (the other queries have no shuffle choice).
  {
    sb::Params s = w.preset("tiny");
    s.set("gpu_shuffle", "rows");
    s.set("gpu_exchange", "nccl");
    const auto v = w.expand(s);
    ASSERT_EQ(v.size(), 3u);
    EXPECT_FALSE(v[0].has("gpu_shuffle"));
    EXPECT_FALSE(v[0].has("gpu_exchange"));
    EXPECT_EQ(gb::parse(v[2]).gpu_shuffle, "rows");
    EXPECT_EQ(gb::parse(v[2]).gpu_exchange, "nccl");
    EXPECT_EQ(gb::parse(v[0]).gpu_shuffle, "auto");
    EXPECT_EQ(gb::parse(v[0]).gpu_exchange, "auto");
  }
  try {
    sb::Params b = w.preset("tiny");
    b.set("query", "by-color");
    (void)w.expand(b);
  } catch (const sb::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("by-name, by-id, by-key or all"), std::string::npos);
  }
}

TEST(GroupbyCase, InProcessSingleCpuValidatesAndCrossChecks) {
  const auto w = sb::groupby_workload();
  for (const auto& params : w.expand(w.preset("tiny"))) {
    SCOPED_TRACE(params.canonical());
    sb::CaseEnv one;
    one.threads = 1;
    sb::CaseEnv two;
    two.threads = 2;
    const sb::test::CaseRun a = sb::test::run_single(params, one);
    const sb::test::CaseRun b = sb::test::run_single(params, two);
    for (const auto& ch : a.checks) EXPECT_TRUE(ch.pass) << ch.name << " " << ch.value;
    for (const auto& ch : b.checks) EXPECT_TRUE(ch.pass) << ch.name << " " << ch.value;
    EXPECT_EQ(a.result["rows"].get<double>(), 172800.0);
    EXPECT_EQ(a.result["sum_count"].get<double>(), 172800.0);
    EXPECT_FALSE(a.fingerprint.data.empty());
    for (const auto& ch : w.cross_check(a.fingerprint, b.fingerprint))
      EXPECT_TRUE(ch.pass) << ch.name << " " << ch.value;
    const std::string q = params.str("query");
    if (q == "by-name") {
      ASSERT_TRUE(a.result.contains("table"));
      EXPECT_EQ(a.result["table"]["name"].size(), 26u);
      EXPECT_EQ(a.result["table"]["name"][0], "Alice");
      EXPECT_EQ(a.result["table"]["name"][25], "Zelda");
      for (const auto& m : a.result["table"]["mean_x"]) EXPECT_LT(std::fabs(m.get<double>()), 0.05);
    }
    if (q == "by-id") {
      EXPECT_GT(a.result["groups"].get<double>(), 200.0);
      EXPECT_EQ(a.result["table"]["count"].size(), a.result["table"]["id"].size());
    }
    if (q == "by-key") {
      EXPECT_FALSE(a.result.contains("table"));
      EXPECT_GT(a.result["groups"].get<double>(), 170000.0);  // 172800 rows among 10^7 keys
    }
    const sb::Work work =
        sb::groupby_workload()
            .make_scheduler(sb::test::make_spec(params, sb::ExecPath::single_cpu, 1))
            ->work();
    EXPECT_EQ(work.unit, "rows");
    EXPECT_EQ(work.units, 172800.0);
    // The floor: one Philox call a row for by-name, two for the others; the tiny tables stay on
    // chip, so only each group's record must be written (by-name 3 words, by-id 4, by-key 6).
    EXPECT_EQ(work.philox, 172800.0 * (q == "by-name" ? 1 : 2));
    const double groups =
        q == "by-key" ? 1e7 * -std::expm1(172800.0 * std::log1p(-1e-7))
                      : static_cast<double>(gb::query_def(gb::parse_query(q).value()).domain_size);
    const int words = q == "by-name" ? 3 : (q == "by-id" ? 4 : 6);
    EXPECT_NEAR(work.bytes, groups * 8 * words, 1e-6 * work.bytes);
  }
}

// The floor at the large preset: by-key's 2^24-slot table is far above twice the L2, so every
// row crosses device memory four times (two partition passes, 20 bytes a row with 32-bit keys;
// 24 past 2^32 keys) besides the records; by-name and by-id move only their results.
TEST(GroupbyCase, WorkFloorOfTheLargePreset) {
  sb::Params p = gb::preset_params("large");
  p.set("query", "by-key");
  gb::Config c = gb::parse(p);
  sb::Work w = gb::work_floor(c);
  const double groups = gb::expected_groups(c);
  EXPECT_NEAR(groups, 1e7 * (1.0 - std::exp(-10.0)), 1.0);
  EXPECT_EQ(w.philox, 2e8);
  EXPECT_NEAR(w.bytes, 4.0 * 20.0 * 1e8 + 48.0 * groups, 1.0);
  EXPECT_EQ(w.bound, sb::Work::Bound::bytes);
  p.set("cardinality", std::to_string(std::uint64_t{1} << 33));
  c = gb::parse(p);
  EXPECT_EQ(gb::partition_row_bytes(c), 24);
  EXPECT_GT(gb::work_floor(c).bytes, 4.0 * 24.0 * 1e8);
  p.set("cardinality", "1000");  // 1000 groups: a table that stays on chip
  EXPECT_NEAR(gb::work_floor(gb::parse(p)).bytes, 48.0 * 1000, 1.0);
  p.set("query", "by-name");
  w = gb::work_floor(gb::parse(p));
  EXPECT_EQ(w.philox, 1e8);
  EXPECT_EQ(w.bytes, 26.0 * 24);
}

TEST(GroupbyCase, CrossCheckCatchesADifference) {
  const auto w = sb::groupby_workload();
  sb::Params p = w.preset("tiny");
  p.set("query", "by-id");
  p.set("days", "1");
  const auto params = w.expand(p)[0];
  sb::CaseEnv env;
  const sb::test::CaseRun a = sb::test::run_single(params, env, 1);
  sb::Fingerprint f = a.fingerprint;
  f.data[1] += 1;         // one group's count
  f.data[2] *= 1 + 1e-6;  // its sum of x
  int failed = 0;
  for (const auto& ch : w.cross_check(a.fingerprint, f)) failed += ch.pass ? 0 : 1;
  EXPECT_EQ(failed, 2);
  sb::Fingerprint g = a.fingerprint;
  g.values["sum_count"] = g.values["sum_count"].get<double>() + 1;
  failed = 0;
  for (const auto& ch : w.cross_check(a.fingerprint, g)) failed += ch.pass ? 0 : 1;
  EXPECT_EQ(failed, 1);
}

TEST(GroupbyCase, SampledValidationAboveSmall) {
  // Past the small preset no per-group data is kept: checksums and sampled groups only.
  const auto w = sb::groupby_workload();
  sb::Params p = w.preset("tiny");
  p.set("query", "by-key");
  p.set("days", "31");
  p.set("partition", "1000000");
  p.set("cardinality", "100000");
  const auto params = w.expand(p)[0];
  sb::CaseEnv env;
  env.threads = 2;
  const sb::test::CaseRun a = sb::test::run_single(params, env, 1);
  EXPECT_TRUE(a.fingerprint.data.empty());
  int sampled = 0;
  for (const auto& ch : a.checks) {
    EXPECT_TRUE(ch.pass) << ch.name << " " << ch.value;
    sampled += ch.name == "sampled_count" ? 1 : 0;
  }
  EXPECT_EQ(sampled, 1);
  EXPECT_EQ(a.result["groups"].get<double>(), 100000.0);
}
