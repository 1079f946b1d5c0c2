#pragma once
/// @file workload.hpp
/// The contract between the runtime and a workload (docs/writing-a-workload.md walks through
/// it with examples/plugin/).
///
/// A workload describes itself in a Workload (name, parameter keys, presets, factories) and
/// registers it with SB_REGISTER_WORKLOAD (workload_registration.hpp). A case (workload, path,
/// parameters) runs `warmup + repeats` repeats. In each repeat the scheduler (rank 0) hands out
/// tasks 0..num_tasks()-1 dynamically to the case's workers, which pull them with bounded
/// prefetch. A worker runs each task through WorkerCase::submit/poll and sends the task's small
/// `partial` back; after the last task it calls finish_repeat() (where collectives among the
/// case's workers happen) and sends that partial too. The scheduler folds everything through
/// SchedulerCase and produces the repeat's result. After the repeats, validation runs outside
/// the timed region (WorkerCase::validate -> SchedulerCase::validate), then results of the same
/// workload and parameters are cross-checked across paths (Workload::cross_check).
///
/// Input data is generated on the worker that owns the chunk (philox.hpp): nothing large travels
/// through the scheduler.
///
/// What the runtime gives a worker (CaseEnv): its CPU threads (OpenMP's pool and OpenBLAS are
/// set to `threads` before make_worker; `#pragma omp parallel` uses them), an MPI communicator
/// over the case's workers, and on GPU paths the GpuContext (gpu_context.cuh: device, stream,
/// NCCL communicator over the GPU workers, cuBLAS and cuSOLVER handles).

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalebench/exec_path.hpp"
#include "scalebench/input_export.hpp"
#include "scalebench/params.hpp"
#include "scalebench/repeat_rule.hpp"

