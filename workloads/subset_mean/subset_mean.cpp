// subset-mean: the workload's description, its cross-path check and its registration.
#include "subset_mean/subset_mean.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "scalebench/error.hpp"
#include "scalebench/workload_registration.hpp"
#include "subset_mean/config.hpp"
#include "subset_mean/export_inputs.hpp"
#include "subset_mean/memory_estimate.hpp"
#include "subset_mean/worker_cpu.hpp"

#if SCALEBENCH_HAVE_CUDA
#include "subset_mean/worker_gpu.hpp"
#endif

namespace sb {
namespace subset_mean {
namespace {

std::unique_ptr<WorkerCase> make_worker(const CaseSpec& spec, const CaseEnv& env) {
  if (env.device == Device::cpu) return make_cpu_worker(spec, env);
#if SCALEBENCH_HAVE_CUDA
  return make_gpu_worker(spec, env);
#else
  throw EnvironmentError(
      "subset-mean: this scalebench was built without CUDA, so it has no GPU "
      "worker");
#endif
}

}  // namespace

std::vector<Check> cross_check(const Fingerprint& reference, const Fingerprint& other) {
  std::vector<Check> checks;
  for (const char* key : {"answer", "full_mean"}) {
    Check c;
    c.name = key;  // the runtime prefixes "cross:"
    c.limit = 1e-12;
    const auto& r = reference.values;
    const auto& o = other.values;
    if (!r.is_object() || !o.is_object() || !r.contains(key) || !o.contains(key) ||
        !r[key].is_number() || !o[key].is_number()) {
      c.value = 1;
      c.pass = false;
      c.detail = fmt::format("{} missing from a fingerprint", key);
    } else {
      const double rv = r[key].get<double>();
      const double ov = o[key].get<double>();
      c.value = relative_difference(ov, rv);
      c.pass = c.value <= c.limit;
      c.detail = fmt::format(
          "|{0} - reference {0}| / |reference {0}| <= 1e-12 ({1:.17g} vs {2:.17g})", key, ov, rv);
    }
    checks.push_back(c);
  }
  return checks;
}

}  // namespace subset_mean

Workload subset_mean_workload() {
  Workload w;
  w.name = "subset-mean";
  w.description =
      "mean of (x + 1)[::2, ::2] for an n x n array of N(mu, sigma^2) draws (Dask array "
      "experiment); every one of the n^2 draws is made";
  w.keys = {{"n", "X is n x n (a multiple of chunk)"},
            {"chunk", "tasks are chunk x chunk blocks (even, divides n)"},
            {"seed", "Philox key of the data (default 42)"},
            {"mu", "mean of X (default 10)"},
            {"sigma", "standard deviation of X, > 0 (default 1)"},
            {"simd",
             "widest SIMD variant of the CPU generator: scalar | avx2 | avx512 (default: the "
             "widest this CPU runs; the same numbers either way)"}};
  w.preset = [](const std::string& preset) { return subset_mean::preset_params(preset); };
  w.expand = [](const Params& params) {
    (void)subset_mean::parse(params);  // throws sb::UsageError on bad values
    return std::vector<Params>{params};
  };
  // No more workers than blocks: a worker without one would only wait for the sum. More GPUs
  // pay from the tiny preset on (docs/performance.md, subset-mean tiny).
  w.plan_workers = [](const CaseSpec& spec, int available) {
    const subset_mean::Config cfg = subset_mean::parse(spec.params);
    WorkerPlan p{available, {}};
    if (cfg.tasks < available)
      p = {static_cast<int>(cfg.tasks),
           fmt::format("{} blocks of {} x {}: a worker without one would only wait", cfg.tasks,
                       cfg.chunk, cfg.chunk)};
    return p;
  };
  w.make_scheduler = subset_mean::make_scheduler;
  w.make_worker = subset_mean::make_worker;
  w.cross_check = subset_mean::cross_check;
  w.memory_needed = subset_mean::memory_needed;
  w.export_inputs = subset_mean::export_inputs;
  // Weak scaling: the n x n draws grow by the factor, so n by its square root, to the nearest
  // multiple of chunk (the scaling table counts the draws made).
  w.weak_scale = [](const Params& params, double factor) {
    const subset_mean::Config cfg = subset_mean::parse(params);
    const double n = static_cast<double>(cfg.n) * std::sqrt(factor);
    const auto blocks = std::max<std::int64_t>(1, std::llround(n / static_cast<double>(cfg.chunk)));
    Params out = params;
    out.set("n", std::to_string(blocks * cfg.chunk));
    (void)subset_mean::parse(out);
    return out;
  };
  return w;
}

}  // namespace sb

SB_REGISTER_WORKLOAD(sb::subset_mean_workload);
