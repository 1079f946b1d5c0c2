#pragma once
/// @file participant_watch.hpp
/// (runtime internals) What each participant of a case was last doing, as the scheduler sees it
/// from the messages it gets anyway: when a case times out, the message names the ranks (host,
/// GPU) that had not finished the step the case was in (its set-up, repeat r, its validation)
/// and what each was doing then: building the case, running tasks 12-13, in the repeat's
/// finishing step (finish_repeat: its collectives) after its last task, or silent since the
/// repeat began. At 64 nodes the one rank that stopped answering is listed first, the hundreds
/// waiting for it in a collective are summed up in one clause. Nothing is sent for it: the
/// scheduler notes the tag and time of each message it receives (no timed code changes).

#include <cstdint>
#include <string>
#include <vector>

#include "message.hpp"
#include "startup_gather.hpp"

namespace sb::detail {

class ParticipantWatch {
 public:
  enum class Stage { setup, repeat, validation };

  /// The case's participants enter `stage` (`repeat`: the timed repeat's index, -1 for a warm-up
  /// one); what they did in an earlier stage is forgotten.
  void begin(const std::vector<WorkerInfo>& parts, Stage stage, int repeat = -1);
  /// A message from a participant (any tag; a REQUEST's counts are read from its head).
  void heard(const Message& m);
  /// The scheduler answered `rank`'s request with tasks [first, end) (none: no more tasks).
  void assigned(int rank, std::int64_t first, std::int64_t end);
  /// "rank 3 (node7, GPU 2) running task 17, silent for 4.9 s; 2 other ranks (node1, node2)
  /// in finish_repeat after their last task": the participants of `parts` that had not
  /// finished the stage, the odd ones first; "" when all had.
  [[nodiscard]] std::string unfinished(const std::vector<WorkerInfo>& parts) const;
  /// The step `parts` were in: "its set-up", "the warm-up", "repeat 3", "its validation".
  [[nodiscard]] std::string step(const std::vector<WorkerInfo>& parts) const;

 private:
  struct State {
    Stage stage = Stage::setup;
    int repeat = -1;
    double since = 0;  ///< when the stage began
    double heard = 0;  ///< when its last message came (0: none this stage)
    int last_tag = -1;
    bool done = false;
    bool no_more = false;                          ///< told that no task is left this repeat
    int last_want = 0;                             ///< tasks its last request asked for
    std::int64_t held = 0;                         ///< tasks assigned and not reported
    std::int64_t first_held = -1, last_held = -1;  ///< the latest tasks assigned
  };
  State& at(int rank);
  std::vector<State> by_rank_;  ///< by world rank
};

}  // namespace sb::detail
