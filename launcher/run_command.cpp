#include "run_command.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "ab_command.hpp"
#include "batch/allocation.hpp"
#include "case_estimate.hpp"
#include "case_plan.hpp"
#include "console.hpp"
#include "device_records.hpp"
#include "job_runner.hpp"
#include "plugin_options.hpp"
#include "progress.hpp"
#include "recovery.hpp"
#include "reference_files.hpp"
#include "report_path.hpp"
#include "run_folder.hpp"
#include "run_list.hpp"
#include "run_options.hpp"
#include "run_report.hpp"
#include "scalebench/case_forecast.hpp"
#include "scalebench/cpu_allowance.hpp"
#include "scalebench/error.hpp"
#include "scalebench/file_identity.hpp"
#include "scalebench/find_program.hpp"
#include "scalebench/gpu_runtime.hpp"
#include "scalebench/job_plan.hpp"
#include "scalebench/nvml_probe.hpp"
#include "scalebench/plugins.hpp"
#include "scalebench/report.hpp"
#include "scalebench/settings.hpp"
#include "scalebench/system_info.hpp"
#include "scalebench/utc_time.hpp"
#include "scalebench/verdicts.hpp"
#include "scalebench/version.hpp"
#include "stop_signals.hpp"

namespace fs = std::filesystem;

namespace sb {

std::string rank_executable() {
  if (const std::string set = settings::rank_exe(); !set.empty()) return set;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  const fs::path dir = ec ? fs::current_path() : self.parent_path();
  for (const fs::path& p : {dir / "scalebench-rank", dir / ".." / "libexec" / "scalebench-rank"})
    if (access(p.c_str(), X_OK) == 0) return p.string();
  throw EnvironmentError(
      fmt::format("scalebench-rank not found next to {}: reinstall scalebench", self.string()));
}

namespace {

/// The allocation this run is in and how its ranks are laid out.
struct Layout {
  batch::Allocation alloc;
  std::vector<batch::RankPlacement> placement;
  int workers = 0;
  int gpus = 0;  ///< GPUs of the allocation
  std::string gpu_why;
};

/// `nodes` > 0: the first that many nodes of the allocation only (a scaling study's job steps).
Layout detect_layout(int nodes) {
  Layout l;
  const int visible = visible_gpu_count(&l.gpu_why);
  l.alloc = batch::detect_allocation(batch::current_environment(), cpu_allowance().usable_cores,
                                     visible, host_name());
  if (nodes > 0) {
    if (static_cast<std::size_t>(nodes) > l.alloc.nodes.size())
      throw UsageError(fmt::format("--nodes {}: the allocation ({}) has {} node(s)", nodes,
                                   l.alloc.scheduler, l.alloc.nodes.size()));
    l.alloc.nodes.resize(static_cast<std::size_t>(nodes));
  }
  l.placement = batch::place_ranks(l.alloc);
  for (const auto& p : l.placement)
    if (!p.scheduler) ++l.workers;
  for (const auto& n : l.alloc.nodes) l.gpus += n.gpus;
  return l;
}

/// The command that runs what a stopped run did not: the same options with --resume OUT.
std::string resume_command(const std::vector<std::string>& argv, const std::string& out) {
  std::string cmd;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "--out" || a == "--resume") {
      ++i;
      continue;
    }
    if (a.rfind("--out=", 0) == 0 || a.rfind("--resume=", 0) == 0) continue;
    const bool plain = a.find_first_of(" \t\"'$`\\;&|<>()*?!#~") == std::string::npos;
    cmd += (cmd.empty() ? "" : " ") + (plain && !a.empty() ? a : "'" + a + "'");
  }
  return cmd + " --resume " + out;
}

