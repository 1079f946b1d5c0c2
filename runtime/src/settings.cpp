// The settings table (settings.hpp): the one place scalebench reads its environment.
#include "scalebench/settings.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "scalebench/error.hpp"
#include "scalebench/printable.hpp"

namespace sb::settings {
namespace {

using enum Type;

const std::vector<Setting> kTable = {
    {"SCALEBENCH_MPIEXEC", path, "mpiexec", "", "a program name or path",
     "MPI launcher that starts local, PBS, LSF and SGE jobs"},
    {"SCALEBENCH_MPIEXEC_ARGS", text, "", "(none)", "words separated by spaces",
     "extra arguments for mpiexec or srun, before the rank program"},
    {"SCALEBENCH_MPI_TUNING", boolean, "1", "", "0 or 1",
     "single-node jobs get OpenMPI's shared-memory transport and no GPU discovery in hwloc, "
     "unless the user set those variables (docs/architecture.md, Start-up)"},
    {"SCALEBENCH_RANK_EXE", path, "", "(next to scalebench)", "a path",
     "the scalebench-rank program the job starts"},
    {"SCALEBENCH_KEEP_WORKDIR", boolean, "0", "", "0 or 1",
     "keep the run's work folder (job plans, record streams, job logs) after the run"},
    {"SCALEBENCH_TEMPLATE_DIR", path, "", "(installed templates)", "a folder",
     "folder of the batch templates used by `scalebench submit`"},
    {"SCALEBENCH_SBATCH", path, "sbatch", "", "a program name or path",
     "the program `submit --scheduler slurm` calls"},
    {"SCALEBENCH_QSUB", path, "qsub", "", "a program name or path",
     "the program `submit --scheduler pbs` (and sge) calls"},
    {"SCALEBENCH_BSUB", path, "bsub", "", "a program name or path",
     "the program `submit --scheduler lsf` calls"},
    {"SCALEBENCH_STARTUP_TIMEOUT_S", real, "300", "", "seconds >= 0 (0: no limit)",
     "time an MPI job may take from its start to every rank's start-up record; then it is ended "
     "and the run exits 3 naming the ranks that never reported, by host"},
    {"SCALEBENCH_GPUS_PER_NODE", integer, "", "(detected)", "a whole number >= 0",
     "GPUs per node of an LSF or SGE allocation (those name no GPU count; the batch templates "
     "set it from --gpus-per-node)"},
    {"SCALEBENCH_CACHE_DIR", path, "", "$XDG_CACHE_HOME/scalebench", "a folder, or none",
     "where measured ceilings are cached per machine (none: measure in every run)"},
    {"SCALEBENCH_TELEMETRY", boolean, "1", "", "0 or 1",
     "sample GPU clocks, power, temperature and throttle reasons and the CPUs' clock and "
     "interference while cases run (docs/acceptance.md)"},
    {"SCALEBENCH_TELEMETRY_PERIOD_MS", real, "20", "", "milliseconds >= 0",
     "time between telemetry readings while a repeat runs (0: one reading at each repeat's begin "
     "and end only)"},
    {"SCALEBENCH_TELEMETRY_GPU_MIN_MS", real, "10", "", "milliseconds >= 0",
     "the least time between two readings of a GPU's clocks, power and throttle reasons: "
     "repeats shorter than this share readings (NVML calls are not free)"},
    {"SCALEBENCH_TELEMETRY_COUNTERS_S", real, "1", "", "seconds >= 0",
     "the least time between two readings of a GPU's ECC, retired-page and XID counters (they "
     "change rarely; some drivers take milliseconds to read them)"},
    {"SCALEBENCH_POWERCAP_DIR", path, "/sys/class/powercap", "", "a folder",
     "where the CPU packages' energy counters (RAPL's intel-rapl:N domains) are read for CPU "
     "cases' energy"},
    {"SCALEBENCH_REFERENCE_DIR", path, "", "(installed references)", "a folder",
     "folder of the reference files `scalebench run` uses besides --references"},
    {"SCALEBENCH_REPORT_READ_TIMEOUT_S", real, "0", "(60 s + 1 s per 20 MB)", "seconds >= 0",
     "time a report read may take before the reader is stopped (damaged files can hang HDF5)"},
    {"SCALEBENCH_HISTORY_LOCK_TIMEOUT_S", real, "120", "", "seconds >= 0",
     "time `history add` and `history import` wait for another writer of the same store before "
     "they stop with exit 3 (0: stop at once)"},
    {"SCALEBENCH_HOST_MEMORY_BYTES", real, "0", "(measured)", "bytes >= 0",
     "host memory the memory check assumes per node instead of MemAvailable and cgroup limits"},
    {"SCALEBENCH_GPU_ISOLATION", boolean, "1", "", "0 or 1",
     "each GPU worker narrows CUDA_VISIBLE_DEVICES to its own GPU before CUDA starts"},
    {"SCALEBENCH_EARLY_GPU", choice, "auto", "", "auto, 0 or 1",
     "start the CUDA context on a thread while MPI_Init runs (auto: when MPI loads no network "
     "stack that patches memory functions)"},
    {"SCALEBENCH_NCCL_WARMUP", boolean, "0", "", "0 or 1",
     "one all-reduce when a NCCL communicator is made (in the set-up of the first multi-gpu "
     "case on that many GPUs) connects its peers (for runs with --warmup 0)"},
    {"SCALEBENCH_PARTICIPANTS", choice, "auto", "", "auto or all",
     "workers of a multi-cpu or multi-gpu case: auto lets the workload use fewer when its "
     "problem is too small for more to help (the report says how many and why); all: every "
     "one of the path's workers"},
    {"SCALEBENCH_GPU_WAIT", choice, "yield", "", "yield, spin or block",
     "how a GPU worker's thread waits for its GPU (CUDA's device schedule flag): yield spins but "
     "gives the core to any other thread that wants it; spin never gives it up; block sleeps"},
};

const Setting& row(std::string_view name) {
  for (const auto& s : kTable)
    if (s.name == name) return s;
  throw Error(fmt::format("internal error: no setting {}", name));
}

[[noreturn]] void bad(const Setting& s, const std::string& value) {
  throw UsageError(fmt::format("{}='{}' is not valid: use {} (docs/settings.md)", s.name,
                               printable(value, 60), s.accepts));
}

std::optional<std::string> raw(std::string_view name) {
  return environment_variable(std::string(name).c_str());
}

bool boolean_value(std::string_view name) {
  const Setting& s = row(name);
  const auto v = raw(name);
  if (!v || v->empty()) return s.default_value == "1";
  if (*v == "1") return true;
  if (*v == "0") return false;
  bad(s, *v);
}

double real_value(std::string_view name) {
  const Setting& s = row(name);
  const auto v = raw(name);
  const std::string text = v && !v->empty() ? *v : std::string(s.default_value);
  char* end = nullptr;
  errno = 0;
  const double d = std::strtod(text.c_str(), &end);
  if (errno != 0 || end == text.c_str() || *end != '\0' || !std::isfinite(d) || d < 0) bad(s, text);
  return d;
}

std::string text_value(std::string_view name) {
  const auto v = raw(name);
  if (!v || v->empty()) return std::string(row(name).default_value);
  for (const char c : *v)
    if (static_cast<unsigned char>(c) < 0x20 && c != '\t') bad(row(name), *v);
  return *v;
}

void check(const Setting& s) {
  const auto v = raw(s.name);
  if (!v || v->empty()) return;
  switch (s.type) {
    case boolean:
      (void)boolean_value(s.name);
      break;
    case integer:
    case real:
      (void)real_value(s.name);
      break;
    case choice:
      if (s.name == "SCALEBENCH_EARLY_GPU") (void)early_gpu();
      if (s.name == "SCALEBENCH_GPU_WAIT") (void)gpu_wait();
      if (s.name == "SCALEBENCH_PARTICIPANTS") (void)participants();
      break;
    case text:
    case path:
      (void)text_value(s.name);
      break;
  }
}

}  // namespace

const std::vector<Setting>& all() {
  return kTable;
}

std::string default_text(const Setting& s) {
  if (s.default_note.empty()) return std::string(s.default_value);
  if (s.default_value.empty()) return std::string(s.default_note);
  return std::string(s.default_value) + " " + std::string(s.default_note);
}

std::optional<std::string> environment_variable(const char* name) {
  const char* v = std::getenv(name);  // the only getenv of scalebench
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

nlohmann::json set_in_environment() {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& s : kTable)
    if (const auto v = raw(s.name)) out[std::string(s.name)] = *v;
  return out;
}

void validate_all() {
  for (const auto& s : kTable) check(s);
}

std::string mpiexec() {
  return text_value("SCALEBENCH_MPIEXEC");
}

std::vector<std::string> mpiexec_args() {
  std::istringstream words(text_value("SCALEBENCH_MPIEXEC_ARGS"));
  std::vector<std::string> out;
  for (std::string w; words >> w;) out.push_back(w);
  return out;
}

bool mpi_tuning() {
  return boolean_value("SCALEBENCH_MPI_TUNING");
}

std::string rank_exe() {
  return text_value("SCALEBENCH_RANK_EXE");
}

bool keep_workdir() {
  return boolean_value("SCALEBENCH_KEEP_WORKDIR");
}

std::string template_dir() {
  return text_value("SCALEBENCH_TEMPLATE_DIR");
}

std::string submit_program(std::string_view scheduler) {
  if (scheduler == "slurm") return text_value("SCALEBENCH_SBATCH");
  if (scheduler == "lsf") return text_value("SCALEBENCH_BSUB");
  return text_value("SCALEBENCH_QSUB");
}

std::string cache_dir() {
  const std::string set = text_value("SCALEBENCH_CACHE_DIR");
  if (!set.empty()) return set == "none" ? std::string() : set;
  if (const auto xdg = environment_variable("XDG_CACHE_HOME"); xdg && !xdg->empty())
    return *xdg + "/scalebench";
  if (const auto home = environment_variable("HOME"); home && !home->empty())
    return *home + "/.cache/scalebench";
  return "";
}

bool telemetry() {
  return boolean_value("SCALEBENCH_TELEMETRY");
}

double telemetry_period_ms() {
  return real_value("SCALEBENCH_TELEMETRY_PERIOD_MS");
}

double telemetry_gpu_min_ms() {
  return real_value("SCALEBENCH_TELEMETRY_GPU_MIN_MS");
}

double telemetry_counters_s() {
  return real_value("SCALEBENCH_TELEMETRY_COUNTERS_S");
}

std::string powercap_dir() {
  return text_value("SCALEBENCH_POWERCAP_DIR");
}

std::string reference_dir() {
  return text_value("SCALEBENCH_REFERENCE_DIR");
}

double startup_timeout_s() {
  return real_value("SCALEBENCH_STARTUP_TIMEOUT_S");
}

double report_read_timeout_s() {
  return real_value("SCALEBENCH_REPORT_READ_TIMEOUT_S");
}

double history_lock_timeout_s() {
  return real_value("SCALEBENCH_HISTORY_LOCK_TIMEOUT_S");
}

double host_memory_bytes() {
  return real_value("SCALEBENCH_HOST_MEMORY_BYTES");
}

bool gpu_isolation() {
  return boolean_value("SCALEBENCH_GPU_ISOLATION");
}

std::string early_gpu() {
  const std::string v = text_value("SCALEBENCH_EARLY_GPU");
  if (v != "auto" && v != "0" && v != "1") bad(row("SCALEBENCH_EARLY_GPU"), v);
  return v;
}

bool nccl_warmup() {
  return boolean_value("SCALEBENCH_NCCL_WARMUP");
}

std::string gpu_wait() {
  const std::string v = text_value("SCALEBENCH_GPU_WAIT");
  if (v != "yield" && v != "spin" && v != "block") bad(row("SCALEBENCH_GPU_WAIT"), v);
  return v;
}

std::string participants() {
  const std::string v = text_value("SCALEBENCH_PARTICIPANTS");
  if (v != "auto" && v != "all") bad(row("SCALEBENCH_PARTICIPANTS"), v);
  return v;
}

}  // namespace sb::settings
