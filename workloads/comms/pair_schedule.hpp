#pragma once
/// @file pair_schedule.hpp
/// The order in which the pair matrix measures the n(n-1) ordered pairs: steps, each a set of
/// transfers no two of which share a worker, measured at once between two barriers.
///   serial: one transfer per step (nothing else on the fabric: the figure is the link's own);
///   rounds: the round-robin tournament (circle method), each round's pairs one way and then
///           the other: 2(n-1) steps (2n with an odd n) instead of n(n-1), for many workers.

#include <vector>

#include "comms/config.hpp"

namespace sb::comms {

struct Transfer {
  int src = 0;
  int dst = 0;
};
using Step = std::vector<Transfer>;

[[nodiscard]] std::vector<Step> pair_steps(int workers, Schedule schedule);

/// This worker's transfer in `step`, as sender or receiver; nullptr when it has none.
[[nodiscard]] const Transfer* transfer_of(const Step& step, int me);

}  // namespace sb::comms
