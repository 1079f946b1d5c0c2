// Host stalls of a repeat (host_stall.hpp).
#include "host_stall.hpp"

#include <algorithm>
#include <cstdint>

#include "scalebench/clock.hpp"
#include "scalebench/stats.hpp"

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

std::vector<double> slow_submit_excess(const std::vector<double>& per_task,
                                       const std::vector<int>& submits) {
  std::vector<double> excess(per_task.size(), 0.0);
  std::vector<double> seen;
  for (std::size_t i = 0; i < per_task.size(); ++i)
    if (i < submits.size() && submits[i] > 0) seen.push_back(per_task[i]);
  if (seen.size() < 3) return excess;  // no median to speak of
  const double med = median(seen);
  for (std::size_t i = 0; i < per_task.size(); ++i)
    if (i < submits.size() && submits[i] > 0)
      excess[i] = std::max(0.0, per_task[i] - med) * submits[i];
  return excess;
}

namespace {
/// Steps of host_speed_probe's chain.
constexpr int kProbeSteps = 512;
}  // namespace

double host_speed_probe() {
  std::uint64_t x = 0x9E3779B97F4A7C15ULL;
  const double t0 = now();
  for (int i = 0; i < kProbeSteps; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    asm volatile("" : "+r"(x));  // one dependent step each: the compiler may not fold them
  }
  return now() - t0;
}

std::vector<double> slow_probe_excess(const std::vector<double>& probe,
                                      const std::vector<double>& totals) {
  const std::size_t n = std::min(probe.size(), totals.size());
  std::vector<double> excess(probe.size(), 0.0);
  std::vector<double> seen;
  for (std::size_t i = 0; i < n; ++i)
    if (probe[i] > 0) seen.push_back(probe[i]);
  if (seen.size() < 3) return excess;
  const double slow = kSlowProbeFactor * fastest_third_mean(seen);
  std::vector<double> normal;
  for (std::size_t i = 0; i < n; ++i)
    if (!(probe[i] >= slow)) normal.push_back(totals[i]);
  const double base = median(normal.empty() ? totals : normal);
  for (std::size_t i = 0; i < n; ++i)
    if (probe[i] > 0 && probe[i] >= slow) excess[i] = std::max(0.0, totals[i] - base);
  return excess;
}

bool host_stalled(double stall_s, double total_s) {
  return stall_s >= kHostStallMinS && stall_s >= kHostStallFraction * total_s;
}

}  // namespace sb::detail
