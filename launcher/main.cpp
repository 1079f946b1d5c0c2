// scalebench: the launcher. Parses the command line and dispatches to a subcommand; every error
// is one line on stderr and an exit code from docs/specification.md §7.7.
#include <cstdio>
#include <exception>
#include <string>

#include <CLI/CLI.hpp>

#include "batch/submit.hpp"
#include "datagen_command.hpp"
#include "run_command.hpp"
#include "scalebench/error.hpp"
#include "scalebench/report_cli.hpp"
#include "scalebench/version.hpp"

int main(int argc, char** argv) {
  std::string command_line;
  for (int i = 0; i < argc; ++i) command_line += (i ? " " : "") + std::string(argv[i]);
  int exit_code = sb::kExitOk;
  CLI::App app{"scalebench: benchmark suite and launcher for HPC nodes and clusters"};
  app.require_subcommand(1);
  app.set_version_flag("--version",
                       std::string("scalebench ") + sb::version() + " (" + sb::git_sha() + ")");
  sb::add_run_command(app, exit_code, command_line);
  sb::batch::add_submit_command(app, exit_code);
  sb::results::add_report_command(app, exit_code);
  sb::results::add_compare_command(app, exit_code);
  sb::add_info_command(app, exit_code);
  sb::add_datagen_command(app, exit_code, command_line);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "scalebench: %s (see scalebench --help)\n", e.what());
    return sb::kExitUsage;
  } catch (const sb::Error& e) {
    std::fprintf(stderr, "scalebench: %s\n", e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "scalebench: internal error: %s\n", e.what());
    return sb::kExitFailed;
  }
  return exit_code;
}
