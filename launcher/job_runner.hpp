#pragma once
/// @file job_runner.hpp
/// Runs cases in MPI jobs and survives them: starts the job (mpiexec/srun, from the launch
/// plan), follows the scheduler's record stream, forwards SIGINT/SIGTERM/SIGUSR1, and when a
/// job dies (a rank killed, a case timed out) records the running case as failed with the cause
/// and starts a fresh job for the cases still to run.

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "batch/allocation.hpp"
#include "scalebench/workload.hpp"

namespace sb {

struct JobRunnerOptions {
  std::string rank_executable;
  batch::Allocation allocation;
  std::vector<batch::RankPlacement> placement;
  batch::LaunchOptions launch;
  std::string workdir;        ///< holds plan.json and stream.jsonl of each job
  double case_timeout_s = 0;  ///< 0: none
  bool measure_ceilings = true;
  bool trace = false;  ///< `run --trace`, passed to every case's workers
  /// Called for every record (start, progress, case) as it arrives, on the launcher's thread.
  std::function<void(const nlohmann::json&)> on_record;
};

struct JobRunResult {
  nlohmann::json start;               ///< first job's start record (system, startup)
  std::vector<nlohmann::json> cases;  ///< one record per planned case, in plan order
  int jobs = 0;                       ///< MPI jobs started
  std::string stopped_by;             ///< "SIGINT", "SIGTERM", "SIGUSR1" or empty
};

/// Runs every case; never throws for a failed job (its cases are recorded as failed). Throws
/// sb::EnvironmentError when the MPI launcher cannot be started at all.
JobRunResult run_jobs(const std::vector<CaseSpec>& cases, const JobRunnerOptions& options);

/// Installs the launcher's handlers for SIGINT, SIGTERM and SIGUSR1 (idempotent).
void install_signal_handlers();

}  // namespace sb
