// svd workload, CPU path: TSQR against LAPACK dgesvd, residual and orthogonality, the badly
// conditioned case, deterministic data, tree plans, parameter checks.
#include <gtest/gtest.h>
#include <lapacke.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <numeric>
#include <set>
#include <thread>

#include "scalebench/error.hpp"
#include "scalebench/philox.hpp"
#include "svd/config.hpp"
#include "svd/routines.hpp"
#include "svd/scheduler.hpp"
#include "svd/sketch.hpp"
#include "svd/svd.hpp"
#include "svd/svd_data.hpp"
#include "svd/tree.hpp"
#include "svd/tsqr_cpu.hpp"
#include "svd_driver.hpp"

namespace sb::svd {
namespace {

using test::drive;
using test::make_spec;

CaseEnv cpu_env(int threads) {
  test::ensure_mpi();
  CaseEnv env;
  env.device = Device::cpu;
  env.threads = threads;
  env.comm = MPI_COMM_SELF;
  return env;
}

std::vector<std::vector<std::int64_t>> all_tasks(std::int64_t blocks, int repeats) {
  std::vector<std::int64_t> t(static_cast<std::size_t>(blocks));
  std::iota(t.begin(), t.end(), 0);
  return std::vector<std::vector<std::int64_t>>(static_cast<std::size_t>(repeats), t);
}

double check_value(const std::vector<Check>& checks, const std::string& name) {
  for (const auto& c : checks)
    if (c.name == name) return c.value;
  ADD_FAILURE() << "no check " << name;
  return INFINITY;
}

void expect_all_pass(const std::vector<Check>& checks) {
  ASSERT_FALSE(checks.empty());
  for (const auto& c : checks)
    EXPECT_TRUE(c.pass) << c.name << " = " << c.value << " (limit " << c.limit << "): " << c.detail;
}

TEST(SvdConfig, PresetsMatchTheSpec) {
  const Config tiny = parse(preset("tiny"));
  EXPECT_EQ(tiny.m, 2000);
  EXPECT_EQ(tiny.n, 50);
  EXPECT_EQ(tiny.chunk, 500);
  const Config small = parse(preset("small"));
  EXPECT_EQ(small.m, 20000);
  EXPECT_EQ(small.n, 500);
  EXPECT_EQ(small.chunk, 2000);
  const Config seed = parse(preset("seed"));
  EXPECT_EQ(seed.m, 10000);
  EXPECT_EQ(seed.n, 1000);
  EXPECT_EQ(seed.chunk, 1000);
  EXPECT_EQ(seed.seed, 42u);
  const Config large = parse(preset("large"));
  EXPECT_EQ(large.m, 2000000);
  EXPECT_EQ(large.chunk, 100000);
  EXPECT_EQ(large.blocks(), 20);
  EXPECT_DOUBLE_EQ(seed.flops(), 6.0 * 10000 * 1000 * 1000);
  EXPECT_THROW((void)preset("huge"), UsageError);
}

TEST(SvdConfig, ExpandRejectsBadSizesWithOneLine) {
  const Workload w = svd_workload();
  auto bad = [&](const char* key, const char* value, const char* words) {
    Params p = preset("tiny");
    p.set(key, value);
    try {
      (void)w.expand(p);
      ADD_FAILURE() << key << "=" << value << " was accepted";
    } catch (const UsageError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(words), std::string::npos) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
  };
  bad("m", "2100", "multiple of chunk");
  bad("chunk", "40", "must be >= n");
  bad("condition", "0.5", "condition");
  bad("n", "0", "'n'");
  bad("m", "abc", "'m'");
  bad("cpu_svd", "lapack", "cpu_svd");
  bad("gpu_svd", "magma", "gpu_svd");
  bad("gpu_local", "cholesky", "gpu_local");
  bad("cpu_local", "cholesky", "cpu_local");
  EXPECT_EQ(w.expand(preset("tiny")).size(), 1u);
  EXPECT_EQ(w.name, "svd");
}

TEST(SvdConfig, GpuLocalModes) {
  // auto: the sketch for tall matrices (every preset), stack for short blocks otherwise.
  for (const char* name : {"tiny", "small", "seed", "large"}) {
    const Config c = parse(preset(name));
    EXPECT_TRUE(c.gpu_sketch()) << name;
    EXPECT_TRUE(c.gpu_stack()) << name;
  }
  Params p = preset("tiny");
  p.set("m", "300");
  p.set("chunk", "100");  // m = 6n < 8n and chunk = 2n < 4n: stack
  Config c = parse(p);
  EXPECT_FALSE(c.gpu_sketch());
  EXPECT_TRUE(c.gpu_stack());
  p.set("m", "500");
  p.set("chunk", "250");  // m = 10n >= 8n: the sketch
  c = parse(p);
  EXPECT_TRUE(c.gpu_sketch());
  p.set("gpu_local", "blocks");
  c = parse(p);
  EXPECT_FALSE(c.gpu_sketch());
  EXPECT_FALSE(c.gpu_stack());
  p.set("gpu_local", "sketch");
  EXPECT_TRUE(parse(p).gpu_sketch());
  Params wide = preset("tiny");
  wide.set("n", "9000");
  wide.set("chunk", "9000");
  wide.set("m", "90000");
  wide.set("gpu_local", "sketch");
  EXPECT_THROW((void)parse(wide), UsageError);
  wide.set("gpu_local", "auto");
  EXPECT_FALSE(parse(wide).gpu_sketch());
}

TEST(SvdConfig, CpuLocalModes) {
  // auto: the sketch for tall matrices (every preset), Householder otherwise.
  for (const char* name : {"tiny", "small", "seed", "large"})
    EXPECT_TRUE(parse(preset(name)).cpu_sketch()) << name;
  Params p = preset("tiny");
  p.set("m", "300");
  p.set("chunk", "100");  // m = 6n < 8n
  EXPECT_FALSE(parse(p).cpu_sketch());
  p.set("cpu_local", "sketch");
  EXPECT_TRUE(parse(p).cpu_sketch());
  p.set("m", "500");  // m = 10n
  p.set("cpu_local", "auto");
  EXPECT_TRUE(parse(p).cpu_sketch());
  p.set("cpu_local", "householder");
  EXPECT_FALSE(parse(p).cpu_sketch());
  p.set("cpu_local", "Sketch");
  try {
    (void)parse(p);
    ADD_FAILURE() << "cpu_local=Sketch was accepted";
  } catch (const UsageError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("cpu_local must be auto, householder or sketch"), std::string::npos) << msg;
  }
}

TEST(SvdConfig, SketchCheckBound) {
  Params p = preset("tiny");
  EXPECT_DOUBLE_EQ(parse(p).sketch_diag_ratio, 30.0);
  p.set("sketch_check", "1");  // forces the Householder fallback (tests)
  EXPECT_DOUBLE_EQ(parse(p).sketch_diag_ratio, 1.0);
  p.set("sketch_check", "100");
  EXPECT_DOUBLE_EQ(parse(p).sketch_diag_ratio, 100.0);
  for (const char* bad : {"0.5", "0", "-3", "nan", "inf"}) {
    p.set("sketch_check", bad);
    try {
      (void)parse(p);
      ADD_FAILURE() << "sketch_check=" << bad << " was accepted";
    } catch (const UsageError& e) {
      // nan and inf are refused by the parameter parser itself, the rest by svd's check.
      EXPECT_NE(std::string(e.what()).find("sketch_check"), std::string::npos) << e.what();
    }
  }
}

TEST(SvdConfig, SliceRowsIsAnOptionalTuningKey) {
  for (const char* name : {"tiny", "small", "seed", "large"}) {
    EXPECT_FALSE(preset(name).has("slice_rows")) << name;
    EXPECT_EQ(parse(preset(name)).slice_rows, 32) << name;
  }
  Params p = preset("tiny");
  p.set("slice_rows", "1");
  EXPECT_EQ(parse(p).slice_rows, 1);
  p.set("slice_rows", "10^6");
  EXPECT_EQ(parse(p).slice_rows, 1000000);
  for (const char* bad : {"0", "-2", "1000001", "x", "1.5"}) {
    p.set("slice_rows", bad);
    try {
      (void)parse(p);
      ADD_FAILURE() << "slice_rows=" << bad << " was accepted";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()),
                "svd: slice_rows must be an integer in [1, 10^6] (got '" + std::string(bad) + "')");
    }
  }
  bool listed = false;
  for (const auto& [key, help] : keys()) listed |= key == "slice_rows" && !help.empty();
  EXPECT_TRUE(listed);
}

