#pragma once
/// @file ab_turns.hpp
/// (runtime internals) The scheduler of one side of an A/B run (ab_protocol.hpp): a case's
/// repeats run only in the turns the launcher hands out on the scheduler's standard input.
/// Between turns the workers are parked (they sleep between probes, so that this side's job
/// takes nothing from the other side's measurements) and the scheduler blocks in read().

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "scalebench/job_plan.hpp"
#include "scalebench/workload.hpp"

namespace sb::detail {

/// One command of the launcher.
struct AbCommand {
  enum class Kind { begin, turn, end, stop };
  Kind kind = Kind::stop;
  int index = -1;   ///< the run's case index
  int repeats = 0;  ///< timed repeats of this turn
  int turn = 0;     ///< the turn's number in the run (both sides counted), for the repeats
};

/// Parses one command line ("begin 3", "turn 3 2 17", "end 3", "stop"); throws sb::Error
/// otherwise.
[[nodiscard]] AbCommand parse_ab_command(const std::string& line);

/// What the turns of one case ask the scheduler to do.
struct AbCaseSteps {
  /// The case's warm-up repeats; returns the last one's wall time (s).
  std::function<double()> warm_up;
  /// One timed repeat in turn `turn`; returns its total (s).
  std::function<double(int turn)> timed_repeat;
  /// true: park the workers (they sleep until woken); false: wake them and wait until every
  /// one answers, so that the next repeat starts on awake workers.
  std::function<void(bool park)> park;
};

class AbTurns {
 public:
  /// Commands are read from `input_fd` (the standard input), records written to `out`.
  AbTurns(StreamWriter& out, int input_fd = 0) : out_(out), fd_(input_fd) {}

  /// Before each case: waits for the launcher's `begin` of case `index` (true) or `stop`
  /// (false). Throws sb::Error for another command.
  bool wait_begin(int index);

  /// Runs the case's turns until the launcher ends it (or stops the job); returns the case
  /// record's `repeat_stop`. The workers hold the case (CASE_BEGIN answered) when it is called;
  /// they are parked on return. `setup_s` goes to the launcher with the ready record.
  nlohmann::json run_case(const CaseSpec& spec, double setup_s, const AbCaseSteps& steps);

  /// The launcher asked the job to end (or its input ended): no case after this one.
  [[nodiscard]] bool stopping() const noexcept { return stopping_; }

 private:
  AbCommand next();  ///< blocks until a whole line has arrived
  StreamWriter& out_;
  int fd_;
  std::string buffer_;
  bool stopping_ = false;
};

}  // namespace sb::detail
