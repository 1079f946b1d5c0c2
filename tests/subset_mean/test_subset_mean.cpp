// subset-mean (docs/specification.md §4.1) on one process: parameters and presets, the fused block
// kernel against the element-by-element reference, the scheduler's order-independent fold,
// cross-checks, and the tiny preset end to end through the CPU worker and the scheduler with
// validation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalebench/error.hpp"
#include "scalebench/workload.hpp"
#include "subset_mean/config.hpp"
#include "subset_mean/philox_simd.hpp"
#include "subset_mean/subset_mean.hpp"
#include "subset_mean/worker_cpu.hpp"

namespace {

namespace sm = sb::subset_mean;
namespace simd = sb::data::simd;

sb::Params params(const std::string& n, const std::string& chunk) {
  sb::Params p;
  p.set("n", n);
  p.set("chunk", chunk);
  return p;
}

/// The one-line message of the sb::UsageError that parse throws ("" when none).
std::string usage_error(const sb::Params& p) {
  try {
    (void)sm::parse(p);
  } catch (const sb::UsageError& e) {
    return e.what();
  }
  return "";
}

sb::CaseSpec spec_for(const sb::Params& p) {
  sb::CaseSpec spec;
  spec.workload = "subset-mean";
  spec.path = sb::ExecPath::multi_cpu;
  spec.params = p;
  spec.id = "subset-mean/multi-cpu/" + p.canonical();
  return spec;
}

TEST(SubsetMeanConfig, Presets) {
  const sb::Workload& w = sb::find_workload("subset-mean");
  const struct {
    const char* name;
    std::int64_t n;
    std::int64_t chunk;
  } expected[] = {{"tiny", 2000, 500},
                  {"small", 20000, 2000},
                  {"seed", 100000, 10000},
                  {"large", 500000, 10000}};
  for (const auto& e : expected) {
    const sb::Params p = w.preset(e.name);
    const sm::Config cfg = sm::parse(p);
    EXPECT_EQ(cfg.n, e.n);
    EXPECT_EQ(cfg.chunk, e.chunk);
    EXPECT_EQ(cfg.seed, 42u);
    EXPECT_EQ(cfg.mu, 10.0);
    EXPECT_EQ(cfg.sigma, 1.0);
    EXPECT_EQ(p.canonical(),
              "chunk=" + std::to_string(e.chunk) + ",n=" + std::to_string(e.n) + ",seed=42");
  }
  EXPECT_THROW(w.preset("huge"), sb::UsageError);
  try {
    (void)w.preset("huge");
  } catch (const sb::UsageError& e) {
    EXPECT_STREQ(e.what(), "subset-mean: unknown preset 'huge' (known: tiny, small, seed, large)");
  }
}

TEST(SubsetMeanConfig, BadValuesGiveOneClearLine) {
  EXPECT_EQ(usage_error(params("20001", "2000")),
            "subset-mean: n (20001) must be a multiple of chunk (2000)");
  EXPECT_EQ(usage_error(params("2000", "4000")),
            "subset-mean: n (2000) must be a multiple of chunk (4000)");
  EXPECT_EQ(usage_error(params("2001", "2001")), "subset-mean: chunk (2001) must be even");
  EXPECT_EQ(usage_error(params("1", "2")), "parameter 'n' must be at least 2 (got 1)");
  EXPECT_EQ(usage_error(params("4", "0")), "parameter 'chunk' must be at least 2 (got 0)");
  EXPECT_NE(usage_error(params("3037000500", "2")).find("n^2 must fit 64 bits"), std::string::npos);
  EXPECT_NE(usage_error(params("8192", "2")).find("tasks (at most 4194304)"), std::string::npos);
  sb::Params p = params("20", "10");
  p.set("sigma", "0");
  EXPECT_EQ(usage_error(p), "subset-mean: sigma (0) must be positive");
  p.set("sigma", "-1");
  EXPECT_FALSE(usage_error(p).empty());
  p.set("sigma", "1");
  p.set("seed", "-3");
  EXPECT_FALSE(usage_error(p).empty());
  sb::Params missing;
  missing.set("n", "20");
  EXPECT_FALSE(usage_error(missing).empty());
  // The workload's expand() is the same check.
  const sb::Workload& w = sb::find_workload("subset-mean");
  EXPECT_THROW(w.expand(params("20001", "2000")), sb::UsageError);
}

TEST(SubsetMeanConfig, SimdIsAnOptionalCapOnTheCpuGenerator) {
  const sb::Workload& w = sb::find_workload("subset-mean");
  for (const char* name : {"tiny", "small", "seed", "large"}) {
    EXPECT_FALSE(w.preset(name).has("simd")) << name;
    EXPECT_EQ(sm::parse(w.preset(name)).simd, simd::Isa::avx512) << name;  // no cap
  }
  sb::Params p = params("20", "10");
  for (const auto& [text, isa] :
       {std::pair{"scalar", simd::Isa::scalar}, std::pair{"avx2", simd::Isa::avx2},
        std::pair{"avx512", simd::Isa::avx512}}) {
    p.set("simd", text);
    EXPECT_EQ(usage_error(p), "") << text;
    EXPECT_EQ(sm::parse(p).simd, isa) << text;
    // The cap is an upper bound: the variant chosen never exceeds it and is one this CPU runs.
    const simd::Isa chosen = simd::best_isa(isa);
    EXPECT_LE(static_cast<int>(chosen), static_cast<int>(isa)) << text;
    EXPECT_TRUE(simd::available(chosen)) << text;
  }
  EXPECT_EQ(simd::best_isa(simd::Isa::scalar), simd::Isa::scalar);
  EXPECT_EQ(simd::best_kernels(simd::Isa::scalar).isa, simd::Isa::scalar);
  for (const char* bad : {"sse2", "AVX2", ""}) {
    p.set("simd", bad);
    EXPECT_EQ(usage_error(p),
              "subset-mean: simd must be scalar, avx2 or avx512 (got '" + std::string(bad) + "')");
    EXPECT_THROW(w.expand(p), sb::UsageError);
  }
  bool listed = false;
  for (const auto& [key, help] : w.keys) listed |= key == "simd" && !help.empty();
  EXPECT_TRUE(listed);
}

TEST(SubsetMeanConfig, GoodValuesAndDefaults) {
  EXPECT_EQ(usage_error(params("2", "2")), "");
  EXPECT_EQ(usage_error(params("3037000498", "3037000498")), "");  // largest n: n^2 < 2^63
  EXPECT_NE(usage_error(params("3037000500", "3037000500")), "");
  sb::Params p = params("1e3", "10^2");
  const sm::Config cfg = sm::parse(p);
  EXPECT_EQ(cfg.n, 1000);
  EXPECT_EQ(cfg.chunk, 100);
  EXPECT_EQ(cfg.seed, 42u);
  EXPECT_EQ(cfg.tasks, 100);
  EXPECT_EQ(cfg.count(), 250000);
  EXPECT_EQ(cfg.draws(), 1000000);
  p.set("seed", "7");
  p.set("mu", "-3.5");
  p.set("sigma", "2");
  const sm::Config q = sm::parse(p);
  EXPECT_EQ(q.seed, 7u);
  EXPECT_EQ(q.mu, -3.5);
  EXPECT_EQ(q.sigma, 2.0);
  const sb::Workload& w = sb::find_workload("subset-mean");
  const std::vector<sb::Params> cases = w.expand(p);
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(cases[0], p);
}

TEST(SubsetMeanConfig, TaskLayout) {
  const sm::Config cfg = sm::parse(params("12", "4"));
  EXPECT_EQ(cfg.blocks_per_row, 3);
  EXPECT_EQ(cfg.tasks, 9);
  EXPECT_EQ(cfg.row0(5), 4);
  EXPECT_EQ(cfg.col0(5), 8);
  EXPECT_EQ(cfg.row0(8), 8);
  EXPECT_EQ(cfg.col0(8), 8);
  EXPECT_EQ(cfg.philox_block(5, 8), (5u * 12u + 8u) / 2u);
}

TEST(Workload, RegistryEntry) {
  const sb::Workload& w = sb::find_workload("subset-mean");
  EXPECT_EQ(w.name, "subset-mean");
  std::set<std::string> keys;
  for (const auto& [k, help] : w.keys) {
    keys.insert(k);
    EXPECT_FALSE(help.empty());
  }
  EXPECT_EQ(keys, (std::set<std::string>{"n", "chunk", "seed", "mu", "sigma", "simd"}));
  ASSERT_TRUE(w.make_scheduler && w.make_worker && w.cross_check && w.expand && w.preset);
}

// ---- The fused block kernel ----------------------------------------------------------------

TEST(BlockSums, FastKernelsMatchTheReferenceOnSmallBlocks) {
  for (std::int64_t chunk : {2, 4, 6, 8, 10, 16, 18, 32, 64}) {
    sm::Config cfg = sm::parse(params(std::to_string(3 * chunk), std::to_string(chunk)));
    cfg.seed = 1000 + static_cast<std::uint64_t>(chunk);
    std::vector<double> scratch(static_cast<std::size_t>(2 * chunk));
    for (std::int64_t task : {1, 3, 4, 5, 7, 8}) {
      const sm::BlockSums ref = sm::reference_block_sums(cfg, task);
      const double tol = 1e-14 * static_cast<double>(chunk * chunk);
      for (simd::Isa isa : simd::available_isas()) {
        for (simd::Math math : {simd::Math::own, simd::Math::sleef}) {
          const auto& k = simd::kernels(isa, math);
          const sm::BlockSums one = sm::block_sums(cfg, task, k, 1, scratch.data());
          EXPECT_NEAR(one.subset, ref.subset, tol) << "chunk " << chunk << " task " << task;
          EXPECT_NEAR(one.full, ref.full, tol) << "chunk " << chunk << " task " << task;
          for (int threads : {2, 3}) {  // the same bits whatever the thread count
            const sm::BlockSums many = sm::block_sums(cfg, task, k, threads, scratch.data());
            EXPECT_EQ(many.subset, one.subset);
            EXPECT_EQ(many.full, one.full);
          }
        }
      }
    }
  }
}

TEST(BlockSums, ScalarSleefVariantIsTheReferenceUpToSummationOrder) {
  const sm::Config cfg = sm::parse(params("48", "16"));
  std::vector<double> scratch(32);
  const sm::BlockSums ref = sm::reference_block_sums(cfg, 4);
  const sm::BlockSums s = sm::block_sums(
      cfg, 4, simd::kernels(simd::Isa::scalar, simd::Math::sleef), 1, scratch.data());
  EXPECT_NEAR(s.subset, ref.subset, 1e-13);
  EXPECT_NEAR(s.full, ref.full, 1e-13);
}

TEST(BlockSums, BlocksBeyondTwoTo32) {
  // n = 200000: element indices reach 4e10, Philox blocks cross 2^32 (the counter's hi word).
  sm::Config cfg;
  cfg.n = 200000;
  cfg.chunk = 8;
  cfg.blocks_per_row = cfg.n / cfg.chunk;
  cfg.tasks = cfg.blocks_per_row * cfg.blocks_per_row;
  std::vector<double> scratch(16);
  for (std::int64_t task : {cfg.tasks - 1, cfg.tasks / 2 + 3}) {
    ASSERT_GT(cfg.philox_block(cfg.row0(task), cfg.col0(task)), 0xFFFFFFFFull);
    const sm::BlockSums ref = sm::reference_block_sums(cfg, task);
    for (simd::Isa isa : simd::available_isas()) {
      const sm::BlockSums s = sm::block_sums(cfg, task, simd::kernels(isa), 2, scratch.data());
      EXPECT_NEAR(s.subset, ref.subset, 1e-12);
      EXPECT_NEAR(s.full, ref.full, 1e-12);
    }
  }
}

// ---- The scheduler ---------------------------------------------------------------------------

std::vector<sm::BlockSums> all_partials(const sm::Config& cfg) {
  std::vector<double> scratch(static_cast<std::size_t>(2 * cfg.chunk));
  std::vector<sm::BlockSums> parts;
  for (std::int64_t t = 0; t < cfg.tasks; ++t)
    parts.push_back(sm::block_sums(cfg, t, simd::best_kernels(), 1, scratch.data()));
  return parts;
}

sb::TaskOutcome outcome(std::int64_t task, const sm::BlockSums& s) {
  sb::TaskOutcome o;
  o.task = task;
  o.partial = {s.subset, s.full};
  return o;
}

TEST(Scheduler, FoldDoesNotDependOnArrivalOrder) {
  const sb::Params p = params("96", "12");
  const sm::Config cfg = sm::parse(p);
  const auto parts = all_partials(cfg);
  auto sched = sm::make_scheduler(spec_for(p));
  ASSERT_EQ(sched->num_tasks(), 64);
  std::vector<std::int64_t> order(64);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937 rng(1);
  nlohmann::json first;
  for (int trial = 0; trial < 6; ++trial) {
    if (trial == 1) std::reverse(order.begin(), order.end());
    if (trial > 1) std::shuffle(order.begin(), order.end(), rng);
    sched->begin_repeat();
    for (std::int64_t t : order) sched->on_task(outcome(t, parts[static_cast<std::size_t>(t)]));
    if (trial == 5) sched->on_task(outcome(order[0], parts[static_cast<std::size_t>(order[0])]));
    const nlohmann::json j = sched->end_repeat();
    if (trial == 0) {
      first = j;
      continue;
    }
    // Bit-identical, whatever the order (and a duplicate arrival changes nothing).
    EXPECT_EQ(j.dump(), first.dump());
  }
  EXPECT_EQ(first["count"].get<std::int64_t>(), 48 * 48);
  EXPECT_EQ(first["draws"].get<std::int64_t>(), 96 * 96);
  const double s_sub = first["subset_sum_z"].get<double>();
  const double s_all = first["full_sum_z"].get<double>();
  EXPECT_DOUBLE_EQ(first["answer"].get<double>(), 11.0 + s_sub / (48.0 * 48.0));
  EXPECT_DOUBLE_EQ(first["full_mean"].get<double>(), 10.0 + s_all / (96.0 * 96.0));
  double sub = 0;
  double all = 0;
  for (const auto& s : parts) {
    sub += s.subset;
    all += s.full;
  }
  EXPECT_NEAR(s_sub, sub, 1e-12);
  EXPECT_NEAR(s_all, all, 1e-12);
  const auto checks = sched->validate({{}});
  for (const auto& c : checks) EXPECT_TRUE(c.pass) << c.name << ": " << c.detail;
}

TEST(Scheduler, MuAndSigmaScaleTheResult) {
  sb::Params p = params("40", "10");
  p.set("mu", "-2");
  p.set("sigma", "3");
  const sm::Config cfg = sm::parse(p);
  const auto parts = all_partials(cfg);
  auto sched = sm::make_scheduler(spec_for(p));
  sched->begin_repeat();
  for (std::int64_t t = 0; t < cfg.tasks; ++t)
    sched->on_task(outcome(t, parts[static_cast<std::size_t>(t)]));
  const nlohmann::json j = sched->end_repeat();
  EXPECT_DOUBLE_EQ(j["answer"].get<double>(),
                   -1.0 + 3.0 * (j["subset_sum_z"].get<double>() / 400.0));
  EXPECT_DOUBLE_EQ(j["full_mean"].get<double>(),
                   -2.0 + 3.0 * (j["full_sum_z"].get<double>() / 1600.0));
}

TEST(Scheduler, MissingTaskFailsValidation) {
  const sb::Params p = params("40", "10");
  const sm::Config cfg = sm::parse(p);
  const auto parts = all_partials(cfg);
  auto sched = sm::make_scheduler(spec_for(p));
  sched->begin_repeat();
  for (std::int64_t t = 1; t < cfg.tasks; ++t)
    sched->on_task(outcome(t, parts[static_cast<std::size_t>(t)]));
  (void)sched->end_repeat();
  bool found = false;
  for (const auto& c : sched->validate({{}})) {
    if (c.name != "tasks") continue;
    found = true;
    EXPECT_FALSE(c.pass);
    EXPECT_EQ(c.value, 15.0);
    EXPECT_EQ(c.limit, 16.0);
  }
  EXPECT_TRUE(found);
  EXPECT_THROW(sched->on_task(outcome(16, parts[0])), sb::Error);
  sb::TaskOutcome bad = outcome(3, parts[3]);
  bad.partial.push_back(0);
  EXPECT_THROW(sched->on_task(bad), sb::Error);
}

TEST(Scheduler, WorkAndFingerprint) {
  const sb::Params p = params("40", "10");
  auto sched = sm::make_scheduler(spec_for(p));
  const sb::Work w = sched->work();
  EXPECT_EQ(w.units, 1600.0);
  EXPECT_EQ(w.unit, "draws");
  EXPECT_EQ(w.bytes, 8.0 * 1600);
  EXPECT_EQ(w.flops, 0.0);
  EXPECT_EQ(w.bound, sb::Work::Bound::bytes);
  const auto parts = all_partials(sm::parse(p));
  sched->begin_repeat();
  for (std::int64_t t = 0; t < 16; ++t)
    sched->on_task(outcome(t, parts[static_cast<std::size_t>(t)]));
  const nlohmann::json j = sched->end_repeat();
  const sb::Fingerprint fp = sched->fingerprint();
  EXPECT_EQ(fp.values["answer"].get<double>(), j["answer"].get<double>());
  EXPECT_EQ(fp.values["full_mean"].get<double>(), j["full_mean"].get<double>());
}

TEST(CrossCheck, RelativeDifferenceWithin1e12) {
  const sb::Workload& w = sb::find_workload("subset-mean");
  sb::Fingerprint ref;
  ref.values = {{"answer", 11.000123}, {"full_mean", 9.99998}};
  sb::Fingerprint same = ref;
  for (const auto& c : w.cross_check(ref, same)) {
    EXPECT_TRUE(c.pass) << c.name;
    EXPECT_EQ(c.value, 0.0);
  }
  sb::Fingerprint close = ref;
  close.values["answer"] = 11.000123 * (1 + 5e-13);
  sb::Fingerprint far = ref;
  far.values["full_mean"] = 9.99998 * (1 + 3e-12);
  const auto cc = w.cross_check(ref, close);
  ASSERT_EQ(cc.size(), 2u);
  EXPECT_TRUE(cc[0].pass && cc[1].pass);
  const auto cf = w.cross_check(ref, far);
  EXPECT_TRUE(cf[0].pass);
  EXPECT_FALSE(cf[1].pass);
  sb::Fingerprint empty;
  for (const auto& c : w.cross_check(ref, empty)) EXPECT_FALSE(c.pass);
}

// ---- End to end on one process ------------------------------------------------------------

TEST(Validation, TinyPresetThroughTheCpuWorker) {
  const sb::Workload& w = sb::find_workload("subset-mean");
  const sb::Params p = w.preset("tiny");
  sb::CaseSpec spec = spec_for(p);
  spec.repeats = 2;
  spec.warmup = 1;
  sb::CaseEnv env;
  env.device = sb::Device::cpu;
  env.threads = 2;
  auto worker = w.make_worker(spec, env);
  auto sched = w.make_scheduler(spec);
  ASSERT_EQ(sched->num_tasks(), 16);
  nlohmann::json last;
  for (int repeat = 0; repeat < spec.warmup + spec.repeats; ++repeat) {
    sched->begin_repeat();
    worker->begin_repeat();
    for (std::int64_t t = 0; t < sched->num_tasks(); ++t) {
      worker->submit(t);
      EXPECT_EQ(worker->in_flight(), 1u);
      const auto o = worker->poll(true);
      ASSERT_TRUE(o.has_value());
      EXPECT_EQ(o->task, t);
      EXPECT_EQ(o->bytes, 8 * 500 * 500);
      EXPECT_EQ(o->phase, sb::Phase::compute);
      EXPECT_LE(o->start, o->end);
      EXPECT_GE(o->start, 0.0);
      sched->on_task(*o);
    }
    EXPECT_FALSE(worker->poll(false).has_value());
    sched->on_worker_done(0, worker->finish_repeat());
    last = sched->end_repeat();
    EXPECT_GT(worker->phase_times().compute, 0.0);
  }
  EXPECT_EQ(last["count"].get<std::int64_t>(), 1000 * 1000);
  EXPECT_EQ(last["draws"].get<std::int64_t>(), 2000 * 2000);
  const auto checks = sched->validate({worker->validate()});
  std::set<std::string> names;
  for (const auto& c : checks) {
    names.insert(c.name);
    EXPECT_TRUE(c.pass) << c.name << ": " << c.value << " vs " << c.limit << " (" << c.detail
                        << ")";
  }
  EXPECT_EQ(names, (std::set<std::string>{"answer", "full_mean", "tasks", "repeats_agree"}));
  // The same numbers from philox.hpp, element by element (4e6 reference normals).
  const sm::Config cfg = sm::parse(p);
  double s_sub = 0;
  double s_all = 0;
  for (std::int64_t t = 0; t < cfg.tasks; ++t) {
    const sm::BlockSums r = sm::reference_block_sums(cfg, t);
    s_sub += r.subset;
    s_all += r.full;
  }
  const double answer = 11.0 + s_sub / 1e6;
  const double full_mean = 10.0 + s_all / 4e6;
  EXPECT_NEAR(last["answer"].get<double>(), answer, 1e-12 * answer);
  EXPECT_NEAR(last["full_mean"].get<double>(), full_mean, 1e-12 * full_mean);
  EXPECT_NEAR(last["subset_sum_z"].get<double>(), s_sub, 1e-8);
  EXPECT_NEAR(last["full_sum_z"].get<double>(), s_all, 1e-8);
}

TEST(Worker, RejectsTasksOutOfRange) {
  const sb::Workload& w = sb::find_workload("subset-mean");
  sb::CaseEnv env;
  auto worker = w.make_worker(spec_for(params("20", "10")), env);
  worker->begin_repeat();
  EXPECT_THROW(worker->submit(4), sb::Error);
  EXPECT_THROW(worker->submit(-1), sb::Error);
  EXPECT_EQ(worker->in_flight(), 0u);
}

#if !SCALEBENCH_HAVE_CUDA
TEST(Worker, GpuWithoutCudaIsAnEnvironmentError) {
  const sb::Workload& w = sb::find_workload("subset-mean");
  sb::CaseEnv env;
  env.device = sb::Device::gpu;
  EXPECT_THROW(w.make_worker(spec_for(params("20", "10")), env), sb::EnvironmentError);
}
#endif

}  // namespace
