// The GPU worker of a comms case (worker_gpu.hpp).
#include "comms/worker_gpu.hpp"

namespace sb::comms {

std::unique_ptr<WorkerCase> make_gpu_worker(const CaseSpec& spec, const CaseEnv& env) {
  const Config cfg = parse(spec.params);
  return cfg.measure == Measure::pairs ? make_pairs_worker_gpu(cfg, env)
                                       : make_sweep_worker_gpu(cfg, env);
}

}  // namespace sb::comms