TEST(SvdSketch, EveryRowHitsEachLayerOnceWithASign) {
  const std::int64_t n = 1000, s = sketch_height(n), layer = s / kSketchLayers;
  EXPECT_EQ(s, 2000);
  EXPECT_EQ(sketch_height(37) % kSketchLayers, 0);
  std::vector<int> count(static_cast<std::size_t>(s), 0);
  int negative = 0;
  const std::uint64_t key = sketch_key(42);
  for (std::uint64_t row = 0; row < 100000; ++row)
    for (int t = 0; t < kSketchLayers; ++t) {
      const std::uint32_t h = sketch_hit(key, row, t, layer);
      const std::int64_t target = h & 0x7fffffffu;
      ASSERT_GE(target, t * layer);
      ASSERT_LT(target, (t + 1) * layer);
      ++count[static_cast<std::size_t>(target)];
      negative += static_cast<int>(h >> 31);
    }
  // 800000 hits over 2000 rows (400 each on average) and about half of them negative.
  const auto [lo, hi] = std::minmax_element(count.begin(), count.end());
  EXPECT_GT(*lo, 300);
  EXPECT_LT(*hi, 500);
  EXPECT_NEAR(negative, 400000, 3000);
  EXPECT_NE(sketch_hit(key, 7, 0, layer), sketch_hit(sketch_key(43), 7, 0, layer));
}

