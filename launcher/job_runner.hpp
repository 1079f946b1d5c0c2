#pragma once
/// @file job_runner.hpp
/// Runs cases in MPI jobs and survives them: starts each job (job_process.hpp), follows the
/// scheduler's record stream, passes the run's stop signals on (stop_signals.hpp), and when a
/// job dies (a rank killed, a case timed out) records the running case as failed with the cause
/// and starts a fresh job for the cases still to run.

#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "batch/allocation.hpp"
#include "scalebench/job_plan.hpp"
#include "scalebench/workload.hpp"

namespace sb {

struct JobRunnerOptions {
  std::string rank_executable;
  batch::Allocation allocation;
  std::vector<batch::RankPlacement> placement;
  batch::LaunchOptions launch;
  std::string workdir;        ///< the run's work folder: plans, streams, job logs
  std::string lifeline_path;  ///< the launcher's lifeline, watched by the scheduler
  double case_timeout_s = 0;  ///< 0: none
  bool measure_ceilings = true;
  bool trace = false;                 ///< `run --trace`, passed to every case's workers
  bool fresh_ceilings = false;        ///< `run --fresh-ceilings`
  double telemetry_period_s = 0.02;   ///< between telemetry readings; < 0: none
  double telemetry_gpu_min_s = 0.01;  ///< the least time between two GPU readings
  double telemetry_counters_s = 1.0;  ///< the least time between two GPU error-counter readings
  bool keep_throttled = false;        ///< `run --keep-throttled`
  /// Workload plugins every rank loads (plugins.hpp).
  std::vector<std::string> plugins;
  /// Environment variables the ranks get on top of the launcher's (an A/B side's env:).
  std::map<std::string, std::string> env;
  /// An A/B run's side ("baseline" or "current"): its job takes turns (ab_runner.hpp).
  std::string ab_side;
  /// An A/B run's mark, the same for both sides (rank_environment.hpp, SCALEBENCH_AB_RUN): a
  /// worker does not take the other side's ranks on its GPU for other users. Empty otherwise.
  std::string ab_run;
  /// Called for every record (start, progress, case) as it arrives, on the launcher's thread.
  /// An exception it throws (a report that cannot be written) ends the job and propagates.
  std::function<void(const nlohmann::json&)> on_record;
  /// Called about every 50 ms while a job runs, on the launcher's thread (progress lines).
  std::function<void()> on_tick;
};

struct JobRunResult {
  nlohmann::json start;                 ///< first job's start record (system, startup)
  std::vector<nlohmann::json> cases;    ///< the planned cases' records, in plan order (each-gpu
                                        ///< and each-node cases one per device)
  int jobs = 0;                         ///< MPI jobs started
  int stop_signal = 0;                  ///< the signal that stopped the run, or 0
  std::vector<std::string> lost_nodes;  ///< nodes the batch system reported lost mid-run
  /// A fresh job that never finished its start-up (exit code 3): why; its cases are recorded.
  std::string environment_error;
};

/// The record of a case that did not run (or did not finish): `status` and `msg`.
[[nodiscard]] nlohmann::json not_run_record(const CaseSpec& s, const std::string& status,
                                            const std::string& msg);

/// Writes job `job`'s plan file (the `remaining` cases) into opt.workdir and returns its launch
/// plan; `plan` receives what was written.
[[nodiscard]] batch::LaunchPlan prepare_job(int job, const std::vector<CaseSpec>& remaining,
                                            const JobRunnerOptions& opt, JobPlan& plan);

/// A job's end in words: its wait status and the most telling of its last output lines.
[[nodiscard]] std::string diagnose_job_end(int status, const std::deque<std::string>& log_tail);

/// Runs every case; never throws for a failed job (its cases are recorded as failed). Throws
/// sb::EnvironmentError when the MPI launcher cannot be started at all. When a job ends badly
/// and the batch system reports nodes of a multi-node allocation lost (batch/node_health.hpp),
/// the running case's message names them and the next job runs on the nodes that are left;
/// every case record from then on carries `nodes_lost`.
JobRunResult run_jobs(const std::vector<CaseSpec>& cases, const JobRunnerOptions& options);

}  // namespace sb
