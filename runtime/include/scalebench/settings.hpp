#pragma once
/// @file settings.hpp
/// Every environment setting of scalebench, declared once: name, type, default, meaning and
/// validation live in one table (runtime/src/settings.cpp), documented in docs/settings.md and
/// recorded in a run's report (root attributes named after each variable that is set).
/// Settings change how scalebench starts and supervises jobs, never the work of a case: tuning
/// that changes a case's work is a `--param` and appears in the case id.
///
/// Every getter reads its variable on each call (a test may change it), validates it, and throws
/// sb::UsageError naming the variable and what it accepts on a bad value. Environment variables
/// that belong to other software (PATH, CUDA_VISIBLE_DEVICES, OMPI_MCA_*, the MPI starter's rank
/// variables) are read through environment_variable(), so that getenv appears in one file only.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace sb::settings {

enum class Type { boolean, integer, real, text, path, choice };

/// One row of the table.
struct Setting {
  std::string_view name;  ///< "SCALEBENCH_MPI_TUNING"
  Type type;              ///< how the value is parsed
  /// The value the getter uses when the variable is unset or empty ("" where the getter's
  /// caller works the value out, as `default_note` says).
  std::string_view default_value;
  std::string_view default_note;  ///< what an unset variable means, when the value alone does not
  std::string_view accepts;       ///< what a value may be ("0 or 1", "a program name or path")
  std::string_view meaning;       ///< one line for the docs and `scalebench info`
};

/// The default as docs/settings.md shows it: the value, its note, or both ("0 (measured)").
[[nodiscard]] std::string default_text(const Setting& s);

/// The whole table, in the order docs/settings.md lists it.
[[nodiscard]] const std::vector<Setting>& all();

/// The settings that are set in this process's environment, {name: value}, for the report.
[[nodiscard]] nlohmann::json set_in_environment();

/// Checks every setting that is set (throws sb::UsageError on the first bad one), so that a bad
/// value stops a run before its job starts.
void validate_all();

/// Any environment variable (other software's too): nullopt when unset.
[[nodiscard]] std::optional<std::string> environment_variable(const char* name);

// --- Launcher: how the MPI job is started and supervised -------------------------------------
/// SCALEBENCH_MPIEXEC: the MPI launcher for local, PBS, LSF and SGE jobs (default "mpiexec").
[[nodiscard]] std::string mpiexec();
/// SCALEBENCH_MPIEXEC_ARGS: extra words for mpiexec or srun, split on white space.
[[nodiscard]] std::vector<std::string> mpiexec_args();
/// SCALEBENCH_MPI_TUNING: the single-node OpenMPI/hwloc environment (default on).
[[nodiscard]] bool mpi_tuning();
/// SCALEBENCH_RANK_EXE: the scalebench-rank program (default: next to scalebench).
[[nodiscard]] std::string rank_exe();
/// SCALEBENCH_STARTUP_TIMEOUT_S: seconds from a job's start to every rank's start-up record
/// (default 300; 0: no limit).
[[nodiscard]] double startup_timeout_s();
/// SCALEBENCH_KEEP_WORKDIR: keep the run's work folder (job plans, record streams).
[[nodiscard]] bool keep_workdir();
/// SCALEBENCH_TEMPLATE_DIR: folder of the batch templates (default: installed or source tree).
[[nodiscard]] std::string template_dir();
/// SCALEBENCH_SBATCH, SCALEBENCH_QSUB, SCALEBENCH_BSUB: the submit programs.
[[nodiscard]] std::string submit_program(std::string_view scheduler);
/// SCALEBENCH_CACHE_DIR: where measured ceilings are cached (default $XDG_CACHE_HOME/scalebench
/// or ~/.cache/scalebench; "none" turns the cache off).
[[nodiscard]] std::string cache_dir();

// --- Node acceptance --------------------------------------------------------------------------
/// SCALEBENCH_TELEMETRY: sample clocks, power, temperatures, throttle reasons and CPU
/// interference while cases run (default on).
[[nodiscard]] bool telemetry();
/// SCALEBENCH_TELEMETRY_PERIOD_MS: milliseconds between readings while a repeat runs (default
/// 20; 0: a reading at each repeat's begin and end only).
[[nodiscard]] double telemetry_period_ms();
/// SCALEBENCH_TELEMETRY_GPU_MIN_MS: the least milliseconds between two readings of a GPU's
/// clocks, power and throttle reasons (default 10).
[[nodiscard]] double telemetry_gpu_min_ms();
/// SCALEBENCH_TELEMETRY_COUNTERS_S: the least seconds between two readings of a GPU's error
/// counters (default 1).
[[nodiscard]] double telemetry_counters_s();
/// SCALEBENCH_POWERCAP_DIR: where RAPL's powercap domains are read for CPU energy (default
/// /sys/class/powercap).
[[nodiscard]] std::string powercap_dir();
/// SCALEBENCH_REFERENCE_DIR: folder of the shipped reference files (default: installed or
/// source tree).
[[nodiscard]] std::string reference_dir();

// --- Reports --------------------------------------------------------------------------------
/// SCALEBENCH_REPORT_READ_TIMEOUT_S: seconds a report read may take (0: 60 s + 1 s per 20 MB).
[[nodiscard]] double report_read_timeout_s();
/// SCALEBENCH_HISTORY_LOCK_TIMEOUT_S: seconds a history writer waits for another one (120).
[[nodiscard]] double history_lock_timeout_s();

// --- Ranks ----------------------------------------------------------------------------------
/// SCALEBENCH_HOST_MEMORY_BYTES: host memory the memory check assumes (0: measured).
[[nodiscard]] double host_memory_bytes();
/// SCALEBENCH_GPU_ISOLATION: each GPU worker sees only its GPU (default on).
[[nodiscard]] bool gpu_isolation();
/// SCALEBENCH_EARLY_GPU: start the CUDA context before MPI_Init: "auto", "1" or "0".
[[nodiscard]] std::string early_gpu();
/// SCALEBENCH_NCCL_WARMUP: one all-reduce when a NCCL communicator is made connects its peers
/// (default off).
[[nodiscard]] bool nccl_warmup();
/// SCALEBENCH_GPU_WAIT: how a GPU worker's thread waits for its GPU: "yield" (default), "spin"
/// or "block" (cudaDeviceScheduleYield, Spin, BlockingSync).
[[nodiscard]] std::string gpu_wait();
/// SCALEBENCH_PARTICIPANTS: "auto" (default: a workload's plan_workers may use fewer of a
/// multi-* path's workers for a small problem) or "all".
[[nodiscard]] std::string participants();

}  // namespace sb::settings
