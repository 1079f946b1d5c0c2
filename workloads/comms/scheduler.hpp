#pragma once
/// @file scheduler.hpp
/// The scheduler side of a comms case: a collective's sweep (sweep_scheduler.cpp) or the pair
/// matrix (pairs_scheduler.cpp). Both hand out no task; every worker reports its figures in its
/// finish_repeat partial.

#include <memory>

#include "comms/config.hpp"
#include "scalebench/workload.hpp"

namespace sb::comms {

/// The case's scheduler side (scheduler.cpp).
[[nodiscard]] std::unique_ptr<SchedulerCase> make_scheduler(const CaseSpec& spec);

/// `warmup`: the case's untimed repeats, which come first (their outputs are checked too).
[[nodiscard]] std::unique_ptr<SchedulerCase> make_sweep_scheduler(const Config& cfg, int workers,
                                                                  int warmup);
[[nodiscard]] std::unique_ptr<SchedulerCase> make_pairs_scheduler(const Config& cfg, int workers,
                                                                  int warmup);

}  // namespace sb::comms