TEST(SvdSketch, FixedPointSumsAreExactAndOrderFree) {
  // The sketch of rows [0, 600) equals the sketch of [0, 250) plus that of [250, 600), bit for
  // bit, and the fixed point rounds a / scale to 2^-40.
  Config c;
  c.m = 600;
  c.n = 24;
  c.chunk = 600;
  c.condition = 1e8;
  const auto scales = column_scales(c);
  std::vector<double> inv(scales.size());
  for (std::size_t j = 0; j < inv.size(); ++j) inv[j] = 1.0 / scales[j];
  std::vector<double> a(static_cast<std::size_t>(c.m * c.n));
  generate_block(c, scales.data(), 0, a.data());
  const std::int64_t s = sketch_height(c.n);
  const auto cells = static_cast<std::size_t>(s * c.n);
  std::vector<std::int64_t> whole(cells, 0), parts(cells, 0);
  const std::uint64_t key = sketch_key(c.seed);
  sketch_rows_cpu(a.data(), c.m, 0, c.m, c.n, key, inv.data(), whole.data());
  sketch_rows_cpu(a.data() + 250, c.m, 250, 350, c.n, key, inv.data(), parts.data());
  sketch_rows_cpu(a.data(), c.m, 0, 250, c.n, key, inv.data(), parts.data());
  EXPECT_EQ(whole, parts);
  EXPECT_EQ(sketch_fixed(0.5, 1.0), std::int64_t{1} << 39);
  EXPECT_EQ(sketch_fixed(-0.25, 2.0), -(std::int64_t{1} << 39));
  // Column j of the sketch sums to (sum of signs) * column: check one column against doubles.
  const std::int64_t layer = s / kSketchLayers;
  for (const std::int64_t j : {std::int64_t{0}, c.n - 1}) {
    std::vector<double> ref(static_cast<std::size_t>(s), 0.0);
    for (std::int64_t r = 0; r < c.m; ++r)
      for (int t = 0; t < kSketchLayers; ++t) {
        const std::uint32_t h = sketch_hit(key, static_cast<std::uint64_t>(r), t, layer);
        const double v =
            a[static_cast<std::size_t>(r + j * c.m)] * inv[static_cast<std::size_t>(j)];
        ref[h & 0x7fffffffu] += (h >> 31) != 0 ? -v : v;
      }
    for (std::int64_t i = 0; i < s; ++i)
      EXPECT_NEAR(static_cast<double>(whole[static_cast<std::size_t>(i + j * s)]) * 0x1p-40,
                  ref[static_cast<std::size_t>(i)], 1e-9);
  }
}

TEST(SvdData, BlocksEqualTheUniformStreamBits) {
  for (std::int64_t n : {6, 7}) {  // even n: one Philox call per column pair; odd: straddling
    Config c;
    c.m = 12;
    c.n = n;
    c.chunk = 4;
    c.seed = 987654321;
    const auto scales = column_scales(c);
    std::vector<double> block(static_cast<std::size_t>(c.chunk * n));
    generate_block(c, scales.data(), 2, block.data());
    for (std::int64_t r = 0; r < c.chunk; ++r)
      for (std::int64_t j = 0; j < n; ++j) {
        const double want = data::uniform(c.seed, static_cast<std::uint64_t>((8 + r) * n + j));
        const double got = block[static_cast<std::size_t>(r + j * c.chunk)];
        EXPECT_EQ(std::memcmp(&want, &got, sizeof want), 0) << "n=" << n << " r=" << r;
      }
  }
}

