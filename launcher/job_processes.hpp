#pragma once
/// @file job_processes.hpp
/// The processes of an MPI job on this host, from the process table (/proc): its starter
/// (mpiexec, srun) and everything under it. OpenMPI puts each rank in a process group of its own,
/// so a job is found by descent, not by its process group. Used to end every process a job
/// left (job_guardian.hpp) and to say which rank is stopped or missing (job_runner.cpp).

#include <sys/types.h>

#include <string>
#include <vector>

namespace sb {

struct JobProc {
  pid_t pid = 0;
  pid_t ppid = 0;
  char state = '?';  ///< as /proc/PID/stat says: R, S, D, T (stopped), t, Z, ...
  std::string comm;  ///< the program's name
  int rank = -1;     ///< the MPI rank its starter gave it (OMPI_COMM_WORLD_RANK, ...); -1: none
};

/// Every process below `root` (not `root` itself), parents before their children. `with_rank`
/// reads each one's environment for its rank (only a process of this user's can be read).
[[nodiscard]] std::vector<JobProc> processes_below(pid_t root, bool with_rank = false);

}  // namespace sb
