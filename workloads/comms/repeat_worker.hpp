#pragma once
/// @file repeat_worker.hpp
/// A comms worker has no tasks: every worker takes part in every measurement at once, so a
/// repeat's work runs in finish_repeat (the contract's place for collectives) and the scheduler
/// hands out no task (num_tasks() == 0).

#include <optional>

#include "scalebench/error.hpp"
#include "scalebench/workload.hpp"

namespace sb::comms {

class RepeatWorker : public WorkerCase {
 public:
  void begin_repeat() override { times_ = {}; }
  void submit(std::int64_t task) override {
    throw Error("comms: internal: task " + std::to_string(task) + " handed out (comms has none)");
  }
  [[nodiscard]] std::size_t in_flight() const override { return 0; }
  std::optional<TaskOutcome> poll(bool /*wait*/) override { return std::nullopt; }
  [[nodiscard]] PhaseTimes phase_times() const override { return times_; }

 protected:
  PhaseTimes times_;  ///< communicate: the timed calls; compute: the value checks
};

}  // namespace sb::comms