TEST(SvdData, ConditionScalesColumnsGeometrically) {
  Config c;
  c.m = 4;
  c.n = 5;
  c.chunk = 4;
  c.condition = 1e8;
  const auto s = column_scales(c);
  EXPECT_EQ(s.front(), 1.0);
  EXPECT_NEAR(s.back(), 1e-8, 1e-22);
  EXPECT_NEAR(s[2], 1e-4, 1e-18);
  std::vector<double> a(20);
  generate_block(c, s.data(), 0, a.data());
  EXPECT_EQ(a[3 + 4 * 4], data::uniform(c.seed, 3 * 5 + 4) * s[4]);
}

TEST(SvdTree, EveryRankSendsOnceAndPartnersMatch) {
  for (int size = 1; size <= 9; ++size) {
    std::multiset<std::pair<int, int>> sends, receives;  // (from, to)
    for (int r = 0; r < size; ++r) {
      const auto steps = tree_steps(r, size);
      int sent = 0;
      for (const auto& s : steps) {
        if (s.receive) {
          receives.insert({s.partner, r});
        } else {
          sends.insert({r, s.partner});
          ++sent;
        }
      }
      EXPECT_EQ(sent, r == 0 ? 0 : 1) << "rank " << r << " of " << size;
      if (r != 0) {
        EXPECT_FALSE(steps.back().receive);
      }
    }
    EXPECT_EQ(sends, receives) << "size " << size;
  }
  for (int k = 0; k <= 9; ++k) {
    std::set<int> absorbed;
    for (const auto& level : local_levels(k)) {
      std::set<int> touched;
      for (const auto& m : level) {
        EXPECT_TRUE(touched.insert(m.a).second);
        EXPECT_TRUE(touched.insert(m.b).second);
        EXPECT_TRUE(absorbed.insert(m.b).second);
        EXPECT_FALSE(absorbed.count(m.a));
      }
    }
    EXPECT_EQ(static_cast<int>(absorbed.size()), std::max(0, k - 1));
    EXPECT_FALSE(absorbed.count(0));
  }
}

/// One repeat of the engine on one worker (blocks submitted in reverse: order must not matter).
void run_engine(CpuTsqr& engine, const Config& cfg) {
  engine.begin_repeat();
  std::atomic<int> done{0};
  for (std::int64_t b = cfg.blocks(); b-- > 0;) engine.submit(b, [&](double, double) { ++done; });
  while (done.load() < cfg.blocks()) std::this_thread::yield();
  PhaseTimes times;
  engine.finish(times);
  EXPECT_TRUE(engine.root());
}

TEST(SvdCpuEngine, TracePrintsTheStepsOfEveryFinishOnlyWhenAsked) {
  test::ensure_mpi();
  const Config cfg = parse(preset("tiny"));
  for (const bool trace : {false, true}) {
    CpuTsqr engine(cfg, 2, MPI_COMM_SELF, cfg.blocks(), trace);
    testing::internal::CaptureStderr();
    run_engine(engine, cfg);
    run_engine(engine, cfg);
    const std::string err = testing::internal::GetCapturedStderr();
    if (!trace) {
      EXPECT_EQ(err.find("svd trace"), std::string::npos) << err;
      continue;
    }
    // One line per finish(), named after the worker and its first QR level.
    const std::string head = "svd trace rank 0 (" + std::string(engine.local_routine()) + "):";
    const std::size_t first = err.find(head);
    ASSERT_NE(first, std::string::npos) << err;
    EXPECT_NE(err.find(head, first + 1), std::string::npos) << err;
    EXPECT_NE(err.find(" ms"), std::string::npos) << err;
  }
}

struct Routines {
  std::string svd;    ///< CpuTsqr::svd_routine()
  std::string local;  ///< CpuTsqr::local_routine()
};

