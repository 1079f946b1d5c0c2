#pragma once
/// @file report.hpp
/// The run report. In memory it is one JSON model (the records the scheduler streams, completed
/// by the launcher); on disk it is HDF5 (schema in docs/report-schema.md).
///
/// Model:
///   {
///     "attrs":   { "schema_version": 1, "scalebench_version", "git_sha", "command_line",
///                  "start_utc", "end_utc", "scheduler", "job_id", "nodes", "ranks", "workers",
///                  "preset", "status" },
///     "system":  { "nodes": [ {host, cpu_model, cores, numa_domains, memory_bytes, ...} ],
///                  "gpus":  [ {host, index, name, uuid, memory_bytes, sm_count, clock_mhz, ...} ],
///                  "versions": { "mpi", "hdf5", "blas", "cuda_runtime", "nccl", ... },
///                  "topology": "...", "ceilings": [ ... ] },
///     "startup": { "mpi_init_s", "cuda_init_s", "nccl_init_s", "total_s" },
///     "cases":   [ case records, see docs/architecture.md "Case record" ]
///   }

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalebench/error.hpp"

namespace sb::results {

inline constexpr int kSchemaVersion = 1;

/// A report that could not be written (full disk, quota, a folder turned read-only, an I/O
/// error): exit code 3, what() names the path, the step and the errno. The report on disk, if
/// any, is the last complete one.
class ReportWriteError : public EnvironmentError {
 public:
  ReportWriteError(const std::string& path, const std::string& step, int err);
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  [[nodiscard]] int error_number() const noexcept { return errno_; }

 private:
  std::string path_;
  int errno_ = 0;
};

/// Writes the whole model to `path` crash-safely: the file is built in memory, written to a
/// temporary file (in `temp_dir`, which must be on the same file system as `path`; default:
/// `path`.tmp-PID beside it), made durable (fsync) and renamed over `path`, so the file on disk
/// is always a complete, valid report. Computes /summary from the cases. Throws
/// sb::UsageError when `path` is not a regular file, ReportWriteError when writing fails.
void write_report(const nlohmann::json& model, const std::string& path,
                  const std::string& temp_dir = "");

/// Writes `model` over the existing report `path` in place, when its folder takes no new file
/// (turned read-only) but the file itself is writable: not atomic, so only for a last honest
/// status after write_report failed. Throws ReportWriteError.
void rewrite_report_in_place(const nlohmann::json& model, const std::string& path);

/// Reads a report written by write_report. Throws sb::UsageError (one line) when the file is
/// missing, not HDF5, truncated, or of another schema version.
[[nodiscard]] nlohmann::json read_report(const std::string& path);

/// read_report in a forked child process, the model passed back through a pipe: a file whose
/// damaged internals crash the HDF5 library itself (seen with fuzzed files and HDF5 1.10) gives
/// sb::UsageError naming the signal instead of killing the caller. For the command line
/// (report, compare, run --resume); same errors as read_report otherwise.
[[nodiscard]] nlohmann::json read_report_isolated(const std::string& path);

/// One summary row per case: median, min, max, stddev of total time, throughput, speedups vs
/// single-cpu and single-gpu of the same workload and parameters, efficiency vs ceiling.
[[nodiscard]] nlohmann::json summarize(const nlohmann::json& model);

/// Renders the report: "table" (terminal), "markdown", "csv" and "records" (the tidy export:
/// one row per case, or per timed repeat with `per_repeat`, parameters as param_<key> columns,
/// the run's host, commit and times on every row; records is a JSON array of those rows), "json"
/// (the whole model), "gbench-json", "html", "junit" (one test case per device of node
/// acceptance, verdicts.hpp).
/// `width`: the columns the "table" format fits (a narrow width shortens case ids, saying the
/// parameters they share once above the table, and hides the least important columns, naming
/// them); 0 gives the full table. The other formats ignore it. Throws sb::UsageError for an
/// unknown format.
[[nodiscard]] std::string format_report(const nlohmann::json& model, const std::string& format,
                                        std::size_t width = 0, bool per_repeat = false);

/// One report of several, with the name (file) it is shown under.
struct NamedReport {
  std::string name;
  nlohmann::json model;
};

/// Renders several reports one after another: "table" and "markdown" under a heading naming each
/// ("==> FILE <==", "# FILE"), "csv" and "records" as one table with a leading `report` column
/// (the union of the reports' columns), "json" as an array of the models (each with `report`
/// and `summary`). One report renders as format_report. Table, Markdown and HTML name each file
/// in the commands that finish an incomplete report (next_commands; the model's "file").
/// Throws sb::UsageError (check_report_request) for an unknown format or several reports with
/// "html", "gbench-json" or "junit".
[[nodiscard]] std::string format_reports(const std::vector<NamedReport>& reports,
                                         const std::string& format, std::size_t width = 0,
                                         bool per_repeat = false);

/// Throws sb::UsageError (one line) unless `format` can render `files` reports (and rows per
/// repeat, `per_repeat`): for the command line, before any file is read.
void check_report_request(std::size_t files, const std::string& format, bool per_repeat = false);

/// The columns a text table written to `fd` should fit: the terminal's width when `fd` is a
/// terminal (TIOCGWINSZ), else the COLUMNS environment variable when it holds a positive number,
/// else 0: no limit (a pipe, a file or a batch log keeps the full table).
[[nodiscard]] std::size_t output_width(int fd);

/// The planned cases (the report's /plan) that have no record: a run killed or stopped before
/// them. Their ids, in plan order; none for a report without a plan (older versions).
[[nodiscard]] std::vector<std::string> never_run_cases(const nlohmann::json& model);

/// What to run next for the report in `file` when it is not complete, one command a line:
/// `PROGRAM recover FILE` while its run has not ended (status "running": killed, or still
/// going), and the run's own command line with `--resume FILE` when a planned case never ran or
/// did not finish ok (PROGRAM: the program that command line started). Empty for a complete
/// report.
[[nodiscard]] std::vector<std::string> next_commands(const nlohmann::json& model,
                                                     const std::string& file);

/// A rate as the tables print it: "381 M draws/s", "12.4 GB/s" (SI prefix, three digits);
/// "-" for NaN. For the launcher's progress lines, so that both say the same figure alike.
[[nodiscard]] std::string format_rate(double value, const std::string& unit);

/// The names format_report accepts, in the order the command line lists them.
[[nodiscard]] const std::vector<std::string>& report_formats();

}  // namespace sb::results