namespace sb {

struct GpuContext;  ///< gpu_context.cuh: device, stream, NCCL communicator, library handles.

/// Where a worker's time goes (docs/specification.md §2.5: generate, compute, communicate; total is
/// measured by the scheduler).
enum class Phase : int { generate = 0, compute = 1, communicate = 2 };
/// "generate", "compute", "communicate".
[[nodiscard]] std::string_view to_string(Phase p) noexcept;

/// A worker's wall time per phase in one repeat, in seconds (clock.hpp's ScopedPhase adds to
/// it; GPU workers measure with CUDA events). The report shows the maximum over the workers.
struct PhaseTimes {
  double generate = 0;     ///< making the inputs (philox.hpp)
  double compute = 0;      ///< the work being measured
  double communicate = 0;  ///< collectives and exchanges between workers
};

/// What the runtime gives a worker for one case.
struct CaseEnv {
  Device device = Device::cpu;  ///< CPU or GPU path (the case's ExecPath decides)
  int rank = 0;                 ///< this worker's index among the case's workers
  int size = 1;                 ///< workers in the case
  /// CPU threads this worker may use: OpenMP's pool (omp_set_num_threads) and OpenBLAS are
  /// set to it before make_worker. 1 on single-cpu; on multi-cpu the worker's share of its
  /// node's cores; on GPU paths the host threads that drive the GPU.
  int threads = 1;
  MPI_Comm comm = MPI_COMM_SELF;  ///< the case's workers only (MPI_COMM_SELF on single-* paths)
  GpuContext* gpu = nullptr;      ///< GPU paths only; lives as long as the worker
  std::string host;               ///< this worker's host name
  /// `scalebench run --trace`: the workload may print a timeline of its steps to stderr (one
  /// line per repeat and worker, prefixed with the workload and rank). Never changes the work.
  bool trace = false;
};

/// Identity and settings of one case, the same on every rank.
struct CaseSpec {
  int index = 0;   ///< position in the run (0-based)
  std::string id;  ///< "subset-mean/multi-cpu/chunk=2000,n=20000,seed=42"
  std::string workload;
  ExecPath path = ExecPath::single_cpu;
  Params params;       ///< complete: preset values plus overrides
  std::string preset;  ///< the preset the parameters started from (for people; not in the id)
  int repeats = 5;     ///< timed repeats; under `--repeats auto` the most it may take
  int warmup = 1;      ///< untimed repeats before them
  int workers = 1;     ///< workers taking part in the case
  /// `--repeats auto` (repeat_rule.hpp): the fewest repeats (0: `repeats` is a fixed count),
  /// the wall-time limit and the target spread of the median.
  int min_repeats = 0;
  double max_time_s = 0;
  double target_spread = 0;
  [[nodiscard]] RepeatRule repeat_rule() const noexcept {
    return {min_repeats > 0 ? min_repeats : repeats, repeats, max_time_s, target_spread};
  }
};

/// One finished task as a worker reports it.
struct TaskOutcome {
  std::int64_t task = -1;        ///< the task index submit() was given
  std::vector<double> partial;   ///< workload-defined, small (a few numbers: it is a message)
  double start = 0;              ///< seconds since this worker's repeat start
  double end = 0;                ///< seconds since this worker's repeat start
  std::int64_t bytes = 0;        ///< bytes produced or consumed (task-stream picture)
  Phase phase = Phase::compute;  ///< the phase the task's time counts in (task-stream colour)
};

/// A validation figure: value against limit.
struct Check {
  std::string name;    ///< "max_rel_error", "answer_vs_expected", ...
  double value = 0;    ///< what was measured
  double limit = 0;    ///< what it may be at most (or at least: say so in detail)
  bool pass = false;   ///< a case with a failed check is recorded `failed` (exit code 1)
  std::string detail;  ///< one line, e.g. "|answer - 11| <= 6/sqrt(count)"
};

/// Work done by one repeat, for throughput and efficiency against the ceiling that bounds it.
/// Throughput is units / median repeat time. Efficiency is bytes (or flops) / median time over
/// the ceiling of the case's devices times its workers: per CPU worker a STREAM triad (bytes)
/// or DGEMM (flops) rate, per GPU a device-to-device copy (bytes) or fp64 GEMM (flops) rate.
/// A case that generates its inputs also states its Philox calls: its floor is then the larger
/// of that time and the Philox calls over the device's Philox rate (`philox`, `philox_simd`),
/// and efficiency is the floor over the median time.
/// Count what the algorithm must move or compute (not what an implementation happens to do),
/// the same on every path, so efficiencies of paths compare.
struct Work {
  double units = 0;   ///< count of `unit` (draws, rows, flop)
  std::string unit;   ///< "draws", "rows", "flop"
  double bytes = 0;   ///< bytes moved, when bytes bound the case
  double flops = 0;   ///< floating-point operations, when flops bound the case
  double philox = 0;  ///< Philox4x32-10 calls (blocks of four words) that generate the inputs
  /// Which of bytes and flops limits the case, hence which ceiling efficiency is taken of.
  enum class Bound { bytes, flops } bound = Bound::bytes;
};

/// What a case's results are compared on across paths.
struct Fingerprint {
  nlohmann::json values;     ///< scalars, e.g. {"answer": 11.0, "full_mean": 10.0}
  std::vector<double> data;  ///< larger vectors (singular values, per-group aggregates)
};

/// Worker side of one case. Created once per case on each taking-part worker, before the
/// first repeat (allocation belongs there, outside the timed region). An exception thrown by
/// any member fails the case with its message (sb::Error and its kinds, error.hpp); the run
/// goes on with the next case.
class WorkerCase {
 public:
  virtual ~WorkerCase() = default;
  WorkerCase() = default;
  WorkerCase(const WorkerCase&) = delete;
  WorkerCase& operator=(const WorkerCase&) = delete;

