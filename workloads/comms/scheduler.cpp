// The scheduler side of a comms case (scheduler.hpp).
#include "comms/scheduler.hpp"

namespace sb::comms {

std::unique_ptr<SchedulerCase> make_scheduler(const CaseSpec& spec) {
  const Config cfg = parse(spec.params);
  return cfg.measure == Measure::pairs ? make_pairs_scheduler(cfg, spec.workers, spec.warmup)
                                       : make_sweep_scheduler(cfg, spec.workers, spec.warmup);
}

}  // namespace sb::comms
