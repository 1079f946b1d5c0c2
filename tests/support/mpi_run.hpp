#pragma once
/// @file mpi_run.hpp
/// Helpers of the tests that start real processes: a shell command's exit code, and the MPI
/// starter as these tests call it (the test target defines SB_MPIEXEC, CMake's MPIEXEC_EXECUTABLE).

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace sb::test_support {

/// Runs `cmd` through the shell: its exit code, 128 when it did not exit.
inline int run(const std::string& cmd) {
  const int st = std::system(cmd.c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

#ifdef SB_MPIEXEC
/// "mpiexec --oversubscribe --bind-to none" (and --allow-run-as-root as root).
inline std::string mpiexec() {
  std::string m = SB_MPIEXEC;
  if (m.empty()) m = "mpiexec";
  m += " --oversubscribe --bind-to none";
  if (geteuid() == 0) m += " --allow-run-as-root";
  return m;
}
#endif

}  // namespace sb::test_support