  /// Start of a timed repeat: reset accumulators and phase times.
  virtual void begin_repeat() = 0;
  /// Start task `task` (chunk index). May return before it is done (GPU streams).
  virtual void submit(std::int64_t task) = 0;
  /// Submitted tasks not yet returned by poll().
  [[nodiscard]] virtual std::size_t in_flight() const = 0;
  /// A finished task, if one is; with wait=true, blocks for the oldest when in_flight() > 0.
  virtual std::optional<TaskOutcome> poll(bool wait) = 0;
  /// After this worker's last task of the repeat; collectives among the case's workers go here.
  /// Returns this worker's partial for SchedulerCase::on_worker_done.
  virtual std::vector<double> finish_repeat() { return {}; }
  /// Phase wall times of the last repeat on this worker.
  [[nodiscard]] virtual PhaseTimes phase_times() const = 0;
  /// After all repeats, untimed: this worker's part of the validation.
  virtual std::vector<double> validate() { return {}; }
  /// Tasks to keep requested ahead of the one running (bounded prefetch): a worker asks for
  /// prefetch() + 1 tasks at the start of a repeat and for one more per task finished. 0 is
  /// allowed (one task at a time).
  [[nodiscard]] virtual int prefetch() const { return 2; }
};

/// Scheduler side of one case.
/// Created once per case on rank 0 (make_scheduler); it sees every task's partial, never data.
class SchedulerCase {
 public:
  virtual ~SchedulerCase() = default;
  SchedulerCase() = default;
  SchedulerCase(const SchedulerCase&) = delete;
  SchedulerCase& operator=(const SchedulerCase&) = delete;

