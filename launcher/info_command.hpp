#pragma once
/// @file info_command.hpp
/// `scalebench info`: what this machine (or allocation) offers and how a run would use it.

namespace CLI {
class App;
}

namespace sb {

/// Registers `info [--format table|json]`.
void add_info_command(CLI::App& app, int& exit_code);

}  // namespace sb