/// Runs the engine directly on one worker and checks S, U, V against LAPACK.
Routines check_engine_against_lapack(const Config& cfg, int threads) {
  test::ensure_mpi();
  CpuTsqr engine(cfg, threads, MPI_COMM_SELF, cfg.blocks());
  run_engine(engine, cfg);
  if (engine.sigma().size() != static_cast<std::size_t>(cfg.n)) {
    ADD_FAILURE() << "no singular values";
    return {};
  }

  // Whole matrix, LAPACK dgesvd with U.
  const auto scales = column_scales(cfg);
  std::vector<double> a(static_cast<std::size_t>(cfg.m * cfg.n));
  generate_rows(cfg, scales.data(), 0, cfg.m, a.data(), cfg.m);
  const std::vector<double> a0 = a;
  std::vector<double> s(static_cast<std::size_t>(cfg.n)), u(a.size()),
      vt(static_cast<std::size_t>(cfg.n * cfg.n)), superb(static_cast<std::size_t>(cfg.n));
  const auto m = static_cast<lapack_int>(cfg.m), n = static_cast<lapack_int>(cfg.n);
  EXPECT_EQ(LAPACKE_dgesvd(LAPACK_COL_MAJOR, 'S', 'S', m, n, a.data(), m, s.data(), u.data(), m,
                           vt.data(), n, superb.data()),
            0);
  for (std::int64_t i = 0; i < cfg.n; ++i)
    EXPECT_NEAR(engine.sigma()[static_cast<std::size_t>(i)], s[static_cast<std::size_t>(i)],
                1e-12 * s[0])
        << "sigma " << i;
  // U column j agrees with LAPACK's up to sign (the singular values of A are distinct).
  double worst = 0;
  for (std::int64_t j = 0; j < cfg.n; ++j) {
    double dot = 0;
    for (int bi = 0; bi < engine.blocks_owned(); ++bi) {
      const double* ub = engine.u(bi) + j * cfg.chunk;
      const std::int64_t row0 = engine.block_of(bi) * cfg.chunk;
      for (std::int64_t r = 0; r < cfg.chunk; ++r)
        dot += ub[r] * u[static_cast<std::size_t>(row0 + r + j * cfg.m)];
    }
    const double sign = dot < 0 ? -1.0 : 1.0;
    for (int bi = 0; bi < engine.blocks_owned(); ++bi) {
      const double* ub = engine.u(bi) + j * cfg.chunk;
      const std::int64_t row0 = engine.block_of(bi) * cfg.chunk;
      for (std::int64_t r = 0; r < cfg.chunk; ++r)
        worst = std::max(
            worst, std::fabs(ub[r] - sign * u[static_cast<std::size_t>(row0 + r + j * cfg.m)]));
    }
  }
  EXPECT_LT(worst, 1e-9);
  const auto v = engine.validate();
  if (v.size() != 3u) {
    ADD_FAILURE() << "validate() returned " << v.size() << " values";
    return {};
  }
  EXPECT_LT(std::sqrt(v[0] / v[1]), 1e-13);
  EXPECT_LT(v[2], 1e-12);
  double a_sq = 0;
  for (double x : a0) a_sq += x * x;
  EXPECT_NEAR(v[1], a_sq, 1e-12 * a_sq);
  return {engine.svd_routine(), engine.local_routine()};
}

TEST(SvdCpu, TinyMatchesLapackDgesvd) {
  // Uniform tall data is well conditioned: auto takes the Gram eigen-decomposition of R^T R.
  const Routines r = check_engine_against_lapack(parse(preset("tiny")), 1);
  EXPECT_EQ(r.svd, "gram");
  EXPECT_EQ(r.local, "sketch");  // auto: m >= 8n
}

TEST(SvdCpu, DgesddOfRMatchesLapackToo) {
  Config c = parse(preset("tiny"));
  c.cpu_svd = "gesdd";
  EXPECT_EQ(check_engine_against_lapack(c, 2).svd, "gesdd");
  c.cpu_svd = "auto";
  c.condition = 1e4;  // cond(R) > 100: auto falls back to dgesdd
  EXPECT_EQ(check_engine_against_lapack(c, 1).svd, "gesdd");
}

TEST(SvdCpu, OddBlockCountsAndTwoThreadsMatchLapack) {
  for (const char* local : {"householder", "sketch"}) {
    SCOPED_TRACE(local);
    Config c;
    c.cpu_local = local;
    c.m = 3500;  // 7 blocks: an odd tree
    c.n = 40;
    c.chunk = 500;
    EXPECT_EQ(check_engine_against_lapack(c, 2).local, local);
    c.m = 240;  // square blocks, odd n
    c.n = 39;
    c.chunk = 40;
    EXPECT_EQ(check_engine_against_lapack(c, 2).local, local);
    c.m = 150;  // three square blocks on one thread
    c.n = 50;
    c.chunk = 50;
    EXPECT_EQ(check_engine_against_lapack(c, 1).local, local);
    c.m = 50;  // one block
    EXPECT_EQ(check_engine_against_lapack(c, 1).local, local);
    EXPECT_EQ(check_engine_against_lapack(c, 2).local, local);
  }
}

