// Workers' telemetry combined into the case record (case_telemetry.hpp).
#include "case_telemetry.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "case_energy.hpp"
#include "case_gpu_processes.hpp"
#include "scalebench/json_number.hpp"
#include "scalebench/repeat_telemetry.hpp"
#include "scalebench/stats.hpp"

namespace sb::detail {
namespace {

using json = nlohmann::json;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double finite_median(std::vector<double> v) {
  std::erase_if(v, [](double x) { return !std::isfinite(x); });
  return median(v);
}

/// Per node and repeat: others' CPU seconds, capacity (wall x CPUs), cgroup throttling.
struct NodeRepeat {
  std::vector<double> busy, wall, own, irq;
  double cpus = kNaN;
  double throttled = kNaN;
  bool any = false;
};

/// Members that are null in every row are left out (a CPU case has no GPU columns).
json drop_empty_columns(json rows) {
  std::map<std::string, bool> seen;
  for (const auto& r : rows)
    for (const auto& [k, v] : r.items()) seen[k] = seen[k] || !v.is_null();
  for (auto& r : rows)
    for (const auto& [k, has] : seen)
      if (!has) r.erase(k);
  return rows;
}

}  // namespace

int series_points(int workers) {
  return std::clamp(4096 / std::max(1, workers), 32, 512);
}

CaseTelemetry combine_telemetry(const std::vector<WorkerTelemetry>& workers,
                                const SchedulerCpu& scheduler, std::size_t repeats) {
  CaseTelemetry out;
  out.throttled.assign(repeats, false);
  out.reasons.assign(repeats, "");
  json rows = json::array();
  json series = json::object();
  std::map<std::string, std::vector<NodeRepeat>> nodes;
  // Per node: its kernel threads' CPU seconds per second of the case, one figure per worker.
  std::map<std::string, std::vector<double>> kernel_rate;
  std::vector<double> mhz_min, mhz_med, mhz_max;
  std::vector<double> probe(repeats, kNaN);  // per repeat: the slowest worker's vector probe
  std::vector<std::vector<std::string>> why(repeats);
  double period = kNaN;
  bool any = false;
  json read_s = json::object();  // the sampler's own cost: the longest read, the mean read
  for (const auto& w : workers) {
    const json reads = w.data.value("read_s", json::object());
    for (const auto& [src, v] : reads.items()) {
      json& r = read_s[src];
      if (!r.is_object()) r = json::object();
      r["max"] = std::max(r.value("max", 0.0), v.value("max", 0.0));
      r["mean"] = std::max(r.value("mean", 0.0), v.value("mean", 0.0));
      r["count"] = r.value("count", 0) + v.value("count", 0);
    }
    const json& reps = w.data.value("repeats", json::array());
    if (!reps.is_array() || reps.empty()) continue;
    any = true;
    period = w.data.value("period_s", kNaN);
    auto& node = nodes[w.host];
    node.resize(repeats);
    const json cpu_summary = w.data.value("summaries", json::object()).value("cpu", json());
    if (cpu_summary.is_object()) {
      const double k = number_or_nan(cpu_summary, "kernel_threads_cpu_s");
      const double s = number_or_nan(cpu_summary, "kernel_threads_wall_s");
      if (std::isfinite(k) && s > 0) kernel_rate[w.host].push_back(k / s);
    }
    const double cpus = w.data.value("cpus", kNaN);
    for (const auto& rj : reps) {
      const RepeatTelemetry r = repeat_telemetry_from_json(rj);
      if (r.repeat < 0 || static_cast<std::size_t>(r.repeat) >= repeats) continue;
      const auto i = static_cast<std::size_t>(r.repeat);
      const Throttle th = throttle_of(r);
      if (th.throttled) {
        out.throttled[i] = true;
        why[i].push_back(w.gpu >= 0 ? "GPU " + std::to_string(w.gpu) + ": " + th.reason
                                    : th.reason);
      }
      NodeRepeat& nr = node[i];
      nr.any = true;
      nr.busy.push_back(r.node_busy_s);
      nr.wall.push_back(r.wall_s);
      nr.own.push_back(r.own_cpu_s);
      nr.irq.push_back(r.node_irq_s);
      nr.cpus = cpus;
      if (std::isfinite(r.cgroup_throttled_s))
        nr.throttled = std::isfinite(nr.throttled) ? std::max(nr.throttled, r.cgroup_throttled_s)
                                                   : r.cgroup_throttled_s;
      if (std::isfinite(r.vector_probe_s) && !(probe[i] >= r.vector_probe_s))
        probe[i] = r.vector_probe_s;
      if (std::isfinite(r.cpu_mhz.min)) mhz_min.push_back(r.cpu_mhz.min);
      if (std::isfinite(r.cpu_mhz.median)) mhz_med.push_back(r.cpu_mhz.median);
      if (std::isfinite(r.cpu_mhz.max)) mhz_max.push_back(r.cpu_mhz.max);
      json row = {
          {"repeat", r.repeat}, {"worker", w.case_rank},     {"host", w.host},
          {"gpu", w.gpu},       {"throttled", th.throttled}, {"throttle_reason", th.reason}};
      row.update(rj);
      rows.push_back(std::move(row));
    }
    const json& s = w.data.value("series", json::object());
    const std::size_t n = s.contains("t") ? s["t"].size() : 0;
    for (const auto& [k, v] : s.items())
      for (const auto& x : v) series[k].push_back(x);
    for (std::size_t i = 0; i < n; ++i) series["worker"].push_back(w.case_rank);
  }
  if (!any) return out;

  // Interference per node, then the busiest node's.
  double worst_fraction = kNaN, worst_throttled = kNaN;
  std::string busiest;
  json per_repeat_other(repeats, nullptr);
  for (auto& [host, reps] : nodes) {
    // The node's busy time is counted in clock ticks (10 ms): one repeat of a few ms sees 0 or
    // a whole tick, so the others' time is the node's total less the job's, not a sum of
    // per-repeat differences clamped at zero (which made a quiet node "busy" for short repeats).
    // Interrupt handling and kernel threads are left out too: they mostly serve the job's own
    // I/O, memory and messages, and a busy marker is for other jobs sharing the node.
    // Kernel threads are read at the case's begin and end only, so their time is spread evenly.
    double kernel = 0;
    if (const auto k = kernel_rate.find(host); k != kernel_rate.end()) {
      kernel = finite_median(k->second);
      if (!std::isfinite(kernel)) kernel = 0;
    }
    double busy_total = 0, own_total = 0, capacity = 0, throttled = 0;
    bool have_throttled = false;
    for (std::size_t i = 0; i < reps.size(); ++i) {
      NodeRepeat& nr = reps[i];
      if (!nr.any) continue;
      double own = 0;
      for (double x : nr.own) own += std::isfinite(x) ? x : 0.0;
      if (host == scheduler.host && i < scheduler.own_cpu_s.size() &&
          std::isfinite(scheduler.own_cpu_s[i]))
        own += scheduler.own_cpu_s[i];
      const double wall = finite_median(nr.wall);
      double busy = finite_median(nr.busy);
      if (!std::isfinite(busy) || !std::isfinite(wall) || !(nr.cpus > 0)) continue;
      const double irq = finite_median(nr.irq);
      busy -= (std::isfinite(irq) ? irq : 0.0) + kernel * wall;
      const double other = std::max(0.0, busy - own);
      busy_total += busy;
      own_total += own;
      capacity += wall * nr.cpus;
      if (wall > 0) {
        const double f = std::clamp(other / (wall * nr.cpus), 0.0, 1.0);
        if (per_repeat_other[i].is_null() || per_repeat_other[i].get<double>() < f)
          per_repeat_other[i] = f;
      }
      if (std::isfinite(nr.throttled)) {
        throttled += nr.throttled;
        have_throttled = true;
      }
    }
    if (capacity > 0) {
      const double f = std::clamp((busy_total - own_total) / capacity, 0.0, 1.0);
      if (!std::isfinite(worst_fraction) || f > worst_fraction) {
        worst_fraction = f;
        busiest = host;
      }
    }
    if (have_throttled)
      worst_throttled =
          std::isfinite(worst_throttled) ? std::max(worst_throttled, throttled) : throttled;
  }
  out.interference = {{"other_cpu_fraction", finite_or_null(worst_fraction)},
                      {"cpu_mhz",
                       {{"min", finite_or_null(min_of(mhz_min))},
                        {"median", finite_or_null(median(mhz_med))},
                        {"max", finite_or_null(max_of(mhz_max))}}},
                      {"cgroup_throttled_s", finite_or_null(worst_throttled)},
                      {"vector_probe_s", finite_or_null(finite_median(probe))}};
  if (nodes.size() > 1 && !busiest.empty()) out.interference["busiest_host"] = busiest;
  out.interference.update(combine_gpu_processes(workers, repeats));
  out.energy_gpu = combine_energy(workers, true, repeats);
  out.energy_cpu = combine_energy(workers, false, repeats);
  for (auto& row : rows) {
    const auto i = row.value("repeat", 0);
    row["other_cpu_fraction"] = per_repeat_other[static_cast<std::size_t>(i)];
  }
  for (std::size_t i = 0; i < repeats; ++i) {
    std::string text;
    for (const auto& w : why[i]) text += (text.empty() ? "" : "; ") + w;
    out.reasons[i] = text;
  }
  out.telemetry = {{"period_s", finite_or_null(period)},
                   {"read_s", std::move(read_s)},
                   {"repeats", drop_empty_columns(std::move(rows))},
                   {"series", std::move(series)}};
  return out;
}

void add_telemetry(json& rec, const CaseTelemetry& t) {
  json& reps = rec["repeats"];
  for (std::size_t i = 0; i < reps.size() && i < t.throttled.size(); ++i) {
    reps[i]["throttled"] = static_cast<bool>(t.throttled[i]);
    if (t.throttled[i]) reps[i]["throttle_reason"] = t.reasons[i];
  }
  if (!t.telemetry.is_null()) rec["telemetry"] = t.telemetry;
  if (!t.interference.is_null()) rec["interference"] = t.interference;
  const json& energy = rec.value("device", std::string()) == "gpu" ? t.energy_gpu : t.energy_cpu;
  if (!energy.is_null()) rec["energy"] = energy;
}

}  // namespace sb::detail
