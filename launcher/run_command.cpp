#include "run_command.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "batch/allocation.hpp"
#include "case_plan.hpp"
#include "job_runner.hpp"
#include "progress.hpp"
#include "scalebench/error.hpp"
#include "scalebench/gpu_runtime.hpp"
#include "scalebench/job_plan.hpp"
#include "scalebench/report.hpp"
#include "scalebench/system_info.hpp"
#include "scalebench/version.hpp"
#include "suite_file.hpp"

namespace fs = std::filesystem;

extern "C" char* openblas_get_corename(void);

namespace sb {

struct RunOptions {
  std::string preset = "small";
  std::string workloads;
  std::string paths;
  std::string suite;
  int repeats = 5;
  int warmup = 1;
  std::string out;
  double case_timeout = 0;
  std::string resume;
  std::vector<std::string> params;
  bool require_gpu = false;
  bool no_ceilings = false;
  bool trace = false;
  // Which options were given on the command line (they override a suite file).
  CLI::Option* o_preset = nullptr;
  CLI::Option* o_workloads = nullptr;
  CLI::Option* o_paths = nullptr;
  CLI::Option* o_repeats = nullptr;
  CLI::Option* o_warmup = nullptr;
};

std::string rank_executable() {
  if (const char* env = std::getenv("SCALEBENCH_RANK_EXE"); env != nullptr && *env != '\0')
    return env;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  const fs::path dir = ec ? fs::current_path() : self.parent_path();
  for (const fs::path& p : {dir / "scalebench-rank", dir / ".." / "libexec" / "scalebench-rank"})
    if (access(p.c_str(), X_OK) == 0) return p.string();
  throw EnvironmentError(
      fmt::format("scalebench-rank not found next to {}: reinstall scalebench", self.string()));
}

namespace {

std::string find_on_path(const std::string& prog) {
  if (prog.find('/') != std::string::npos) return access(prog.c_str(), X_OK) == 0 ? prog : "";
  const char* path = std::getenv("PATH");
  std::string p = path != nullptr ? path : "/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= p.size()) {
    const auto colon = p.find(':', start);
    const std::string dir =
        p.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    const std::string cand = (dir.empty() ? "." : dir) + "/" + prog;
    if (access(cand.c_str(), X_OK) == 0) return cand;
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return "";
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

std::string default_report_path() {
  const std::string stamp = utc_now();  // 2026-11-22T10:00:00.123Z
  std::string compact;
  for (char c : stamp.substr(0, 19))
    if (c != '-' && c != ':') compact.push_back(c == 'T' ? '-' : c);
  return fmt::format("results/scalebench-{}.h5", compact);
}

/// Fails early (exit 2) when the report cannot be written, before any case runs.
void check_writable(const fs::path& out, bool create_parent) {
  fs::path dir = out.parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  if (create_parent) fs::create_directories(dir, ec);
  if (!fs::is_directory(dir))
    throw UsageError(fmt::format("cannot write report {}: folder {} does not exist", out.string(),
                                 dir.string()));
  if (fs::is_directory(out))
    throw UsageError(fmt::format("cannot write report {}: it is a folder", out.string()));
  if (access(dir.c_str(), W_OK) != 0)
    throw UsageError(fmt::format("cannot write report {}: folder {} is not writable", out.string(),
                                 dir.string()));
}

/// Debian's OpenBLAS 0.3.21 takes some AVX-512 Xeons for a Prescott and runs its slowest
/// kernels (DGEMM about 5x slower); the ranks inherit a corrected core type. A value the user
/// set is kept.
void fix_openblas_core_type() {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return;
  const char* core = openblas_get_corename();
  if (core == nullptr || std::string(core) != "Prescott") return;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) {
    setenv("OPENBLAS_CORETYPE", "SkylakeX", 0);
  } else if (__builtin_cpu_supports("avx2")) {
    setenv("OPENBLAS_CORETYPE", "Haswell", 0);
  }
}

int run_command(RunOptions& o, const std::string& command_line) {
  install_signal_handlers();
  fix_openblas_core_type();
  RunRequest req;
  if (!o.suite.empty()) load_suite(o.suite, req);
  if (o.suite.empty() || o.o_preset->count() > 0) req.preset = o.preset;
  if (o.suite.empty() || o.o_repeats->count() > 0) req.repeats = o.repeats;
  if (o.suite.empty() || o.o_warmup->count() > 0) req.warmup = o.warmup;
  if (o.o_workloads->count() > 0) {
    req.workloads = split_list(o.workloads);
    req.cases.clear();
    SB_EXPECTS(!req.workloads.empty(), "--workloads: no workload given");
  }
  if (o.o_paths->count() > 0) req.paths = parse_paths(o.paths);
  for (const auto& p : o.params) req.params.push_back(p);
  SB_EXPECTS(o.case_timeout >= 0,
             "--case-timeout must be 0 (none) or a positive number of seconds");
  std::vector<CaseSpec> cases = plan_cases(req);

  // --resume: keep the cases that finished ok in FILE, run the others.
  nlohmann::json previous;
  std::map<std::string, nlohmann::json> kept;
  if (!o.resume.empty()) {
    previous = results::read_report_isolated(o.resume);
    for (const auto& c : previous.value("cases", nlohmann::json::array()))
      if (c.value("status", "") == "ok") kept[c.value("id", "")] = c;
    if (o.out.empty()) o.out = o.resume;
  }
  const bool default_out = o.out.empty();
  if (default_out) o.out = default_report_path();
  check_writable(o.out, default_out);

  std::vector<CaseSpec> to_run;
  for (const auto& c : cases)
    if (kept.count(c.id) == 0) to_run.push_back(c);
  // Cases of the resumed report that this run does not plan (other options than the first
  // run's) are kept after the planned ones, so that resuming into the same file loses nothing.
  std::vector<nlohmann::json> unplanned;
  if (!o.resume.empty()) {
    std::set<std::string> planned;
    for (const auto& c : cases) planned.insert(c.id);
    for (const auto& c : previous.value("cases", nlohmann::json::array()))
      if (planned.count(c.value("id", "")) == 0) unplanned.push_back(c);
    if (!unplanned.empty())
      fmt::print(stderr,
                 "scalebench: --resume: {} case(s) of {} are not in this run's plan and are kept "
                 "as they are (give the first run's --preset/--workloads/--paths/--param to "
                 "resume them)\n",
                 unplanned.size(), o.resume);
  }

  // Where are we, and how is the job laid out?
  std::string gpu_why;
  const int gpus = visible_gpu_count(&gpu_why);
  const batch::Allocation alloc =
      batch::detect_allocation(batch::current_environment(), physical_cores(), gpus, host_name());
  const auto placement = batch::place_ranks(alloc);
  int alloc_gpus = 0;
  for (const auto& n : alloc.nodes) alloc_gpus += n.gpus;
  if (o.require_gpu && alloc_gpus == 0)
    throw EnvironmentError(fmt::format("--require-gpu: no GPU available ({})",
                                       gpu_why.empty() ? "none visible" : gpu_why));

  JobRunnerOptions jo;
  jo.rank_executable = rank_executable();
  jo.allocation = alloc;
  jo.placement = placement;
  jo.case_timeout_s = o.case_timeout;
  jo.measure_ceilings = !o.no_ceilings;
  jo.trace = o.trace;
  if (const char* m = std::getenv("SCALEBENCH_MPIEXEC"); m != nullptr && *m != '\0')
    jo.launch.mpiexec = m;
  if (const char* x = std::getenv("SCALEBENCH_MPIEXEC_ARGS"); x != nullptr) {
    std::istringstream words(x);
    for (std::string a; words >> a;) jo.launch.extra.push_back(a);
  }
  jo.launch.allow_run_as_root = geteuid() == 0;
  {
    const batch::LaunchPlan probe =
        batch::plan_launch(alloc, placement, jo.rank_executable, {}, jo.launch);
    if (probe.argv.empty() || find_on_path(probe.argv.front()).empty())
      throw EnvironmentError(fmt::format(
          "no MPI launcher: '{}' not found (install OpenMPI's mpiexec, e.g. Debian's openmpi-bin, "
          "or set SCALEBENCH_MPIEXEC)",
          probe.argv.empty() ? std::string("mpiexec") : probe.argv.front()));
  }
  const fs::path out_path = fs::absolute(o.out);
  const fs::path workdir = out_path.parent_path() / fmt::format(".scalebench-{}", getpid());
  fs::create_directories(workdir);
  jo.workdir = workdir.string();

  int workers = 0;
  for (const auto& p : placement)
    if (!p.scheduler) ++workers;
  nlohmann::json model = {
      {"attrs",
       {{"schema_version", results::kSchemaVersion},
        {"scalebench_version", version()},
        {"git_sha", git_sha()},
        {"command_line", command_line},
        {"start_utc", utc_now()},
        {"end_utc", ""},
        {"scheduler", alloc.scheduler},
        {"job_id", alloc.job_id},
        {"nodes", static_cast<int>(alloc.nodes.size())},
        {"ranks", static_cast<int>(placement.size())},
        {"workers", workers},
        {"preset", req.preset},
        {"status", "running"}}},
      {"system", previous.is_null() ? nlohmann::json::object()
                                    : previous.value("system", nlohmann::json::object())},
      {"startup", previous.is_null() ? nlohmann::json::object()
                                     : previous.value("startup", nlohmann::json::object())},
      {"cases", nlohmann::json::array()}};
  // Cases in plan order: kept ones from --resume, the others as they finish.
  std::map<int, nlohmann::json> by_index;
  for (const auto& c : cases)
    if (kept.count(c.id)) {
      auto rec = kept[c.id];
      rec["index"] = c.index;
      by_index[c.index] = rec;
    }
  auto rebuild_cases = [&] {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& [i, rec] : by_index) arr.push_back(rec);
    int next = static_cast<int>(cases.size());
    for (auto rec : unplanned) {
      rec["index"] = next++;
      arr.push_back(rec);
    }
    model["cases"] = arr;
  };