TEST(SvdCpuSketch, WorkersSketchEqualsTheSketchOfTheWholeMatrix) {
  // Blocks sketched on two threads in any order give sketch_rows_cpu's Y bit for bit.
  test::ensure_mpi();
  Config c = test::make_config(3500, 40, 500, 1e6);
  c.cpu_local = "sketch";
  CpuTsqr engine(c, 2, MPI_COMM_SELF, c.blocks());
  run_engine(engine, c);
  EXPECT_TRUE(engine.sketched());
  const auto scales = column_scales(c);
  std::vector<double> inv(scales.size());
  for (std::size_t j = 0; j < inv.size(); ++j) inv[j] = 1.0 / scales[j];
  std::vector<double> a(static_cast<std::size_t>(c.m * c.n));
  generate_rows(c, scales.data(), 0, c.m, a.data(), c.m);
  std::vector<std::int64_t> y(static_cast<std::size_t>(sketch_height(c.n) * c.n), 0);
  sketch_rows_cpu(a.data(), c.m, 0, c.m, c.n, sketch_key(c.seed), inv.data(), y.data());
  EXPECT_EQ(engine.sketch_y(), y);
}

TEST(SvdCpuSketch, FailedCheckFallsBackToHouseholderOfThePreconditionedBlocks) {
  // sketch_diag_ratio = 1: no Cholesky factor passes, so every block takes dgeqrt of A R_s^-1
  // and the worker's R is the tree's R times R_s; the answer must not change.
  Config c = test::make_config(3500, 40, 500);
  c.cpu_local = "sketch";
  c.sketch_diag_ratio = 1.0;
  EXPECT_EQ(check_engine_against_lapack(c, 2).local, "sketch+householder");
  c.m = 150;  // square blocks, one thread
  c.n = 50;
  c.chunk = 50;
  EXPECT_EQ(check_engine_against_lapack(c, 1).local, "sketch+householder");
  c.m = 50;  // one block, two threads
  EXPECT_EQ(check_engine_against_lapack(c, 2).local, "sketch+householder");
}

TEST(SvdCpuSketch, BadlyConditionedMatricesStayAccurate) {
  // cond(A) = 1e8 and 1e12: residual, orthogonality of U, and S against Householder mode.
  test::ensure_mpi();
  for (const double cond : {1e8, 1e12}) {
    for (const double ratio : {30.0, 1.0}) {  // the sketch, and its forced fallback
      SCOPED_TRACE("condition " + std::to_string(cond) + ", ratio " + std::to_string(ratio));
      Config c = test::make_config(4000, 100, 1000, cond);
      c.cpu_local = "householder";
      CpuTsqr ref(c, 2, MPI_COMM_SELF, c.blocks());
      run_engine(ref, c);
      EXPECT_EQ(std::string(ref.local_routine()), "householder");
      c.cpu_local = "sketch";
      c.sketch_diag_ratio = ratio;
      CpuTsqr engine(c, 2, MPI_COMM_SELF, c.blocks());
      run_engine(engine, c);
      EXPECT_EQ(std::string(engine.local_routine()), ratio > 1 ? "sketch" : "sketch+householder");
      ASSERT_EQ(engine.sigma().size(), ref.sigma().size());
      const double smax = ref.sigma().front();
      EXPECT_LT(engine.sigma().back(), 10 * smax / cond);  // really badly conditioned
      for (std::size_t i = 0; i < ref.sigma().size(); ++i)
        EXPECT_NEAR(engine.sigma()[i], ref.sigma()[i], 1e-12 * smax) << "sigma " << i;
      const auto v = engine.validate();
      ASSERT_EQ(v.size(), 3u);
      EXPECT_LE(std::sqrt(v[0] / v[1]), 1e-12);
      EXPECT_LE(v[2], 1e-10);
    }
  }
}

TEST(SvdCpuSketch, RepeatsGiveTheSameAnswer) {
  // Y is cleared between repeats, and the Grams are summed in a fixed order: bit-identical.
  test::ensure_mpi();
  Config c = test::make_config(3500, 40, 500);
  c.cpu_local = "sketch";
  CpuTsqr engine(c, 2, MPI_COMM_SELF, c.blocks());
  run_engine(engine, c);
  const std::vector<double> first = engine.sigma();
  const std::vector<double> u0(engine.u(0), engine.u(0) + c.chunk * c.n);
  const std::int64_t block0 = engine.block_of(0);
  run_engine(engine, c);
  EXPECT_EQ(engine.sigma(), first);
  ASSERT_EQ(engine.block_of(0), block0);
  EXPECT_EQ(std::vector<double>(engine.u(0), engine.u(0) + c.chunk * c.n), u0);
}

