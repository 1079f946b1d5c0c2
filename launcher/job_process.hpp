#pragma once
/// @file job_process.hpp
/// One MPI job (mpiexec or srun and the ranks under it) started by the launcher through its
/// guardian (job_guardian.hpp: the job never outlives the launcher, killed or not): in a process
/// group of its own (a terminal's Ctrl-C reaches the launcher only), stdin from /dev/null, and
/// stdout and stderr appended to a log file in the run's work folder rather than a pipe, so a
/// job never dies of SIGPIPE when the launcher is gone.
/// Destroying a JobProcess whose job still runs ends the job: SIGTERM to its group, SIGKILL
/// after a grace period, and the guardian ends what is left below it (ranks that mpiexec left
/// in process groups of their own). Whatever ends the launcher's run, nothing keeps running.

#include <sys/types.h>

#include <string>
#include <vector>

#include "batch/allocation.hpp"
#include "job_processes.hpp"

namespace sb {

class JobProcess {
 public:
  /// Starts `plan.argv` with `plan.env` added. Throws sb::EnvironmentError when it cannot.
  /// `commands`: the job's standard input is a pipe that send() writes to (an A/B side's
  /// scheduler reads its turns there, ab_protocol.hpp); otherwise /dev/null.
  JobProcess(const batch::LaunchPlan& plan, const std::string& log_path, bool commands = false);
  ~JobProcess();
  JobProcess(const JobProcess&) = delete;
  JobProcess& operator=(const JobProcess&) = delete;

  /// False once the job's leader (mpiexec/srun) has exited; its wait status is then status().
  bool running();
  [[nodiscard]] int status() const noexcept { return status_; }
  /// Writes `line` and a newline to the job's standard input (a `commands` job); false when
  /// the job no longer reads it.
  bool send(const std::string& line) noexcept;
  /// Closes the job's standard input: its scheduler reads the end of its commands.
  void close_input() noexcept;
  /// SIGTERM to the whole group (once); terminate_age() is the seconds since.
  void terminate();
  [[nodiscard]] double terminate_age() const;
  /// SIGKILL to the whole group.
  void kill_all() noexcept;
  /// Ends the job and everything left below it: SIGTERM, up to `grace_s` seconds for it to
  /// go, then SIGKILL; returns when nothing of it is left.
  void end(double grace_s) noexcept;
  /// The starter's pid (its process group's id).
  [[nodiscard]] pid_t pid() const noexcept { return pid_; }
  /// When the job was started (sb::now()).
  [[nodiscard]] double started() const noexcept { return started_; }
  /// The job's processes on this host now (the starter and everything below it).
  [[nodiscard]] std::vector<JobProc> processes(bool with_rank = false) const;

 private:
  void take_status(int timeout_ms);
  void tell(char word) noexcept;
  pid_t pid_ = -1;
  int input_ = -1;  ///< the write end of the job's standard input (commands), or -1
  pid_t guardian_ = -1;
  int to_guardian_ = -1;
  int from_guardian_ = -1;
  bool exited_ = false;
  int status_ = 0;
  double term_sent_ = 0;
  double started_ = 0;
};

}  // namespace sb