  const bool tty = isatty(STDERR_FILENO) != 0;
  Progress progress(static_cast<int>(to_run.size()), stderr, tty);
  fmt::print(stderr,
             "scalebench: {} cases ({} already done), {} on {} node(s), {} worker(s); report {}\n",
             to_run.size(), cases.size() - to_run.size(), alloc.scheduler, alloc.nodes.size(),
             workers, o.out);
  std::map<int, int> job_index;  // the job's case index -> the run's
  jo.on_record = [&](const nlohmann::json& rec) {
    progress.on_record(rec);
    const std::string type = rec.value("type", "");
    if (type == "start") {
      model["system"] = rec.at("system");
      model["startup"] = rec.at("startup");
      if (const auto topo = rec.at("system").value("topology", std::string()); !topo.empty())
        model["system"]["topology"] = topo;
      rebuild_cases();
      results::write_report(model, o.out);
    } else if (type == "case") {
      nlohmann::json c = rec;
      c.erase("type");
      by_index[c.value("index", 0)] = c;
      rebuild_cases();
      results::write_report(model, o.out);
    }
  };

  JobRunResult res;
  if (!to_run.empty()) res = run_jobs(to_run, jo);
  progress.finish();
  for (auto c : res.cases) {
    c.erase("type");
    by_index[c.value("index", 0)] = c;
  }
  rebuild_cases();
  bool any_failed = false;
  for (const auto& c : model["cases"]) {
    const std::string st = c.value("status", "");
    if (st == "failed" || st == "timeout") any_failed = true;
  }
  model["attrs"]["end_utc"] = utc_now();
  model["attrs"]["jobs"] = res.jobs;
  model["attrs"]["status"] = !res.stopped_by.empty() ? "stopped by " + res.stopped_by
                             : any_failed            ? "failed"
                                                     : "ok";
  results::write_report(model, o.out);
  std::error_code ec;
  if (std::getenv("SCALEBENCH_KEEP_WORKDIR") == nullptr) fs::remove_all(workdir, ec);

