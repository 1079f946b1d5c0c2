// svd workload, single-GPU path: every repeat's result names the routines the GPU worker ran
// (local_routine, svd_routine), the values GpuTsqr's accessors report, for each first QR
// level (blocks, stack, sketch, the sketch's fallback) and each SVD of R.
#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "scalebench/gpu_context.cuh"
#include "scalebench/gpu_runtime.hpp"
#include "svd/config.hpp"
#include "svd/svd.hpp"
#include "svd/tsqr_gpu.cuh"
#include "svd_driver.hpp"
#include "svd_gpu_fixture.cuh"

namespace sb::svd {
namespace {

class SvdGpuRoutines : public test::GpuFixture {};

TEST_F(SvdGpuRoutines, ResultNamesTheRoutinesTheEngineRan) {
  struct Case {
    std::vector<std::pair<const char*, const char*>> params;
    double condition;
    const char* local;
    const char* svd;  ///< nullptr: whatever the engine reports
  };
  // tiny's shape, 2000 x 50 in blocks of 500: m >= 8n, so gpu_local=auto sketches.
  const Case cases[] = {
      {{}, 1, "sketch", "gram"},
      {{{"gpu_local", "blocks"}}, 1, "blocks", "gram"},
      {{{"gpu_local", "stack"}}, 1, "stack", "gram"},
      {{{"gpu_local", "blocks"}, {"gpu_svd", "gesvdj"}}, 1, "blocks", "gesvdj"},
      {{{"gpu_local", "blocks"}, {"gpu_svd", "gesvd"}}, 1, "blocks", "gesvd"},
      {{{"gpu_local", "stack"}, {"gpu_svd", "gesvdp"}}, 1, "stack", "gesvdp"},
      {{{"gpu_local", "blocks"}}, 1e6, "blocks", "gesvdj"},  // cond(R) > 100: no Gram route
      {{{"sketch_check", "1"}}, 1, "sketch+geqrf", nullptr},
  };
  const Workload w = svd_workload();
  for (const auto& c : cases) {
    CaseSpec spec = test::make_spec(2000, 50, 500, c.condition);
    for (const auto& [k, v] : c.params) spec.params.set(k, v);
    const std::string what = spec.params.canonical();
    const Config cfg = parse(spec.params);
    CaseEnv env;
    env.device = Device::gpu;
    env.threads = 2;
    env.comm = MPI_COMM_SELF;
    env.gpu = ctx_.get();
    std::vector<std::int64_t> tasks(static_cast<std::size_t>(cfg.blocks()));
    std::iota(tasks.begin(), tasks.end(), 0);
    std::string engine_svd;
    {
      GpuTsqr engine(cfg, *ctx_, MPI_COMM_SELF, 0, 1, 2);
      engine.begin_repeat();
      for (const auto b : tasks) engine.submit(b);
      PhaseTimes t;
      engine.finish(t);
      EXPECT_STREQ(engine.local_routine(), c.local) << what;
      engine_svd = engine.svd_routine();
      if (c.svd != nullptr) EXPECT_EQ(engine_svd, c.svd) << what;
    }
    auto worker = w.make_worker(spec, env);
    const auto out = test::drive(spec, env, *worker, {tasks, tasks});
    for (const auto& chk : out.checks)
      EXPECT_TRUE(chk.pass) << what << ": " << chk.name << " = " << chk.value;
    ASSERT_EQ(out.results.size(), 2u) << what;
    for (const auto& r : out.results) {
      EXPECT_EQ(r.at("local_routine"), c.local) << what;
      EXPECT_EQ(r.at("svd_routine"), engine_svd) << what;
    }
  }
}

}  // namespace
}  // namespace sb::svd
