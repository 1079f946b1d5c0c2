#pragma once
/// @file run_capture.hpp
/// Runs a program (no shell) and captures what it prints: the batch systems' commands (sbatch,
/// qsub, bsub, sinfo).

#include <map>
#include <string>
#include <vector>

namespace sb::batch {

struct Captured {
  int status = -1;  ///< exit status, or 128 + the signal that ended it
  std::string out;
  std::string err;
  bool timed_out = false;
};

/// Runs argv (argv[0] a path), capturing stdout and stderr; its standard input is the file
/// `stdin_path` when given, else /dev/null. `env`: variables set on top of this process's.
/// `timeout_s` > 0: past it, the program and what it started (its process group) are killed
/// and `timed_out` set. Throws sb::EnvironmentError when it cannot start.
[[nodiscard]] Captured run_capture(const std::vector<std::string>& argv,
                                   const std::string& stdin_path = "",
                                   const std::map<std::string, std::string>& env = {},
                                   double timeout_s = 0);

}  // namespace sb::batch
