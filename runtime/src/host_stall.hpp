#pragma once
/// @file host_stall.hpp
/// Host stalls: stretches in which a worker's thread, though counted by its kernel as running,
/// made no progress while its device had finished work. On virtual machines the hypervisor
/// pauses vCPUs for milliseconds (docs/performance.md, "Host stalls"); a repeat hit by one is
/// slower for a reason outside the workload and the runtime, so it is marked like a throttled
/// repeat and left out of the medians unless --keep-throttled.

#include <limits>
#include <vector>

#include "scalebench/workload.hpp"

namespace sb::detail {

/// A host stall counts when it is at least this long...
inline constexpr double kHostStallMinS = 0.3e-3;
/// ...and at least this fraction of its repeat's time.
inline constexpr double kHostStallFraction = 0.1;

/// How late one worker noticed its finished tasks within a repeat. Each task that reports when
/// its work ended (TaskOutcome::end, by the workload's own clock, e.g. a GPU's events) gives a
/// lateness, noticed minus ended; the clocks' offset is the same for every task of the repeat,
/// so the largest lateness minus the smallest is time the thread lost after the work was done.
/// Only stalls during which a task ended are seen (not those inside finish_repeat), and only in
/// GPU cases, whose worker thread launches and waits (a CPU worker's thread computes tasks
/// itself and may notice one that another of its threads finished only after its own).
class TaskLateness {
 public:
  /// A task's outcome, noticed `noticed_s` after the worker's repeat began (its own clock).
  void add(double noticed_s, const TaskOutcome& o);
  /// The repeat's host stall, seconds (0 with fewer than two timed tasks).
  [[nodiscard]] double stall() const;

 private:
  int n_ = 0;
  double latest_end_ = 0;
  double min_ = std::numeric_limits<double>::infinity();
  double max_ = -std::numeric_limits<double>::infinity();
};

/// Time the host's slow periods cost each repeat of a GPU case, seconds. A GPU worker's thread
/// submits the same tasks in every repeat, and launching one takes it a steady time (10-17 us a
/// groupby seed task on an H100 machine); on a virtual machine whose vCPU gets a fraction of its
/// core for tens of milliseconds every launch takes 5-10 times as long, the GPU waits for the
/// host, and no single pause shows as late notice. Repeat i's worker with the slowest submits
/// took `per_task[i]` seconds a task for `submits[i]` tasks (0: not a GPU case); against the
/// case's median per task its excess is (per_task[i] - median) * submits[i] (docs/performance.md,
/// "Where a small case's time goes").
[[nodiscard]] std::vector<double> slow_submit_excess(const std::vector<double>& per_task,
                                                     const std::vector<int>& submits);

/// The host's speed at the end of a repeat: seconds a fixed chain of dependent integer steps
/// (0.5-0.9 us on an idle core) took this thread. A GPU worker runs it after its finishing
/// step: a slow period that starts after the last submit (inside finish_repeat, where neither
/// late notices nor submits see it) still slows this chain 5-10 times.
[[nodiscard]] double host_speed_probe();
/// A probe at least this many times the case's fastest third of probes says the host was slow.
inline constexpr double kSlowProbeFactor = 2.0;
/// Time a slow host cost each repeat, judged by its probe: repeat i's largest probe over its
/// workers, `probe[i]` (0: none), at least kSlowProbeFactor times the mean of the case's fastest
/// third of probes (a slow host only adds time, and a slow period may outlast half the case)
/// makes the repeat's excess over the median `totals` of the repeats with a normal probe count
/// as host stall: the host ran slow at the end of the repeat and the repeat ran long. Needs
/// three probes or more.
[[nodiscard]] std::vector<double> slow_probe_excess(const std::vector<double>& probe,
                                                    const std::vector<double>& totals);

/// Whether a repeat of `total_s` with a worker's largest host stall `stall_s` counts as stalled.
[[nodiscard]] bool host_stalled(double stall_s, double total_s);

}  // namespace sb::detail