/// The allocation as the forecasts see it (case_forecast.hpp): what the job would start here.
MachineShape machine_shape(const Layout& l) {
  MachineShape m;
  m.nodes = static_cast<int>(l.alloc.nodes.size());
  m.workers = l.workers;
  for (const auto& p : l.placement)
    if (!p.scheduler) m.threads = p.threads;
  m.gpus = l.gpus;
  for (const auto& n : l.alloc.nodes) m.gpus_per_node = std::max(m.gpus_per_node, n.gpus);
  // The scheduler's reason (startup_gather.cpp), so that the list says what the run records.
  m.no_gpu_reason = !cuda_built()       ? "no GPU: scalebench was built without CUDA"
                    : l.gpu_why.empty() ? "no GPU visible to the workers"
                                        : l.gpu_why;
  m.host_memory = available_host_memory();
  for (const auto& d : probe_gpus_nvml()) {
    const double bytes = d.value("memory_bytes", -1.0);
    if (bytes > 0 && (m.gpu_memory < 0 || bytes < m.gpu_memory)) m.gpu_memory = bytes;
  }
  m.automatic_participants = settings::participants() == "auto";
  return m;
}

/// "1 node (local)", "2 nodes (slurm job 42)".
std::string where_text(const Layout& l) {
  return fmt::format("{} node{} ({}{})", l.alloc.nodes.size(), l.alloc.nodes.size() == 1 ? "" : "s",
                     l.alloc.scheduler, l.alloc.job_id.empty() ? "" : " job " + l.alloc.job_id);
}

/// `run --list`: the cases and how they would run here, without running anything.
void print_plan(const std::vector<CaseSpec>& cases, const Layout& l, const RunReport& kept,
                const fs::path& out, const std::string& resumed, bool wide) {
  ListContext ctx;
  ctx.machine = machine_shape(l);
  ctx.where = where_text(l);
  if (cpu_allowance().limited()) ctx.cpus = cpu_allowance().summary();
  for (const auto& c : cases)
    if (kept.kept(c.id)) ctx.kept.push_back(c.id);
  ctx.host = host_name();
  std::vector<fs::path> extra{out};
  if (!resumed.empty()) extra.insert(extra.begin(), fs::absolute(resumed));
  const fs::path folder = fs::absolute(default_report_path(ctx.host, l.alloc.job_id)).parent_path();
  for (const auto& f : estimate_sources(folder, extra, 4)) {
    try {
      ctx.past_reports.push_back(results::read_report_isolated(f.string()));
    } catch (const std::exception&) {
      // a report that cannot be read gives no estimate
    }
  }
  ctx.width = wide ? 0 : results::output_width(STDOUT_FILENO);
  say(stdout, format_list(cases, ctx));
}

/// The distinct presets of the run, in plan order ("small, seed").
std::string presets_of(const std::vector<CaseSpec>& cases) {
  std::vector<std::string> seen;
  for (const auto& c : cases)
    if (std::find(seen.begin(), seen.end(), c.preset) == seen.end()) seen.push_back(c.preset);
  std::string out;
  for (const auto& p : seen) out += (out.empty() ? "" : ", ") + p;
  return out;
}

nlohmann::json run_attrs(const std::string& command_line, const Layout& l,
                         const std::vector<CaseSpec>& cases, const RunOptions& o) {
  nlohmann::json a = {{"schema_version", results::kSchemaVersion},
                      {"scalebench_version", version()},
                      {"git_sha", git_sha()},
                      {"command_line", command_line},
                      {"host", host_name()},
                      {"start_utc", utc_now()},
                      {"end_utc", ""},
                      {"scheduler", l.alloc.scheduler},
                      {"job_id", l.alloc.job_id},
                      {"nodes", static_cast<int>(l.alloc.nodes.size())},
                      {"ranks", static_cast<int>(l.placement.size())},
                      {"workers", l.workers},
                      {"preset", presets_of(cases)},
                      {"status", "running"}};
  if (!o.scaling.empty()) {  // one node count of a scaling study (results/.../scaling.hpp)
    a["scaling_mode"] = o.scaling;
    a["scaling_nodes"] = static_cast<int>(l.alloc.nodes.size());
    a["weak_scale"] = o.scale_factor;
  }
  const nlohmann::json set = settings::set_in_environment();  // items() must not outlive it
  for (const auto& [k, v] : set.items()) a[k] = v;
  if (!loaded_plugins().empty()) a["plugins"] = plugins_record();  // the /plugins table
  return a;
}

