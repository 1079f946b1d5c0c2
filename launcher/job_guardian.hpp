#pragma once
/// @file job_guardian.hpp
/// The job never outlives its launcher, at any moment: each MPI job is started by a guardian, a
/// small process that the launcher forks first. The guardian is the sub-reaper of everything
/// under the job (ranks that mpiexec leaves behind become its children: OpenMPI puts each rank
/// in a process group of its own, so a SIGKILL'ed mpiexec orphans them), and it watches a pipe
/// from the launcher: when that pipe breaks without a word - the launcher was killed, kill -9
/// and the OOM killer included, before the scheduler rank runs or after - it sends SIGTERM to
/// every process below it, then SIGKILL to what is left after a grace period, and exits. When
/// the job's starter exits by itself, the guardian ends what it left behind the same way, then
/// tells the launcher the starter's wait status. The starter itself runs with
/// PR_SET_PDEATHSIG = SIGTERM (if the guardian dies, mpiexec ends its ranks), in a process group
/// of its own (a terminal's Ctrl-C reaches the launcher only). The scheduler rank's lifeline
/// (lifeline.hpp) stays as the second line, across hosts.

#include <sys/types.h>

#include <vector>

namespace sb::detail {

/// What the guardian is told over its pipe: end the job at once (SIGKILL to everything below
/// the guardian, ranks in process groups of their own too). The launcher sends SIGTERM itself.
constexpr char kGuardianKill = 'K';

/// The guardian's whole life, in the child the launcher forked. `from_launcher`: read end of
/// the launcher's pipe; `to_launcher`: first the starter's pid (a pid_t; minus errno when it could
/// not be started), then its wait status (an int). `in`, `out`: the starter's stdin and its
/// stdout and stderr. Never returns.
[[noreturn]] void run_guardian(int from_launcher, int to_launcher, int in, int out, char** argv,
                               char** envp) noexcept;

}  // namespace sb::detail
