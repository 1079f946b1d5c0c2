// groupby: the workload's description and its registration (groupby.hpp).
#include "groupby/groupby.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "groupby/config.hpp"
#include "groupby/export_inputs.hpp"
#include "groupby/memory_estimate.hpp"
#include "groupby/scheduler.hpp"
#include "groupby/validation.hpp"
#include "groupby/worker_cpu.hpp"
#include "groupby/worker_plan.hpp"
#include "scalebench/error.hpp"
#include "scalebench/workload_registration.hpp"

#if SCALEBENCH_HAVE_CUDA
#include "groupby/worker_gpu.hpp"
#endif

namespace sb {

using namespace sb::groupby;

Workload groupby_workload() {
  Workload w;
  w.name = "groupby";
  w.description =
      "timeseries table (one row per second from 2000-01-01) grouped by name, id or a "
      "high-cardinality key";
  w.keys = config_keys();
  w.preset = [](const std::string& preset) { return preset_params(preset); };
  // Weak scaling: the rows grow by the factor (whole days where they stay whole days); the
  // groups (cardinality) stay.
  w.weak_scale = [](const Params& p, double factor) {
    const std::int64_t rows = std::llround(static_cast<double>(parse(p).rows) * factor);
    Params out = p;
    if (!p.has("rows") && rows % kRowsPerDay == 0) {
      out.set("days", std::to_string(rows / kRowsPerDay));
    } else {
      out.set("rows", std::to_string(rows));
    }
    (void)parse(out);
    return out;
  };
  w.expand = [](const Params& p) { return expand_params(p); };
  w.make_scheduler = groupby::make_scheduler;
  w.plan_workers = [](const CaseSpec& spec, int available) {
    return sb::groupby::plan_workers(parse(spec.params), device_of(spec.path), available);
  };
  w.make_worker = [](const CaseSpec& spec, const CaseEnv& env) -> std::unique_ptr<WorkerCase> {
    const Config c = parse(spec.params);
    if (env.device == Device::gpu) {
#if SCALEBENCH_HAVE_CUDA
      return make_gpu_worker(c, env);
#else
      throw EnvironmentError("groupby: this scalebench was built without CUDA");
#endif
    }
    return make_cpu_worker(c, env);
  };
  w.cross_check = [](const Fingerprint& a, const Fingerprint& b) {
    return cross_check_fingerprints(a, b);
  };
  w.memory_needed = groupby::memory_needed;
  w.export_inputs = groupby::export_inputs;
  return w;
}

}  // namespace sb

SB_REGISTER_WORKLOAD(sb::groupby_workload);
