#pragma once
/// @file repeat_timing.hpp
/// (private) The end of a worker's repeat (kTagDone) and how the scheduler folds its workers'
/// reports into the repeat's times: the phases, and the runtime's own cost, which is the part of
/// the repeat spent outside the busiest worker's phases (dispatch, messages, waits, a GPU idle
/// between tasks). With --trace each worker also sends its events of the repeat and the
/// scheduler prints them as one line per worker.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "message.hpp"
#include "scalebench/workload.hpp"

namespace sb::detail {

/// What a worker reports when its part of a repeat is done (worker -> scheduler).
struct RepeatDone {
  PhaseTimes phases;
  std::vector<double> partial;  ///< the workload's partial result (WorkerCase::finish_repeat)
  double wall = 0;              ///< from REPEAT_BEGIN received to DONE sent, seconds
  std::string trace;            ///< --trace: "label@ms ..." since REPEAT_BEGIN was received
  double host_stall = 0;        ///< seconds the worker lost after its tasks ended (host_stall.hpp)
  double submit_s = 0;          ///< GPU cases: seconds in WorkerCase::submit (host_stall.hpp)
  int submits = 0;              ///< and how many tasks it submitted
  double probe_s = 0;           ///< GPU cases: host_speed_probe after finish_repeat
};

void put_done(Writer& w, const RepeatDone& d);
[[nodiscard]] RepeatDone get_done(Reader& r);

/// A thread's context switches (voluntary, forced), page faults and time in the kernel (ns).
struct ThreadUsage {
  long csw = 0, icsw = 0, faults = 0;
  long long sys_ns = 0;
};

/// A worker's events within one repeat (--trace); free when tracing is off.
class WorkerRepeatTrace {
 public:
  WorkerRepeatTrace(bool on, double t0);
  void mark(const char* what, long long n = -1);
  /// A finished task: "what<task>@<now>(<end>)", `end` when its work ended by the workload's
  /// own clock (a GPU's events), seconds since the repeat began: a late device shows as a late
  /// end, a late host as a gap between the end and the mark.
  void mark_task(const char* what, long long task, double end);
  /// The events, then since the start the thread's context switches ("csw=voluntary/forced"),
  /// its time on a CPU and its time runnable but waiting for one, ms ("oncpu=", "queued="): a
  /// repeat's wall time beyond the two is time its CPU spent elsewhere (a hypervisor, interrupts);
  /// of its CPU time, the part in the kernel ("sys=", ms; tick-sampled) and its page faults.
  [[nodiscard]] std::string str() const;

 private:
  bool on_;
  double t0_;
  ThreadUsage usage_;
  long long run_ns_ = 0, queued_ns_ = 0;
  std::string text_;
};

/// One repeat as the scheduler sees it, from REPEAT_BEGIN sent to the last DONE received.
class RepeatTiming {
 public:
  /// Starts the clock (just before the first REPEAT_BEGIN is sent); `writing`: the stream's
  /// StreamWriter::seconds_writing() then (end() takes it again). `switches`: count the
  /// scheduler thread's context switches for trace_lines (two system calls a repeat, which
  /// thousands of each-* devices' repeats need not pay without --trace).
  void begin(double writing = 0, bool switches = true);
  /// A participant's DONE.
  void on_done(int case_rank, const RepeatDone& d);
  /// Ends the repeat: its total time, seconds.
  double end(double writing = 0);

  [[nodiscard]] const PhaseTimes& phases() const { return phases_; }
  /// The repeat's entry of a case record's `repeats`: the phases (maxima over the workers),
  /// `total`, `runtime` (total minus the busiest worker's phases) and `messages` (total minus
  /// the longest worker's own wall time: what getting the repeat to and from the workers took)
  /// and `host_stall` (the largest worker's, seconds: host_stall.hpp); in GPU cases also
  /// `submit_task_s` and `submits`: the worker whose tasks took its thread longest to submit,
  /// seconds per task, and how many it submitted (host_stall.hpp, slow_submit_excess), and
  /// `probe_s`, the workers' slowest host_speed_probe (slow_probe_excess).
  [[nodiscard]] nlohmann::json record() const;
  /// --trace: one line per worker for case `id`, repeat `repeat` (-1: a warm-up repeat).
  [[nodiscard]] std::string trace_lines(const std::string& id, int repeat) const;

 private:
  struct Worker {
    int rank = 0;
    double done_at = 0;  ///< DONE received, seconds after begin()
    double busy = 0;     ///< the worker's phases, summed
    double wall = 0;
    double host_stall = 0;
    double submit_s = 0;
    int submits = 0;
    double probe_s = 0;
    std::string trace;
  };
  double t0_ = 0;
  double total_ = 0;
  double writing_ = 0;       ///< seconds the scheduler spent writing records during the repeat
  long csw_ = 0, icsw_ = 0;  ///< the scheduler thread's context switches (at begin, then deltas)
  bool switches_ = true;     ///< whether they are counted
  PhaseTimes phases_;
  std::vector<Worker> workers_;
};

}  // namespace sb::detail
