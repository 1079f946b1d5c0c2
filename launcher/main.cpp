// scalebench: the launcher. Parses the command line and dispatches to a subcommand; every error
// is one line on stderr and an exit code from docs/specification.md §7.7.
#include <csignal>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "batch/submit.hpp"
#include "cli_reference.hpp"
#include "cli_suggest.hpp"
#include "console.hpp"
#include "datagen_command.hpp"
#include "info_command.hpp"
#include "merge_command.hpp"
#include "plugin_options.hpp"
#include "recovery.hpp"
#include "run_command.hpp"
#include "scale_command.hpp"
#include "scalebench/error.hpp"
#include "scalebench/report_cli.hpp"
#include "scalebench/version.hpp"
#include "submit_check.hpp"
#include "thread_limit.hpp"

int main(int argc, char** argv) {
  // Output to a closed pipe (`scalebench run ... | head`) must not end a run: writes are
  // checked where they matter (console.hpp).
  std::signal(SIGPIPE, SIG_IGN);
  // A process limit that leaves no thread (ulimit -u): exit 3 with the cause (thread_limit.hpp).
  if (const std::string why = sb::thread_start_failure(); !why.empty()) {
    sb::sayf(stderr, "scalebench: {}\n", why);
    return sb::kExitEnvironment;
  }
  const std::vector<std::string> args(argv, argv + argc);
  int exit_code = sb::kExitOk;
  try {
    // Plugins first: the subcommands' help texts and lists name their workloads.
    sb::preload_plugins(args);
  } catch (const sb::Error& e) {
    sb::sayf(stderr, "scalebench: {}\n", sb::one_line(e.what()));
    return e.exit_code();
  }
  CLI::App app{"scalebench: benchmark suite and launcher for HPC nodes and clusters"};
  // Every subcommand inherits the formatter: help texts wrapped to 100 columns.
  app.formatter(std::make_shared<sb::HelpFormatter>());
  app.require_subcommand(1);
  app.footer(
      "The docs/*.md that the help texts name are in the source tree and, after cmake "
      "--install, in <prefix>/share/doc/scalebench; `man scalebench` lists every option.");
  const std::string version =
      std::string("scalebench ") + sb::version() + " (" + sb::git_sha() + ")";
  app.set_version_flag("--version", version);
  std::string command_line;
  for (const auto& a : args) command_line += (command_line.empty() ? "" : " ") + a;
  sb::add_run_command(app, exit_code, args);
  sb::batch::add_submit_command(app, exit_code, sb::check_submitted_run);
  sb::results::add_report_command(app, exit_code);
  sb::add_merge_command(*app.get_subcommand("report"), exit_code, args);
  sb::results::add_compare_command(app, exit_code);
  sb::results::add_history_command(app, exit_code);
  sb::add_scale_command(app, exit_code, args);
  sb::add_recover_command(app, exit_code);
  sb::add_info_command(app, exit_code);
  sb::add_datagen_command(app, exit_code, command_line);
  sb::add_completion_command(app, exit_code, version);
  // `scalebench SUBCOMMAND --version` answers too (before the subcommand's required options).
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    sub->set_version_flag("--version", version);
  app.get_subcommand("report")->get_subcommand("merge")->set_version_flag("--version", version);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    sb::sayf(stderr, "scalebench: {}\n", sb::explain_parse_error(app, e, "scalebench"));
    return sb::kExitUsage;
  } catch (const sb::Error& e) {
    sb::sayf(stderr, "scalebench: {}\n", sb::one_line(e.what()));
    return e.exit_code();
  } catch (const std::exception& e) {
    sb::sayf(stderr, "scalebench: internal error: {}\n", sb::one_line(e.what()));
    return sb::kExitFailed;
  }
  return exit_code;
}
