// comms: the workload's description and its registration (comms.hpp).
#include "comms/comms.hpp"

#include <fmt/format.h>

#include "comms/config.hpp"
#include "comms/expected.hpp"
#include "comms/memory_estimate.hpp"
#include "comms/scheduler.hpp"
#include "comms/worker_cpu.hpp"
#include "scalebench/error.hpp"
#include "scalebench/workload_registration.hpp"

#if SCALEBENCH_HAVE_CUDA
#include "comms/worker_gpu.hpp"
#endif

namespace sb {
namespace comms {

std::vector<Check> cross_check(const Fingerprint& reference, const Fingerprint& other) {
  Check c;
  c.name = "exact";  // the runtime prefixes "cross:"
  const auto wrong = [](const Fingerprint& f) {
    return f.values.is_object() && f.values.contains("wrong") && f.values["wrong"].is_number()
               ? f.values["wrong"].get<double>()
               : -1.0;
  };
  const double a = wrong(reference);
  const double b = wrong(other);
  c.value = a == 0 && b == 0 ? 0.0 : 1.0;
  c.limit = 0;
  c.pass = c.value == 0;
  c.detail = fmt::format(
      "both paths delivered every element exactly (wrong elements: {} and {}; the figures "
      "themselves differ by path)",
      a, b);
  return {c};
}

}  // namespace comms

Workload comms_workload() {
  Workload w;
  w.name = "comms";
  w.description =
      "the interconnect: collective sweeps (time, algbw, busbw as nccl-tests) and the pair "
      "matrix of bandwidth and latency between every two workers, slow links named";
  w.keys = comms::config_keys();
  w.preset = [](const std::string& preset) { return comms::preset_params(preset); };
  // Weak scaling: every worker sends the same messages whatever their number; the collectives
  // grow with the workers by themselves.
  w.weak_scale = [](const Params& p, double) { return p; };
  w.expand = [](const Params& p) { return comms::expand_params(p); };
  w.make_scheduler = comms::make_scheduler;
  w.make_worker = [](const CaseSpec& spec, const CaseEnv& env) -> std::unique_ptr<WorkerCase> {
    if (env.size > comms::kMaxExactRanks)
      throw UsageError(fmt::format("comms: at most {} workers (sums stay exact in float32)",
                                   comms::kMaxExactRanks));
    if (env.device == Device::gpu) {
#if SCALEBENCH_HAVE_CUDA
      return comms::make_gpu_worker(spec, env);
#else
      throw EnvironmentError("comms: this scalebench was built without CUDA");
#endif
    }
    return comms::make_cpu_worker(spec, env);
  };
  w.cross_check = comms::cross_check;
  w.memory_needed = comms::memory_needed;
  // each-node: every node's fabric at once, its workers the node's (one per GPU, or one per
  // node without GPUs: such a node is skipped), each node judged against the others.
  w.paths = {ExecPath::multi_cpu, ExecPath::multi_gpu, ExecPath::each_node};
  w.min_workers = 2;
  return w;
}

}  // namespace sb

SB_REGISTER_WORKLOAD(sb::comms_workload);
