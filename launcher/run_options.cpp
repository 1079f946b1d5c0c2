#include "run_options.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "ab_request.hpp"
#include "plugin_options.hpp"
#include "scalebench/compare.hpp"
#include "scalebench/error.hpp"
#include "scalebench/plugins.hpp"
#include "scalebench/printable.hpp"
#include "suite_file.hpp"

namespace sb {
namespace {

/// `--repeats N` or `--repeats auto` with its limits (the command line's over a suite file's).
void resolve_repeats(const RunOptions& o, RunRequest& req) {
  if (o.suite.empty() || o.o_repeats->count() > 0) {
    if (o.repeats == "auto") {
      req.auto_repeats = true;
    } else {
      char* end = nullptr;
      errno = 0;
      const long v = std::strtol(o.repeats.c_str(), &end, 10);
      SB_EXPECTS(!o.repeats.empty() && *end == '\0' && errno == 0 && v >= 1 && v <= kMaxRepeats,
                 fmt::format("--repeats must be 'auto' or a count between 1 and {} (got '{}')",
                             kMaxRepeats, o.repeats));
      req.auto_repeats = false;
      req.repeats = static_cast<int>(v);
    }
  }
  const bool limits = o.o_min_repeats->count() + o.o_max_repeats->count() + o.o_max_time->count() +
                          o.o_target_spread->count() >
                      0;
  SB_EXPECTS(!limits || req.auto_repeats,
             "--min-repeats, --max-repeats, --max-time and --target-spread apply to "
             "--repeats auto only");
  if (o.o_min_repeats->count() > 0) req.min_repeats = o.min_repeats;
  if (o.o_max_repeats->count() > 0) req.max_repeats = o.max_repeats;
  if (o.o_max_time->count() > 0) req.max_time_s = o.max_time;
  if (o.o_target_spread->count() > 0) req.target_spread = o.target_spread;
  req.min_repeats_set = req.min_repeats_set || o.o_min_repeats->count() > 0;
  req.max_repeats_set = req.max_repeats_set || o.o_max_repeats->count() > 0;
  req.max_time_set = req.max_time_set || o.o_max_time->count() > 0;
  req.target_spread_set = req.target_spread_set || o.o_target_spread->count() > 0;
}

/// The A/B run's sides and options: the command line's items after a suite file's.
void resolve_ab(const RunOptions& o, RunRequest& req) {
  for (const auto& item : o.baseline) add_side_item(req.ab.baseline, item, "--baseline");
  for (const auto& item : o.current) add_side_item(req.ab.current, item, "--current");
  if (o.o_ab_block->count() > 0) req.ab.block = parse_ab_block(o.ab_block);
  if (o.o_ab_seed->count() > 0) req.ab.seed = o.ab_seed;
  if (o.o_threshold->count() > 0) req.ab.threshold = results::parse_threshold(o.threshold);
  if (o.o_alpha->count() > 0) {
    SB_EXPECTS(o.alpha > 0 && o.alpha < 1,
               fmt::format("--alpha {} must lie between 0 and 1", o.alpha));
    req.ab.alpha = o.alpha;
  }
  if (o.o_on_noisy->count() > 0) {
    (void)results::parse_noisy_policy(o.on_noisy);
    req.ab.on_noisy = o.on_noisy;
  }
  const bool gate_options = o.o_ab_block->count() + o.o_ab_seed->count() + o.o_threshold->count() +
                                o.o_alpha->count() + o.o_on_noisy->count() >
                            0;
  SB_EXPECTS(!req.ab.enabled() || o.resume.empty(),
             "--resume does not apply to an A/B run: both sides are measured side by side in "
             "one run; run it again");
  SB_EXPECTS(!gate_options || req.ab.enabled(),
             "--ab-block, --ab-seed, --threshold, --alpha and --on-noisy apply to an A/B run "
             "(--baseline or --current; docs/ci.md)");
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

}  // namespace

RunRequest resolve_request(const RunOptions& o) {
  RunRequest req;
  if (!o.suite.empty()) load_suite(o.suite, req);
  for (const auto& p : req.plugins) (void)load_plugin(p);  // after --plugin's (main.cpp)
  if (o.suite.empty() || o.o_preset->count() > 0) req.preset = o.preset;
  resolve_repeats(o, req);
  if (o.suite.empty() || o.o_warmup->count() > 0) req.warmup = o.warmup;
  if (o.o_workloads->count() > 0) {
    req.workloads = split_list(o.workloads);
    req.cases.clear();
    SB_EXPECTS(!req.workloads.empty(), "--workloads: no workload given");
  }
  if (o.o_paths->count() > 0) req.paths = parse_paths(o.paths);
  req.params = o.params;
  SB_EXPECTS(o.scaling.empty() || o.scaling == "strong" || o.scaling == "weak",
             fmt::format("--scaling '{}' is not strong or weak", one_line(o.scaling)));
  SB_EXPECTS(
      o.scale_factor == 1.0 || o.scaling == "weak",
      "--scale-factor grows the problem of a weak scaling study: give it with --scaling weak");
  SB_EXPECTS(std::isfinite(o.scale_factor) && o.scale_factor >= 1 && o.scale_factor <= 1e6,
             "--scale-factor must be a number from 1 to 1e6");
  req.scale_factor = o.scale_factor;
  resolve_ab(o, req);
  SB_EXPECTS(std::isfinite(o.case_timeout) && o.case_timeout >= 0 && o.case_timeout <= 1e7,
             "--case-timeout must be a finite number of seconds, at most 1e7 (0: no limit)");
  return req;
}

void add_run_options(CLI::App& run, RunOptions& o) {
  o.o_preset = run.add_option("--preset", o.preset, "tiny, small (default), seed or large");
  o.o_workloads = run.add_option(
      "--workloads", o.workloads,
      "Comma-separated workloads: " + workload_names() + " (default: all, in this order)");
  add_plugin_option(run);
  o.o_paths = run.add_option("--paths", o.paths,
                             "Comma-separated paths: single-cpu,multi-cpu,single-gpu,multi-gpu "
                             "(aliases cpu1,cpuN,gpu1,gpuN; default: these four), each-gpu, "
                             "each-node (every device on its own, docs/acceptance.md)");
  run.add_option("--suite", o.suite, "Suite file (TOML, docs/suite-files.md)");
  o.o_repeats = run.add_option(
      "--repeats", o.repeats,
      fmt::format("Timed repeats per case, 1-{} (default 5), or 'auto': as many as the median "
                  "needs (docs/ci.md)",
                  kMaxRepeats));
  o.o_min_repeats = run.add_option(
      "--min-repeats", o.min_repeats,
      fmt::format("--repeats auto: the fewest timed repeats (default {})", kAutoMinRepeats));
  o.o_max_repeats = run.add_option(
      "--max-repeats", o.max_repeats,
      fmt::format("--repeats auto: the most timed repeats (default {}; an A/B run: none)",
                  kAutoMaxRepeats));
  o.o_max_time = run.add_option(
      "--max-time", o.max_time,
      fmt::format("--repeats auto: seconds of timed repeats a case may take once it has "
                  "--min-repeats (default {:g})",
                  kAutoMaxTime));
  o.o_target_spread = run.add_option(
      "--target-spread", o.target_spread,
      fmt::format("--repeats auto: stop when the median's 95% interval is within this fraction "
                  "(default {:g})",
                  kAutoTargetSpread));
  o.o_warmup = run.add_option(
      "--warmup", o.warmup,
      fmt::format("Untimed warm-up repeats per case, 0-{} (default 1), and more until those "
                  "after the first took 50 ms (none with 0)",
                  kMaxWarmup));
  run.add_option("--out", o.out,
                 "Report file (default scalebench-reports/<host>-<UTC>-<job or pid>.h5)");
  run.add_flag("--force", o.force,
               "Replace the report --out names when it exists (default: refuse; --resume adds to "
               "it instead)");
  run.add_option("--case-timeout", o.case_timeout, "Seconds a case may take (0: no limit)");
  run.add_option("--resume", o.resume,
                 "Run only the cases missing or not ok in this report (and recover what a "
                 "killed run of it finished)");
  run.add_option("--param", o.params,
                 "workload.key=value; a comma list (a,b) or range (lo:hi[:step], lo:hi:*f) "
                 "runs one case per value (repeatable)");
  run.add_flag("--require-gpu", o.require_gpu, "Exit with code 3 when no GPU is available");
  run.add_flag("--no-ceilings", o.no_ceilings, "Skip measuring the bandwidth/GEMM ceilings");
  run.add_flag("--fresh-ceilings", o.fresh_ceilings,
               "Measure the ceilings anew instead of taking this machine's cached ones");
  run.add_flag(
      "--trace", o.trace,
      "Every repeat's timeline per worker, and the workloads' steps, to stderr (diagnostics)");
  run.add_flag("--wide", o.wide,
               "The final table with every column and whole case ids, whatever the terminal");
  run.add_flag("--check", o.check,
               "Node acceptance: exit 1 when a device's verdict is not ok, 5 when a device was not "
               "judged (docs/acceptance.md)");
  run.add_flag("--fleet-element", o.fleet_element,
               "One node of a fleet sweep (submit --fleet adds it): with --check, devices "
               "without a peer here are left to `report merge`, not exit 5");
  run.add_flag("--keep-throttled", o.keep_throttled,
               "Count repeats that ran throttled or host-stalled in the medians (default: left "
               "out)");
  run.add_option("--references", o.references,
                 "Reference file (TOML) of expected medians per device model (repeatable; "
                 "before the shipped ones)");
  run.add_option("--nodes", o.nodes,
                 "Run on the first N nodes of the allocation only (a scaling study's steps)");
  run.add_option("--scaling", o.scaling,
                 "strong or weak: this run is one node count of a scaling study (recorded for "
                 "`report merge`; docs/batch.md)");
  run.add_option("--scale-factor", o.scale_factor,
                 "With --scaling weak: grow every case's problem this many times by its "
                 "workload's rule");
  run.add_option("--baseline", o.baseline,
                 "A/B run: the baseline side, measured beside this run's cases in the same "
                 "job: rank=PATH, plugin=PATH, mpiexec=PATH, env:NAME=VALUE, "
                 "param:WORKLOAD.KEY=VALUE, label=TEXT (repeatable; docs/ci.md)")
      ->allow_extra_args(false);
  run.add_option("--current", o.current,
                 "A/B run: what differs on the current side (same items as --baseline)")
      ->allow_extra_args(false);
  o.o_ab_block = run.add_option("--ab-block", o.ab_block,
                                "A/B run: timed repeats per turn, or 'auto' (turns of about "
                                "0.1 s; default)");
  o.o_ab_seed = run.add_option("--ab-seed", o.ab_seed, "A/B run: seed of the turns' random order");
  o.o_threshold = run.add_option("--threshold", o.threshold,
                                 "A/B run: the gate's threshold, as compare's (default 5%)");
  o.o_alpha = run.add_option("--alpha", o.alpha,
                             "A/B run: 1 - confidence of the gate's interval (default 0.01)");
  o.o_on_noisy = run.add_option("--on-noisy", o.on_noisy,
                                "A/B run: noisy or inconclusive cases pass, warn (exit 5, "
                                "default) or fail");
  run.add_flag("--list,--dry-run", o.list,
               "Print the cases the run would run or skip here, why, and each one's estimated "
               "time and memory; run nothing");
}

}  // namespace sb