  /// Tasks per repeat (>= 1); handed out as indices 0..num_tasks()-1.
  [[nodiscard]] virtual std::int64_t num_tasks() const = 0;
  /// Start of a repeat (warm-up or timed): reset what on_task folds.
  virtual void begin_repeat() = 0;
  /// A finished task, in the order tasks finish (not task order: keep and fold in end_repeat,
  /// or fold into per-task slots).
  virtual void on_task(const TaskOutcome& outcome) = 0;
  /// A worker's finish_repeat() partial (`rank` among the case's workers).
  virtual void on_worker_done(int rank, const std::vector<double>& partial) = 0;
  /// The repeat's result, e.g. {"answer": 11.0000213, "full_mean": 9.99999}. Must not depend on
  /// the order tasks arrived in (fold per-task partials in task order).
  virtual nlohmann::json end_repeat() = 0;
  /// Validation from every worker's validate() output (index = case rank).
  virtual std::vector<Check> validate(const std::vector<std::vector<double>>& worker_parts) = 0;
  /// Values compared across paths of the same workload and parameters.
  [[nodiscard]] virtual Fingerprint fingerprint() const = 0;
  /// The work of one repeat (the same for every repeat of the case).
  [[nodiscard]] virtual Work work() const = 0;
  /// Optional, after validate(): figures of the workload's own, merged into the case's
  /// `metrics` over the runtime's (per-size bandwidths of a sweep, named outliers). A workload
  /// whose repeat time is not its headline states it here: `throughput` and `throughput_unit`,
  /// `efficiency` with `ceiling`, `ceiling_value`, `ceiling_unit`; `notes` (strings, each
  /// "WHAT (FIGURE): WHY") join the summary's notes. Parts of the case the workload judged
  /// against their peers (comms: each link of a pair matrix) go in `verdicts`, each a row of the
  /// report's verdict table: {`subject` ("GPU 3 -> GPU 5"), `host`, `device` (GPU index, -1:
  /// none), `kind`, `value`, `expected` (NaN: unknown), `unit`, `verdict` ("ok" or "slow"),
  /// `peers`, `reason`}. The reports read these generic fields only, never a workload's own.
  [[nodiscard]] virtual nlohmann::json metrics() const { return nlohmann::json::object(); }
};

/// Memory one worker of a case needs (an estimate from the parameters, made before anything is
/// allocated): host bytes and, on GPU paths, device bytes. The runtime compares it with what the
/// worker has and fails the case alone, with both figures, when it does not fit.
struct MemoryNeed {
  double host_bytes = 0;
  double device_bytes = 0;
};

/// How many of a multi-* path's workers a case uses (Workload::plan_workers).
struct WorkerPlan {
  int workers = 1;  ///< 1..available
  /// One line for the report when `workers` is below the available ones: the figure the plan
  /// came from, e.g. "172800 rows: one GPU is faster below 1.5 ms of aggregation".
  std::string why;
};

/// A workload as the registry knows it: what SB_REGISTER_WORKLOAD's function returns. Required:
/// name, preset, expand, make_scheduler, make_worker, cross_check; the rest may stay empty.
struct Workload {
  /// "subset-mean", "svd", "groupby": letters, digits, '-' and '_'; unique in the run. It
  /// starts case ids and --param keys ("svd.m=100000").
  std::string name;
  std::string description;  ///< one line for `scalebench info` and the help texts
  /// Known parameter keys with a one-line help each; --param keys are checked against these.
  std::vector<std::pair<std::string, std::string>> keys;
  /// Parameters of a preset ("tiny", "small", "seed", "large").
  std::function<Params(const std::string& preset)> preset;
  /// The case variants for resolved parameters (groupby: one per query); validates the values
  /// and throws sb::UsageError with one clear line on bad ones.
  std::function<std::vector<Params>(const Params&)> expand;
  std::function<std::unique_ptr<SchedulerCase>(const CaseSpec&)> make_scheduler;
  /// Called only on workers taking part; env.device says CPU or GPU.
  std::function<std::unique_ptr<WorkerCase>(const CaseSpec&, const CaseEnv&)> make_worker;
  /// Compares a case's fingerprint with the reference case's (single-cpu when present).
  std::function<std::vector<Check>(const Fingerprint& reference, const Fingerprint& other)>
      cross_check;
  /// Optional: memory a worker needs for the case (env as make_worker would get it, without the
  /// GPU context). Empty: no check.
  std::function<MemoryNeed(const CaseSpec&, const CaseEnv&)> memory_needed;
  /// Optional: the exact inputs of a case for `scalebench datagen` (input_export.hpp), from its
  /// expanded variants' parameters. Empty: datagen refuses the workload.
  std::function<InputExport(const std::vector<Params>& variants)> export_inputs;
  /// The paths the workload runs on; empty: all four. Cases are planned on these only.
  std::vector<ExecPath> paths;
  /// The fewest workers a case needs: a case with fewer is recorded as skipped, with the reason.
  int min_workers = 1;
  /// Optional, multi-cpu and multi-gpu: how many of the `available` workers the case should
  /// use, from its work: a problem too small for more workers to help runs on fewer (the first
  /// ones, in rank order), and the report says so. Empty: all of them. Not asked under
  /// SCALEBENCH_PARTICIPANTS=all (docs/settings.md).
  std::function<WorkerPlan(const CaseSpec&, int available)> plan_workers;
  /// Optional: weak scaling (`scalebench scale --mode weak`, docs/batch.md "Scaling studies"):
  /// the parameters of a problem `factor` (> 1) times as large as `params` (one case's: a
  /// variant that `expand` returned), for `factor` times
  /// the nodes, so that each node's share stays the same. Grow it exactly where the parameters
  /// allow; where they allow only steps (a size that must be a multiple of its chunk), take the
  /// nearest: the scaling table counts the work each case did (Work::units), not the factor.
  /// Throws sb::UsageError (one line) for values it cannot grow. Empty: the workload has no
  /// weak scaling, and a weak study of it is refused with one line.
  std::function<Params(const Params& params, double factor)> weak_scale;
};

/// True when `w` runs on `path` (Workload::paths).
[[nodiscard]] inline bool runs_on(const Workload& w, ExecPath path) {
  return w.paths.empty() || std::find(w.paths.begin(), w.paths.end(), path) != w.paths.end();
}

/// Every registered workload, in suite order: the built-in ones (subset-mean, svd, groupby),
/// then those of the loaded plugins, in load order. Defined by scalebench.
[[nodiscard]] const std::vector<Workload>& workloads();
/// Throws sb::UsageError listing the known names.
[[nodiscard]] const Workload& find_workload(std::string_view name);

}  // namespace sb
