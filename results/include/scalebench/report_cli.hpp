#pragma once
/// @file report_cli.hpp
/// The `report` and `compare` subcommands, for launcher/main.cpp (CLI11):
///
///   scalebench report  FILE.h5.. [--format table|markdown|csv|json|gbench-json|html] [--out F]
///                      [--wide]
///   scalebench compare BASELINE.h5 CURRENT.h5 [--threshold 5%] [--alpha 0.01]
///                      [--on-noisy pass|warn|fail] [--allow-missing] [--strict]
///                      [--format table|markdown|junit] [--out F]
///   scalebench history add STORE REPORT.h5.. [--commit SHA]
///   scalebench history show STORE [--case PATTERN] [--format table|markdown|json|html|openmetrics]
///   scalebench history report STORE [--case PATTERN] [--format ...] [--out F]
///   scalebench history import SOURCE STORE
/// (STORE: a SQLite file or a postgresql:// URI, history.hpp)
///
/// Each adds a subcommand to `app` whose callback does the work and sets `exit_code`
/// (report, history: 0; compare: 0, 1, 4 or 5, see compare.hpp). Errors are thrown as sb::Error
/// subclasses (bad file or option: sb::UsageError, exit code 2); the caller prints what().
/// `exit_code` must outlive app.parse().

namespace CLI {
class App;
}  // namespace CLI

namespace sb::results {

void add_report_command(CLI::App& app, int& exit_code);
void add_compare_command(CLI::App& app, int& exit_code);
void add_history_command(CLI::App& app, int& exit_code);

}  // namespace sb::results