TEST(SvdCpu, WorkloadTinyPassesValidationOnBothThreadCounts) {
  const Workload w = svd_workload();
  const CaseSpec spec = make_spec(2000, 50, 500);
  std::vector<double> sigma1;
  for (int threads : {1, 2}) {
    const CaseEnv env = cpu_env(threads);
    auto worker = w.make_worker(spec, env);
    const auto out = drive(spec, env, *worker, all_tasks(4, 2));
    ASSERT_EQ(out.results.size(), 2u);
    expect_all_pass(out.checks);
    EXPECT_GT(check_value(out.checks, "reference"), -1.0);  // the dgesvd comparison ran
    EXPECT_EQ(out.fingerprint.data.size(), 50u);
    EXPECT_EQ(out.results[0]["sigma_max"], out.results[1]["sigma_max"]);
    EXPECT_NEAR(out.results[1]["sigma_max"].get<double>(), out.fingerprint.data.front(), 0.0);
    for (const auto& r : out.results) {  // what CpuTsqr reports for tiny (m >= 8n, cond 1)
      EXPECT_EQ(r.at("local_routine"), "sketch");
      EXPECT_EQ(r.at("svd_routine"), "gram");
    }
    const auto times = worker->phase_times();
    EXPECT_GT(times.generate, 0.0);
    EXPECT_GT(times.compute, 0.0);
    if (sigma1.empty()) {
      sigma1 = out.fingerprint.data;
    } else {
      Fingerprint a, b;
      a.data = sigma1;
      b.data = out.fingerprint.data;
      const auto cc = w.cross_check(a, b);
      ASSERT_EQ(cc.size(), 1u);
      EXPECT_TRUE(cc[0].pass) << cc[0].value;
    }
  }
}

TEST(SvdCpu, WorkloadResultNamesTheRoutinesItRan) {
  // Every repeat's result carries the engine's local_routine() and svd_routine().
  struct Case {
    std::vector<std::pair<const char*, const char*>> params;
    double condition;
    const char* local;
    const char* svd;
  };
  const Case cases[] = {
      {{}, 1, "sketch", "gram"},
      {{{"cpu_svd", "gesdd"}}, 1, "sketch", "gesdd"},
      {{{"cpu_local", "householder"}}, 1, "householder", "gram"},
      {{{"cpu_local", "householder"}, {"cpu_svd", "gesdd"}}, 1, "householder", "gesdd"},
      {{{"sketch_check", "1"}}, 1, "sketch+householder", "gram"},
      {{}, 1e8, "sketch", "gesdd"},  // cond(R) > 100: auto leaves the Gram route
  };
  const Workload w = svd_workload();
  for (const auto& c : cases) {
    CaseSpec spec = make_spec(2000, 50, 500, c.condition);
    for (const auto& [k, v] : c.params) spec.params.set(k, v);
    const CaseEnv env = cpu_env(2);
    auto worker = w.make_worker(spec, env);
    const auto out = drive(spec, env, *worker, all_tasks(4, 2));
    expect_all_pass(out.checks);
    ASSERT_EQ(out.results.size(), 2u);
    for (const auto& r : out.results) {
      EXPECT_EQ(r.at("local_routine"), c.local) << spec.params.canonical();
      EXPECT_EQ(r.at("svd_routine"), c.svd) << spec.params.canonical();
    }
    // The same values the engine itself reports.
    const Config cfg = parse(spec.params);
    CpuTsqr engine(cfg, 2, MPI_COMM_SELF, cfg.blocks());
    run_engine(engine, cfg);
    EXPECT_STREQ(engine.local_routine(), c.local);
    EXPECT_STREQ(engine.svd_routine(), c.svd);
  }
}

TEST(SvdRoutines, FinishPartialRoundTrips) {
  FinishPartial p;
  p.local_routine = "sketch+householder";
  p.svd_routine = "gesdd";
  p.sigma = {3.5, 2.25, 1e-300, 0.0};
  const auto enc = encode_finish(p);
  EXPECT_EQ(enc.size(), 2 + p.local_routine.size() + p.svd_routine.size() + p.sigma.size());
  const FinishPartial q = decode_finish(enc);
  EXPECT_EQ(q.local_routine, p.local_routine);
  EXPECT_EQ(q.svd_routine, p.svd_routine);
  EXPECT_EQ(q.sigma, p.sigma);
  // Off the root: the local routine only.
  const FinishPartial off = decode_finish(encode_finish({"none", "", {}}));
  EXPECT_EQ(off.local_routine, "none");
  EXPECT_TRUE(off.svd_routine.empty());
  EXPECT_TRUE(off.sigma.empty());
}