/// Killed runs that wrote reports in `dir`: those of `report` are folded in (`resume`) or
/// dropped (a fresh run with --force replaces the report: check_replace); the others are named
/// with the command that recovers them.
void handle_killed_runs(const fs::path& report, bool resume, nlohmann::json& previous) {
  const fs::path dir = report.parent_path();
  if (resume) {
    const Recovery r = recover_into(report, previous);
    if (!r.runs.empty() && !previous.is_null()) {
      results::write_report(previous, report.string());
      remove_recovered(report, r);
      sayf(stderr, "scalebench: recovered {} case(s) that a killed run of {} finished\n", r.cases,
           report.string());
    }
    return;
  }
  for (const auto& o : find_orphan_runs(dir)) {
    const StreamRecords held = read_stream_records(o.folder);
    if (held.cases.empty() && held.start.is_null()) {
      std::error_code ec;
      fs::remove_all(o.folder, ec);  // nothing in it to recover
    } else if (writes_report(o.owner, report)) {
      std::error_code ec;
      fs::remove_all(o.folder, ec);
      sayf(stderr,
           "scalebench: removed {} left by a killed run (pid {}) of the report this run "
           "replaces\n",
           o.folder.string(), o.owner.pid);
    } else if (!o.owner.report.empty()) {
      sayf(stderr,
           "scalebench: {} holds cases of a killed run of {}: `scalebench recover {}` puts them "
           "into that report\n",
           o.folder.string(), one_line(o.owner.report), one_line(o.owner.report));
    }
  }
  (void)remove_stale_temp_files(report);
}

/// Refuses an --out that names one of the run's input files (suite file, reference files,
/// plugins), --force or not: the run would destroy its own input.
void check_out_is_no_input(const fs::path& out, const RunOptions& o) {
  std::vector<std::pair<std::string, std::string>> inputs;
  if (!o.suite.empty()) inputs.emplace_back("the suite file", o.suite);
  for (const auto& r : o.references) inputs.emplace_back("the reference file", r);
  for (const auto& p : plugin_paths()) inputs.emplace_back("the plugin", p);
  for (const auto& [what, path] : inputs)
    if (same_file(out.string(), path))
      throw UsageError(fmt::format(
          "--out {} is {} {} itself: writing the report there would destroy it; choose another "
          "--out",
          one_line(out.string()), what, one_line(path)));
}

/// A fresh run (no --resume into `out`) replaces `out` only with --force: a report already
/// there, or cases of it that a killed run left in a work folder beside it, would be lost.
/// Batch scripts that re-run with a fixed --out pass --force (docs/reliability.md). Returns
/// whether a report is there to be replaced (said once this run holds the report).
bool check_replace(const fs::path& out, bool force) {
  refuse_if_written(out);  // --force cannot help there: say that first
  std::error_code ec;
  const bool exists = fs::exists(out, ec);
  std::string held;  // a killed run's work folder holding cases of `out`
  for (const auto& o : find_orphan_runs(out.parent_path())) {
    if (!writes_report(o.owner, out)) continue;
    const StreamRecords r = read_stream_records(o.folder);
    if (!r.cases.empty()) held = o.folder.string();
  }
  const std::string shown = one_line(out.string());
  if (!force) {
    if (!held.empty())
      throw UsageError(fmt::format(
          "--out {}: a killed run left finished cases of it in {}: `scalebench recover {}` puts "
          "them into the report (--force discards them and replaces it)",
          shown, one_line(held), shown));
    if (exists)
      throw UsageError(fmt::format(
          "--out {} exists: --force replaces it, `--resume {}` runs only its missing or failed "
          "cases into it, another --out keeps it",
          shown, shown));
  }
  return exists;
}

/// The run's summary table on stdout, its verdicts last. `--check` with many device records
/// prints the verdicts alone: one line when every device is ok.
void print_outcome(const nlohmann::json& model, const RunOptions& o, const fs::path& out) {
  const nlohmann::json verdicts = results::verdicts_of(model);
  constexpr std::size_t kDeviceRows = 32;
  std::size_t records = 0;  // device records: a GPU's host-link and health rows are not cases
  for (const auto& v : verdicts) {
    const std::string w = v.value("workload", std::string());
    records += w != "health" && w != "link";
  }
  if (o.check && records > kDeviceRows) {
    say(stdout, terminal_text(results::format_verdicts_text(verdicts)));
    sayf(stderr, "scalebench: report written to {} (`scalebench report {}` shows every case)\n",
         out.string(), out.string());
    return;
  }
  say(stdout, terminal_text(results::format_report(
                  model, "table", o.wide ? 0 : results::output_width(STDOUT_FILENO))));
  if (o.check && verdicts.empty())
    sayf(stderr,
         "scalebench: --check: no case judged a device (each-gpu, each-node and single-gpu "
         "cases do): exit {}, not a pass\n",
         results::kExitNotJudged);
  sayf(stderr, "scalebench: report written to {}\n", out.string());
}

