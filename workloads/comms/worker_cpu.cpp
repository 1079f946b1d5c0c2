// The CPU worker of a comms case (worker_cpu.hpp).
#include "comms/worker_cpu.hpp"

namespace sb::comms {

std::unique_ptr<WorkerCase> make_cpu_worker(const CaseSpec& spec, const CaseEnv& env) {
  const Config cfg = parse(spec.params);
  return cfg.measure == Measure::pairs ? make_pairs_worker_cpu(cfg, env)
                                       : make_sweep_worker_cpu(cfg, env);
}

}  // namespace sb::comms