TEST(SvdRoutines, MalformedPartialsAreRefused) {
  const std::vector<std::vector<double>> bad = {
      {},                     // no local length
      {2, 'a'},               // too short for its length
      {1.5, 'a', 0},          // fractional length
      {-1, 0},                // negative length
      {1, 300, 0},            // not a byte
      {1, 'a'},               // no svd length
      {0, 4, 'g', 'r', 'a'},  // svd text cut short
  };
  for (const auto& p : bad) EXPECT_THROW((void)decode_finish(p), Error) << p.size();
}

TEST(SvdRoutines, CombineKeepsTheRootFirstThenOtherValuesByRank) {
  EXPECT_EQ(combine_local_routines({}), "");
  EXPECT_EQ(combine_local_routines({{0, "sketch"}}), "sketch");
  EXPECT_EQ(combine_local_routines({{0, "sketch"}, {1, "sketch"}, {2, "sketch"}}), "sketch");
  EXPECT_EQ(combine_local_routines({{0, "sketch"}, {1, "none"}, {2, "sketch"}}), "sketch,none");
  EXPECT_EQ(combine_local_routines({{0, "none"}, {1, "sketch"}, {2, "householder"}, {3, "none"}}),
            "none,sketch,householder");
  EXPECT_EQ(combine_local_routines({{2, "stack"}, {0, "blocks"}, {1, "stack"}}), "blocks,stack");
}

TEST(SvdCpu, BadlyConditionedMatrixStaysAccurate) {
  const Workload w = svd_workload();
  const CaseSpec spec = make_spec(4000, 100, 1000, 1e8);
  const CaseEnv env = cpu_env(2);
  auto worker = w.make_worker(spec, env);
  const auto out = drive(spec, env, *worker, all_tasks(4, 1));
  expect_all_pass(out.checks);
  const double cond = out.results[0]["condition"].get<double>();
  EXPECT_GT(cond, 1e7);  // really badly conditioned
  EXPECT_LT(check_value(out.checks, "residual"), 1e-14);
  EXPECT_LT(check_value(out.checks, "orthogonality"), 1e-12);
}

TEST(SvdCpu, SmallPresetValidates) {
  const Workload w = svd_workload();
  CaseSpec spec;
  spec.workload = "svd";
  spec.params = preset("small");
  const CaseEnv env = cpu_env(2);
  auto worker = w.make_worker(spec, env);
  const auto out = drive(spec, env, *worker, all_tasks(10, 1));
  expect_all_pass(out.checks);
  const auto work = w.make_scheduler(spec)->work();
  EXPECT_EQ(work.unit, "flop");
  // Throughput counts the problem's nominal 6mn^2 on every path; efficiency counts what the
  // algorithm does: the small preset (m = 40n) takes the sketch path, 4mn^2.
  EXPECT_DOUBLE_EQ(work.units, 6.0 * 20000 * 500 * 500);
  EXPECT_DOUBLE_EQ(work.flops, 4.0 * 20000 * 500 * 500);
  spec.params.set("cpu_local", "householder");
  EXPECT_DOUBLE_EQ(w.make_scheduler(spec)->work().flops, 6.0 * 20000 * 500 * 500);
}

TEST(SvdScheduler, MissingOrDuplicateTasksFailValidation) {
  const Workload w = svd_workload();
  const CaseSpec spec = make_spec(2000, 50, 500);
  const CaseEnv env = cpu_env(1);
  auto worker = w.make_worker(spec, env);
  // Block 3 twice, block 2 never: the tasks check fails (the others may too).
  const auto out = drive(spec, env, *worker, {{0, 1, 3, 3}});
  EXPECT_GT(check_value(out.checks, "tasks"), 0.0);
  bool tasks_failed = false;
  for (const auto& c : out.checks)
    if (c.name == "tasks") tasks_failed = !c.pass;
  EXPECT_TRUE(tasks_failed);
}

TEST(SvdScheduler, CrossCheckFlagsDisagreement) {
  Fingerprint a, b;
  a.data = {10, 5, 1};
  b.data = {10, 5, 1 + 1e-8};
  EXPECT_FALSE(cross_check(a, b)[0].pass);
  b.data = {10, 5, 1 + 1e-12};
  EXPECT_TRUE(cross_check(a, b)[0].pass);
  b.data = {10, 5};
  EXPECT_FALSE(cross_check(a, b)[0].pass);
}

}  // namespace
}  // namespace sb::svd
