#pragma once
/// @file run_command.hpp
/// `scalebench run` and `scalebench info`.

#include <string>

namespace CLI {
class App;
}

namespace sb {

/// Registers `run` on `app`; its callback stores the command's exit code in `exit_code`.
void add_run_command(CLI::App& app, int& exit_code, const std::string& command_line);

/// Registers `info`.
void add_info_command(CLI::App& app, int& exit_code);

/// The scalebench-rank executable next to this program (or SCALEBENCH_RANK_EXE).
[[nodiscard]] std::string rank_executable();

}  // namespace sb
