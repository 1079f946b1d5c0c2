/// Google Benchmark's JSON schema (what `--benchmark_format=json` writes), so tools such as
/// Google Benchmark's compare.py read scalebench results. One family per case; one
/// "iteration" entry per repeat (iterations = 1, times in ms); mean/median/stddev aggregates
/// when a case has 2 or more repeats. scalebench measures wall time only: cpu_time = real_time.
/// A timed case that is not ok (failed validation) carries error_occurred / error_message; a
/// case with notes (above its ceiling, slower than its reference) carries them as `label`.

#include <cmath>

#include <fmt/format.h>

#include "energy_figures.hpp"
#include "formats.hpp"
#include "scalebench/stats.hpp"
#include "summary_util.hpp"

namespace sb::results::detail {
namespace {

/// Google Benchmark's `caches` from the node's flat cache fields (l1d_cache_bytes,
/// l1d_cache_sharing, ...: docs/report-schema.md), else a `caches` array when one is recorded.
json caches_of(const json& node) {
  if (node.contains("caches") && node["caches"].is_array()) return node["caches"];
  struct Cache {
    const char* key;
    const char* type;
    int level;
  };
  static const Cache kinds[] = {
      {"l1d", "Data", 1}, {"l1i", "Instruction", 1}, {"l2", "Unified", 2}, {"l3", "Unified", 3}};
  json out = json::array();
  for (const auto& k : kinds) {
    const double size = num(node, (std::string(k.key) + "_cache_bytes").c_str());
    if (!(size > 0)) continue;
    const double sharing = num(node, (std::string(k.key) + "_cache_sharing").c_str(), 1.0);
    out.push_back({{"type", k.type},
                   {"level", k.level},
                   {"size", static_cast<std::int64_t>(size)},
                   {"num_sharing", static_cast<std::int64_t>(sharing > 0 ? sharing : 1.0)}});
  }
  return out;
}

json context_of(const json& model, const json& summary) {
  const json& a = sub(model, "attrs");
  const json& nodes = sub(sub(model, "system"), "nodes");
  const json& node = (nodes.is_array() && !nodes.empty()) ? nodes[0] : sub(model, "none");
  json ctx;
  ctx["date"] = str(a, "start_utc");
  ctx["host_name"] = str(node, "host");
  ctx["executable"] = "scalebench";
  ctx["num_cpus"] = static_cast<std::int64_t>(num(node, "cores", 0.0));
  ctx["mhz_per_cpu"] =
      static_cast<std::int64_t>(std::llround(num(node, "mhz_per_cpu", num(node, "cpu_mhz", 0.0))));
  ctx["cpu_scaling_enabled"] = false;
  ctx["caches"] = caches_of(node);
  // the load when the node was described (the run's start)
  json load = json::array();
  for (const char* k : {"load_avg_1m", "load_avg_5m", "load_avg_15m"})
    if (const double v = num(node, k); std::isfinite(v)) load.push_back(v);
  ctx["load_avg"] = load;
  ctx["library_build_type"] = "release";
  ctx["scalebench_version"] = str(a, "scalebench_version");
  ctx["git_sha"] = str(a, "git_sha");
  ctx["command_line"] = str(a, "command_line");
  ctx["preset"] = str(a, "preset");
  json notes = json::array();
  for (const auto& r : summary.is_array() ? summary : json::array())
    if (!str(r, "notes").empty())
      notes.push_back({{"name", str(r, "case")}, {"note", str(r, "notes")}});
  if (!notes.empty()) ctx["scalebench_notes"] = std::move(notes);
  return ctx;
}

/// Counters of one entry whose total time is `t` seconds (gbench writes counters as fields).
void add_counters(json& e, const json& c, double t) {
  const json& work = sub(c, "work");
  const double units = num(work, "units");
  const double bytes = num(work, "bytes");
  const double flops = num(work, "flops");
  if (!(t > 0)) return;
  if (units > 0) e["items_per_second"] = units / t;
  if (bytes > 0) e["bytes_per_second"] = bytes / t;
  if (flops > 0) e["flops_per_second"] = flops / t;
}

/// Energy counters of one entry: `joules` for its answer (one repeat), and per joule the work
/// (Google Benchmark's counters are plain numbers: `energy_j`, `power_w`, `items_per_joule`,
/// `flops_per_joule`).
void add_energy_counters(json& e, const json& c, double joules, double t) {
  if (!(joules > 0)) return;
  const json& work = sub(c, "work");
  e["energy_j"] = joules;
  if (t > 0) e["power_w"] = joules / t;
  if (num(work, "units") > 0) e["items_per_joule"] = num(work, "units") / joules;
  if (num(work, "flops") > 0) e["flops_per_joule"] = num(work, "flops") / joules;
}

}  // namespace

std::string format_gbench(const json& model, const json& summary) {
  json out;
  out["context"] = context_of(model, summary);
  json benchmarks = json::array();
  json not_run = json::array();
  const json& cases = sub(model, "cases");
  std::int64_t family = 0;
  for (std::size_t ci = 0; ci < (cases.is_array() ? cases.size() : 0); ++ci) {
    const json& c = cases[ci];
    const std::string name = case_label(c);
    // Google Benchmark prints a run's label next to it: the case's notes (above the ceiling,
    // slower than its reference) go there.
    const std::string notes = ci < summary.size() ? str(summary[ci], "notes") : std::string();
    const std::vector<double> totals = phase_times(c, "total");
    if (totals.empty()) {
      not_run.push_back(
          {{"name", name}, {"status", str(c, "status")}, {"message", str(c, "message")}});
      continue;
    }
    const auto n = static_cast<std::int64_t>(totals.size());
    const json& reps = sub(c, "repeats");
    const json& per_repeat_j = sub(sub(c, "energy"), "per_repeat_j");
    const EnergyFigures energy = energy_figures(c);
    std::int64_t r = 0;
    for (std::size_t ri = 0; ri < reps.size(); ++ri) {
      const json& rep = reps[ri];
      const double t = num(rep, "total");
      if (!std::isfinite(t)) continue;
      json e;
      e["name"] = name;
      e["family_index"] = family;
      e["per_family_instance_index"] = 0;
      e["run_name"] = name;
      e["run_type"] = "iteration";
      e["repetitions"] = n;
      e["repetition_index"] = r++;
      e["threads"] = 1;
      e["iterations"] = 1;
      e["real_time"] = t * 1e3;
      e["cpu_time"] = t * 1e3;
      e["time_unit"] = "ms";
      for (const char* phase : {"generate", "compute", "communicate"}) {
        const double p = num(rep, phase);
        if (std::isfinite(p)) e[std::string(phase) + "_ms"] = p * 1e3;
      }
      add_counters(e, c, t);
      if (ri < per_repeat_j.size() && per_repeat_j[ri].is_number())
        add_energy_counters(e, c, per_repeat_j[ri].get<double>(), t);
      if (!notes.empty()) e["label"] = notes;
      if (str(c, "status", "ok") != "ok") {  // Google Benchmark's fields for a failed run
        e["label"] = str(c, "status");
        e["error_occurred"] = true;
        e["error_message"] = str(c, "message").empty() ? str(c, "status") : str(c, "message");
      }
      benchmarks.push_back(std::move(e));
    }
    if (n >= 2) {
      const std::pair<const char*, double> aggs[] = {
          {"mean", mean(totals)}, {"median", median(totals)}, {"stddev", stddev(totals)}};
      for (const auto& [agg, t] : aggs) {
        json e;
        e["name"] = name + "_" + agg;
        e["family_index"] = family;
        e["per_family_instance_index"] = 0;
        e["run_name"] = name;
        e["run_type"] = "aggregate";
        e["repetitions"] = n;
        e["threads"] = 1;
        e["aggregate_name"] = agg;
        e["aggregate_unit"] = "time";
        e["iterations"] = n;
        e["real_time"] = t * 1e3;
        e["cpu_time"] = t * 1e3;
        e["time_unit"] = "ms";
        if (std::string(agg) != "stddev") add_counters(e, c, t);
        if (std::string(agg) == "mean" && std::isfinite(energy.joules))
          add_energy_counters(e, c, energy.joules, t);
        if (!notes.empty()) e["label"] = notes;
        benchmarks.push_back(std::move(e));
      }
    }
    ++family;
  }
  out["benchmarks"] = std::move(benchmarks);
  if (!not_run.empty()) out["context"]["scalebench_not_run"] = std::move(not_run);
  return out.dump(2) + '\n';
}

}  // namespace sb::results::detail
