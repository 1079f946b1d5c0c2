// Host stalls of a repeat (host_stall.hpp).
#include "host_stall.hpp"

#include <algorithm>

namespace sb::detail {

void TaskLateness::add(double noticed_s, const TaskOutcome& o) {
  // A task without its own end time (a workload that does not time its tasks) says nothing.
  if (!(o.end > 0) || o.end < o.start) return;
  // Tasks are noticed in the order they were handed out; one that ended before an earlier one
  // (another stream) could not be noticed before that one ended.
  latest_end_ = std::max(latest_end_, o.end);
  const double late = noticed_s - latest_end_;
  min_ = std::min(min_, late);
  max_ = std::max(max_, late);
  ++n_;
}

double TaskLateness::stall() const {
  return n_ < 2 ? 0.0 : std::max(0.0, max_ - min_);
}

bool host_stalled(double stall_s, double total_s) {
  return stall_s >= kHostStallMinS && stall_s >= kHostStallFraction * total_s;
}

}  // namespace sb::detail
