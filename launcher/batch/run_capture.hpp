#pragma once
/// @file run_capture.hpp
/// Runs a program (no shell) and captures what it prints: the batch systems' commands (sbatch,
/// qsub, bsub, sinfo).

#include <string>
#include <vector>

namespace sb::batch {

struct Captured {
  int status = -1;  ///< exit status, or 128 + the signal that ended it
  std::string out;
  std::string err;
};

/// Runs argv (argv[0] a path), capturing stdout and stderr; its standard input is the file
/// `stdin_path` when given, else /dev/null. Throws sb::EnvironmentError when it cannot start.
[[nodiscard]] Captured run_capture(const std::vector<std::string>& argv,
                                   const std::string& stdin_path = "");

}  // namespace sb::batch