/// After the report and its copy in $TMPDIR both failed: keeps the work folder, makes the
/// report on disk say so where its folder allows (a folder turned read-only leaves the file
/// writable), and says where the finished cases are and how to get them back.
std::string unsaved_message(const results::ReportWriteError& e, const std::string& why,
                            RunReport& report, RunFolder& folder, const fs::path& out) {
  folder.keep();
  const std::string recover = fmt::format("scalebench recover {}", one_line(out.string()));
  const int err = e.error_number();
  if (err == EACCES || err == EPERM)
    (void)report.mark_last_written(
        fmt::format("{}: {}; the cases that finished after this were "
                    "kept in {}: `{}`",
                    kUnsavedStatus, std::strerror(err), folder.path().string(), recover));
  int finished = 0;  // by this run's jobs (kept cases are in the report on disk)
  for (const auto& c : report.model()["cases"])
    finished += !c.value("started_utc", "").empty() && !report.kept(planned_id_of(c)) ? 1 : 0;
  return fmt::format(
      "{}; no copy could be written to the temporary folder either ({}); the last complete "
      "report on disk is kept, and the {} finished case(s) are in the record streams of {}: once "
      "the folder is writable again, `{}` puts them into the report",
      e.what(), why.empty() ? std::string("unknown error") : one_line(why), finished,
      folder.path().string(), recover);
}

