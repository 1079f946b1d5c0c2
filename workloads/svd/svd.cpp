#include "svd/svd.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "scalebench/error.hpp"
#include "scalebench/workload_registration.hpp"
#include "svd/config.hpp"
#include "svd/export_inputs.hpp"
#include "svd/memory_estimate.hpp"
#include "svd/scheduler.hpp"
#include "svd/worker_cpu.hpp"
#include "svd/worker_plan.hpp"

#if SCALEBENCH_HAVE_CUDA
#include "svd/worker_gpu.hpp"
#endif

namespace sb {

Workload svd_workload() {
  Workload w;
  w.name = "svd";
  w.description =
      "tall-skinny thin SVD by TSQR (dask.array.linalg.svd): block QRs, R-factor tree, "
      "SVD of R, U formed where its blocks live";
  w.keys = svd::keys();
  w.preset = [](const std::string& name) { return svd::preset(name); };
  w.expand = [](const Params& p) {
    (void)svd::parse(p);  // throws sb::UsageError on bad values
    return std::vector<Params>{p};
  };
  w.make_scheduler = [](const CaseSpec& spec) { return svd::make_scheduler(spec); };
  // Weak scaling: a tall matrix grows in rows, m, to the nearest multiple of chunk; n stays.
  w.weak_scale = [](const Params& p, double factor) {
    const svd::Config c = svd::parse(p);
    const auto blocks = std::max<std::int64_t>(
        1, std::llround(static_cast<double>(c.m) * factor / static_cast<double>(c.chunk)));
    Params out = p;
    out.set("m", std::to_string(blocks * c.chunk));
    (void)svd::parse(out);
    return out;
  };
  w.plan_workers = [](const CaseSpec& spec, int available) {
    return svd::plan_workers(svd::parse(spec.params), device_of(spec.path), available);
  };
  w.make_worker = [](const CaseSpec& spec, const CaseEnv& env) -> std::unique_ptr<WorkerCase> {
    if (env.device == Device::gpu) {
#if SCALEBENCH_HAVE_CUDA
      return svd::make_gpu_worker(spec, env);
#else
      throw EnvironmentError("svd: this scalebench was built without CUDA; no GPU path");
#endif
    }
    return svd::make_cpu_worker(spec, env);
  };
  w.cross_check = [](const Fingerprint& ref, const Fingerprint& other) {
    return svd::cross_check(ref, other);
  };
  w.memory_needed = [](const CaseSpec& spec, const CaseEnv& env) {
    return svd::memory_needed(spec, env);
  };
  w.export_inputs = [](const std::vector<Params>& variants) {
    return svd::export_inputs(variants);
  };
  return w;
}

}  // namespace sb

SB_REGISTER_WORKLOAD(sb::svd_workload);
