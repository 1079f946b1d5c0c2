#pragma once
/// @file run_command.hpp
/// `scalebench run`: plans the cases, checks everything that can be checked before a job
/// starts, runs the cases in MPI jobs (job_runner.hpp) and writes the report after every case.

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace sb {

/// Registers `run` on `app`; its callback stores the command's exit code in `exit_code`.
/// `argv` is the whole command line (recorded in the report, and used to say how to resume).
void add_run_command(CLI::App& app, int& exit_code, const std::vector<std::string>& argv);

/// The scalebench-rank executable next to this program (or SCALEBENCH_RANK_EXE).
[[nodiscard]] std::string rank_executable();

}  // namespace sb