  std::fputs(results::format_report(model, "table").c_str(), stdout);
  std::fflush(stdout);
  fmt::print(stderr, "scalebench: report written to {}\n", o.out);
  return (any_failed || !res.stopped_by.empty()) ? kExitFailed : kExitOk;
}

}  // namespace

void add_run_command(CLI::App& app, int& exit_code, const std::string& command_line) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* run = app.add_subcommand("run", "Run the benchmark suite and write an HDF5 report");
  o->o_preset = run->add_option("--preset", o->preset, "tiny, small (default), seed or large");
  o->o_workloads =
      run->add_option("--workloads", o->workloads, "Comma-separated workloads (default: all)");
  o->o_paths = run->add_option("--paths", o->paths,
                               "Comma-separated paths: single-cpu,multi-cpu,single-gpu,multi-gpu "
                               "(aliases cpu1,cpuN,gpu1,gpuN; default: all)");
  run->add_option("--suite", o->suite, "Suite file (TOML)");
  o->o_repeats = run->add_option("--repeats", o->repeats, "Timed repeats per case (default 5)");
  o->o_warmup =
      run->add_option("--warmup", o->warmup, "Untimed warm-up repeats per case (default 1)");
  run->add_option("--out", o->out, "Report file (default results/scalebench-<UTC>.h5)");
  run->add_option("--case-timeout", o->case_timeout, "Seconds a case may take (0: no limit)");
  run->add_option("--resume", o->resume, "Run only the cases missing or failed in this report");
  run->add_option("--param", o->params, "workload.key=value (repeatable)");
  run->add_flag("--require-gpu", o->require_gpu, "Exit with code 3 when no GPU is available");
  run->add_flag("--no-ceilings", o->no_ceilings, "Skip measuring the bandwidth/GEMM ceilings");
  run->add_flag("--trace", o->trace,
                "Workloads print a timeline of their steps to stderr (diagnostics)");
  run->callback([o, &exit_code, command_line] { exit_code = run_command(*o, command_line); });
}

}  // namespace sb
