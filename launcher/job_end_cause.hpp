#pragma once
/// @file job_end_cause.hpp
/// Why an MPI job ended, in words: which rank ended and how (its signal by name: "rank 1 on
/// node1 was killed by SIGKILL"), and whether the kernel's OOM killer did it - the memory
/// cgroups of the job's processes on this host count OOM kills (v1 memory.oom_control's
/// oom_kill, v2 memory.events'), so do the whole machine (/proc/vmstat) and SLURM's job step
/// ("Detected 1 oom_kill event"): a count that rose while the job ran is the kernel's word,
/// no dmesg needed.

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <map>
#include <string>

namespace sb {

/// OOM-kill counters of the memory cgroups (and their ancestors) that a job's processes on this
/// host are in, taken when first seen.
class OomWatch {
 public:
  OomWatch();
  /// Adds the memory cgroups of process `pid` (counted from now on).
  void note(pid_t pid);
  /// "" when no counter rose; else what rose ("memory cgroup /sbtest (limit 256 MiB) counted 1
  /// OOM kill").
  [[nodiscard]] std::string kills_since() const;

 private:
  std::map<std::string, std::int64_t> start_;  ///< counter file -> its count when noted
  std::int64_t machine_start_ = -1;            ///< /proc/vmstat's oom_kill then
};

/// The job's end in words: the starter's wait status, the rank that ended it and how (from the
/// starter's last lines `log_tail`), and "killed by the OOM killer (...)" when `oom` says so.
[[nodiscard]] std::string describe_job_end(int status, const std::deque<std::string>& log_tail,
                                           const OomWatch& oom);

/// "; the limit on processes and threads, ulimit -u, is 3" when this user's limit is low enough
/// to stop an MPI job from starting its threads (root's is not enforced); "" otherwise.
[[nodiscard]] std::string process_limit_hint();

/// "SIGKILL" for 9 ("signal 70" for a number without a name).
[[nodiscard]] std::string signal_abbrev(int sig);

}  // namespace sb