int run_command(RunOptions& o, const std::vector<std::string>& argv) {
  std::string command_line;
  for (const auto& a : argv) command_line += (command_line.empty() ? "" : " ") + a;
  settings::validate_all();
  const RunRequest req = resolve_request(o);
  std::vector<std::string> notes;
  std::map<std::string, std::string> scaling_ids;  // weak scaling: each case's id at factor 1
  const std::vector<CaseSpec> cases = plan_cases(req, &notes, &scaling_ids);
  for (const auto& n : notes) sayf(stderr, "scalebench: {}\n", n);
  SB_EXPECTS(o.nodes >= 0 && o.nodes <= 100000,
             fmt::format("--nodes must lie between 1 and 100000 (got {})", o.nodes));
  const Layout layout = detect_layout(o.nodes);
  if (!o.list && layout.alloc.scheduler == "local" && cpu_allowance().limited()) {
    const MachineShape m = machine_shape(layout);
    sayf(stderr,
         "scalebench: this process may use {}: planning {} worker(s) \xC3\x97 {} thread(s)\n",
         cpu_allowance().summary(), m.workers, m.threads);
  }
  if (o.require_gpu && layout.gpus == 0)
    throw EnvironmentError(fmt::format("--require-gpu: no GPU available ({})",
                                       layout.gpu_why.empty() ? "none visible" : layout.gpu_why));

  // The report: checked (and the killed runs beside it handled) before anything starts.
  if (!o.resume.empty() && o.out.empty()) o.out = o.resume;
  const bool default_out = o.out.empty();
  const fs::path out = check_report_path(
      default_out ? default_report_path(host_name(), layout.alloc.job_id) : fs::path(o.out),
      default_out);
  check_out_is_no_input(out, o);
  nlohmann::json previous;
  bool replacing = false;  // an existing report that --force replaces
  if (!o.resume.empty()) {
    // The file, however spelled (./r.h5, a link): killed runs' owner files name it so.
    const fs::path resumed = canonical_file_path(o.resume);
    std::error_code ec;
    if (fs::exists(resumed, ec)) previous = results::read_report_isolated(resumed.string());
    if (!o.list) handle_killed_runs(resumed, true, previous);
    if (previous.is_null())
      throw UsageError(fmt::format("--resume {}: no such report", one_line(o.resume)));
    // --resume A --out B writes a new report B: B is replaced only with --force.
    if (!o.list && !same_file(out.string(), resumed.string()))
      replacing = check_replace(out, o.force);
  } else if (!o.list) {
    replacing = check_replace(out, o.force);
    handle_killed_runs(out, false, previous);
  }

  // Reference files are read before anything starts: a bad one is bad input (exit 2).
  results::ReferenceSet references = load_references(o.references);
  const std::string rank_exe = rank_executable();
  std::optional<AbPlan> ab;  // an A/B run: both sides checked before anything starts
  if (req.ab.enabled()) ab = plan_ab(req, cases, rank_exe, req.target_spread_set);
  JobRunnerOptions jo;
  jo.rank_executable = rank_exe;
  jo.allocation = layout.alloc;
  jo.placement = layout.placement;
  jo.case_timeout_s = o.case_timeout;
  jo.measure_ceilings = !o.no_ceilings;
  jo.trace = o.trace;
  jo.fresh_ceilings = o.fresh_ceilings;
  jo.telemetry_period_s = settings::telemetry() ? settings::telemetry_period_ms() / 1000.0 : -1.0;
  jo.telemetry_gpu_min_s = settings::telemetry_gpu_min_ms() / 1000.0;
  jo.telemetry_counters_s = settings::telemetry_counters_s();
  jo.keep_throttled = o.keep_throttled;
  jo.plugins = plugin_paths();
  jo.launch.mpiexec = settings::mpiexec();
  jo.launch.extra = settings::mpiexec_args();
  jo.launch.allow_run_as_root = geteuid() == 0;
  jo.launch.work_dir = (out.parent_path() / ".scalebench-probe").string();  // the real one below
  {
    const batch::LaunchPlan probe =
        batch::plan_launch(layout.alloc, layout.placement, rank_exe, {}, jo.launch);
    if (probe.argv.empty() || find_program(probe.argv.front()).empty())
      throw EnvironmentError(fmt::format(
          "no MPI launcher: '{}' not found (install OpenMPI's mpiexec, e.g. Debian's openmpi-bin, "
          "or set SCALEBENCH_MPIEXEC)",
          probe.argv.empty() ? std::string("mpiexec") : probe.argv.front()));
  }

  if (o.list) {
    RunReport kept(out.string(), "", {});
    kept.keep_previous(previous, cases);
    print_plan(cases, layout, kept, out, o.resume, o.wide);
    if (ab) print_ab_plan(*ab);
    return kExitOk;
  }

  RunFolder folder(out);  // one writer per report; removed however the run ends
  if (replacing) sayf(stderr, "scalebench: --force: replacing {}\n", one_line(out.string()));
  if (settings::keep_workdir()) folder.keep();
  jo.workdir = folder.path().string();
  jo.lifeline_path = folder.lifeline_path();
  jo.launch.work_dir = folder.path().string();

  RunReport report(out.string(), folder.path().string(), run_attrs(command_line, layout, cases, o));
  report.set_references(std::move(references));
  report.set_scaling_ids(std::move(scaling_ids));
  report.keep_previous(previous, cases);
  report.set_plan(cases);
  std::vector<CaseSpec> to_run;
  for (const auto& c : cases)
    if (!report.kept(c.id)) to_run.push_back(c);

  const bool tty = isatty(STDERR_FILENO) != 0;
  Progress progress(to_run, stderr, tty);
  sayf(stderr,
       "scalebench: {} case(s) to run ({} kept), {} on {} node(s), {} worker(s); report {}\n",
       to_run.size(), report.kept_count(), layout.alloc.scheduler, layout.alloc.nodes.size(),
       layout.workers, out.string());
  bool linked = false;
  auto write = [&] {
    report.write();
    if (!linked && default_out) link_latest(out);
    linked = true;
  };
  jo.on_tick = [&] { progress.tick(); };
  jo.on_record = [&](const nlohmann::json& rec) {
    progress.on_record(rec);
    const std::string type = rec.value("type", "");
    if (type == "start") {
      report.set_start(rec);
      write();
    } else if (type == "case") {
      report.add_case(rec);
      write();
    }
  };

  install_stop_signals();
  JobRunResult res;
  try {
    if (ab) {
      const AbRunResult r = run_ab(*ab, req, jo, report, progress, write);
      res.jobs = r.jobs;
      res.stop_signal = r.stop_signal;
      res.start = r.start[1];
    } else if (!to_run.empty()) {
      res = run_jobs(to_run, jo);
    }
    progress.finish();
    for (const auto& c : res.cases) report.add_case(c);
    if (!res.lost_nodes.empty()) {
      std::string lost;
      for (const auto& n : res.lost_nodes) lost += (lost.empty() ? "" : ",") + n;
      report.set_attr("lost_nodes", lost);
    }
    const bool failed = report.any_failed();
    report.finish(res.stop_signal != 0 ? "stopped by " + signal_name(res.stop_signal)
                  : failed             ? "failed"
                                       : "ok",
                  res.jobs);
    write();
  } catch (const results::ReportWriteError& e) {
    // The job has been ended (~JobProcess). Keep what finished: a copy in the temporary folder.
    progress.finish();
    report.finish(kUnsavedStatus, res.jobs);
    std::string why;
    const std::string fallback = report.save_fallback(&why);
    if (!fallback.empty())
      throw EnvironmentError(
          fmt::format("{}; the last complete report on disk is kept, and every finished case "
                      "({} of them) is in {}",
                      e.what(), report.model()["cases"].size(), fallback));
    // Neither the report nor a copy: the work folder stays, its record streams hold every case
    // the jobs finished, and `recover` folds them into the report once it can be written.
    throw EnvironmentError(unsaved_message(e, why, report, folder, out));
  }

  print_outcome(report.model(), o, out);
  if (ab) {
    const int gate = print_ab_outcome(report.model(), *ab, o.wide);
    return res.stop_signal != 0 ? stop_exit_code(res.stop_signal) : gate;
  }
  int unfinished = 0;  // failed, timed out, or not run because the run was stopped
  for (const auto& c : report.model()["cases"]) {
    const std::string st = c.value("status", "");
    unfinished += st == "failed" || st == "timeout" ||
                  (st == "skipped" && c.value("message", "").rfind("not run:", 0) == 0);
  }
  if (unfinished > 0)
    sayf(stderr, "scalebench: {} case(s) did not finish ok; to run them again: {}\n", unfinished,
         resume_command(argv, out.string()));
  if (!res.environment_error.empty()) {
    // A fresh job after a crash never started: the cases it held are recorded as not run.
    sayf(stderr, "scalebench: {}\n", one_line(res.environment_error));
    return kExitEnvironment;
  }
  if (res.stop_signal != 0)
    return report.any_failed() && stop_exit_code(res.stop_signal) == 0
               ? kExitFailed
               : stop_exit_code(res.stop_signal);
  const nlohmann::json verdicts = results::verdicts_of(report.model());
  const bool not_ok = o.check && results::count_not_ok(verdicts) > 0;
  if (report.any_failed() || not_ok) return kExitFailed;
  // --check that judged nothing of some device is no pass (docs/acceptance.md), unless the run
  // is one node of a fleet sweep: `report merge` judges it against the fleet.
  if (o.check && o.fleet_element && !verdicts.empty() &&
      !results::unjudged_devices(verdicts).empty()) {
    sayf(stderr,
         "scalebench: --check: {} device(s) without a peer on this node: `scalebench report "
         "merge` of the fleet's folder judges them\n",
         results::unjudged_devices(verdicts).size());
    return kExitOk;
  }
  if (o.check && (verdicts.empty() || !results::unjudged_devices(verdicts).empty())) {
    if (!verdicts.empty())
      sayf(stderr,
           "scalebench: --check: {} device(s) not judged (no peer of their model and no "
           "reference): exit {}, not a pass\n",
           results::unjudged_devices(verdicts).size(), results::kExitNotJudged);
    return results::kExitNotJudged;
  }
  return kExitOk;
}

}  // namespace

void add_run_command(CLI::App& app, int& exit_code, const std::vector<std::string>& argv) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* run = app.add_subcommand("run", "Run the benchmark suite and write an HDF5 report");
  add_run_options(*run, *o);
  run->callback([o, &exit_code, argv] { exit_code = run_command(*o, argv); });
}

}  // namespace sb
