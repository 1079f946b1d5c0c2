#include <algorithm>
#include <cctype>
#include <map>
#include <string>

#include <fmt/format.h>

#include "energy_figures.hpp"
#include "format_util.hpp"
#include "scalebench/exec_path.hpp"
#include "scalebench/interference.hpp"
#include "scalebench/repeat_rule.hpp"
#include "scalebench/report.hpp"
#include "scalebench/stats.hpp"
#include "scalebench/verdicts.hpp"
#include "summary_util.hpp"

namespace sb::results {
namespace detail {

std::string canonical_path(const std::string& path) {
  const auto p = parse_exec_path(path);
  return p ? std::string(to_string(*p)) : path;
}

std::string case_device(const json& c) {
  const std::string d = str(c, "device");
  if (d == "cpu" || d == "gpu") return d;
  const auto p = parse_exec_path(str(c, "path"));
  if (p) return device_of(*p) == Device::gpu ? "gpu" : "cpu";
  return d;
}

std::string params_text(const json& params) {
  std::string out;
  if (!params.is_object()) return out;
  for (const auto& [k, v] : params.items()) {
    if (!out.empty()) out += ',';
    out += k + '=' + (v.is_string() ? v.get<std::string>() : v.dump());
  }
  return out;
}

std::string case_label(const json& c) {
  const std::string id = str(c, "id");
  if (!id.empty()) return id;
  return fmt::format("{}/{}/{}", str(c, "workload"), str(c, "path"), params_text(sub(c, "params")));
}

std::string parallel_label(const std::string& device, double workers, double threads) {
  if (!std::isfinite(workers) || workers < 1) return "-";
  const auto w = static_cast<long long>(workers);
  if (device == "gpu") return fmt::format("{} GPU{}", w, w == 1 ? "" : "s");
  const auto t = static_cast<long long>(std::isfinite(threads) && threads >= 1 ? threads : 1);
  return fmt::format("{}w\xC3\x97{}t", w, t);
}

std::string case_parallel_label(const json& c) {
  return parallel_label(case_device(c), num(c, "workers", 0.0), num(c, "threads_per_worker", 1.0));
}

CaseIdParts split_case_id(const std::string& id, const std::string& workload) {
  const std::string rest =
      !workload.empty() && id.rfind(workload + "/", 0) == 0 ? id.substr(workload.size() + 1) : id;
  CaseIdParts out;
  const std::size_t slash = rest.find('/');
  out.path = rest.substr(0, slash);
  if (slash == std::string::npos) return out;
  const std::string list = rest.substr(slash + 1);
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = list.find(',', start);
    const std::string p = list.substr(start, comma == std::string::npos ? comma : comma - start);
    if (!p.empty()) out.params.push_back(p);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::vector<std::string> shared_params(const std::vector<CaseIdParts>& ids) {
  std::vector<std::string> shared;
  if (ids.empty()) return shared;
  for (const auto& p : ids.front().params) {
    bool all = true;
    for (const auto& q : ids)
      all = all && std::find(q.params.begin(), q.params.end(), p) != q.params.end();
    if (all) shared.push_back(p);
  }
  return shared;
}

NoteParts split_note(const std::string& note) {
  const std::size_t open = note.find(" (");
  const std::size_t close = note.find("): ", open == std::string::npos ? 0 : open);
  if (open == std::string::npos || close == std::string::npos) return {note, {}, {}};
  return {note.substr(0, open), note.substr(open + 2, close - open - 2), note.substr(close + 3)};
}

std::vector<std::string> split_notes(const std::string& notes) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < notes.size()) {
    std::size_t end = notes.find("; ", start);
    if (end == std::string::npos) end = notes.size();
    if (end > start) out.push_back(notes.substr(start, end - start));
    start = end + 2;
  }
  return out;
}

bool validation_failed(const json& c) {
  const json& v = sub(c, "validation");
  if (!v.is_array()) return false;
  return std::any_of(v.begin(), v.end(), [](const json& e) {
    return e.is_object() && e.contains("pass") && e["pass"].is_boolean() && !e["pass"].get<bool>();
  });
}

double rate_unit_scale(const std::string& unit) {
  std::string u;
  for (char ch : unit)
    if (!std::isspace(static_cast<unsigned char>(ch))) u += static_cast<char>(std::tolower(ch));
  for (const char* suffix : {"/s", "ps"}) {
    const std::string s(suffix);
    if (u.size() > s.size() && u.compare(u.size() - s.size(), s.size(), s) == 0) {
      u.resize(u.size() - s.size());
      break;
    }
  }
  for (const char* base : {"bytes", "byte", "flops", "flop", "b"}) {
    const std::string b(base);
    if (u.size() >= b.size() && u.compare(u.size() - b.size(), b.size(), b) == 0) {
      u.resize(u.size() - b.size());
      break;
    }
  }
  static const std::map<std::string, double> prefixes{{"", 1.0},
                                                      {"k", 1e3},
                                                      {"m", 1e6},
                                                      {"g", 1e9},
                                                      {"t", 1e12},
                                                      {"p", 1e15},
                                                      {"ki", 1024.0},
                                                      {"mi", 1048576.0},
                                                      {"gi", 1073741824.0},
                                                      {"ti", 1099511627776.0}};
  const auto it = prefixes.find(u);
  return it != prefixes.end() ? it->second : 1.0;
}

double ceiling_median(const json& ceilings, const std::string& kind, int threads) {
  std::vector<double> v;
  if (!ceilings.is_array()) return kNaN;
  // CPU ceilings are measured per thread count: a case is held to the ones of its threads when
  // the report has them (older reports have one thread count per worker).
  bool have_threads = false;
  if (threads > 0)
    for (const auto& c : ceilings)
      have_threads = have_threads || (str(c, "kind") == kind && num(c, "threads") == threads);
  for (const auto& c : ceilings) {
    if (str(c, "kind") != kind) continue;
    if (have_threads && num(c, "threads") != threads) continue;
    const double x = num(c, "value") * rate_unit_scale(str(c, "unit"));
    if (std::isfinite(x) && x > 0) v.push_back(x);
  }
  return median(v);
}

}  // namespace detail

namespace {

using json = nlohmann::json;
using detail::kNaN;
using detail::num;
using detail::str;
using detail::sub;

struct Throughput {
  double value = kNaN;
  std::string unit;
};

Throughput throughput_of(const json& c, double median_s) {
  const json& work = sub(c, "work");
  const double units = num(work, "units");
  if (std::isfinite(units) && units > 0 && std::isfinite(median_s) && median_s > 0)
    return {units / median_s, str(work, "unit", "units") + "/s"};
  const json& metrics = sub(c, "metrics");
  const double t = num(metrics, "throughput");
  if (std::isfinite(t)) return {t, str(metrics, "throughput_unit")};
  return {};
}

struct Efficiency {
  double value = kNaN;
  std::string ceiling;       ///< kind of the ceiling used
  double per_device = kNaN;  ///< that kind's median, base units per second
  double total = kNaN;       ///< per_device times workers
  std::string unit;          ///< "B/s" or "flop/s"
};

/// detail::ceiling_median per (kind, threads), computed once: a merged fleet's report holds
/// every node's ceilings, and a scan of them per case grew with cases x nodes
/// (bench/merge_fleet.sh).
class CeilingMedians {
 public:
  explicit CeilingMedians(const json& ceilings) : ceilings_(ceilings) {}
  double operator()(const std::string& kind, int threads) {
    const auto key = std::make_pair(kind, threads);
    auto it = cache_.find(key);
    if (it == cache_.end())
      it = cache_.emplace(key, detail::ceiling_median(ceilings_, kind, threads)).first;
    return it->second;
  }

 private:
  const json& ceilings_;
  std::map<std::pair<std::string, int>, double> cache_;
};

Efficiency efficiency_of(const json& c, CeilingMedians& ceilings, double median_s, double workers) {
  // A workload that states its own efficiency (a bus bandwidth over its link's rate) is taken
  // at its word; its ceiling is not one of /system/ceilings.
  if (const json& m = sub(c, "metrics"); std::isfinite(num(m, "efficiency")))
    return {num(m, "efficiency"), str(m, "ceiling"), num(m, "ceiling_value"),
            num(m, "ceiling_value"), str(m, "ceiling_unit")};
  const json& work = sub(c, "work");
  const std::string bound = str(work, "bound");
  const double bytes = num(work, "bytes");
  const double flops = num(work, "flops");
  const double philox = num(work, "philox", 0.0);
  const bool by_bytes = bound == "bytes" || (bound.empty() && bytes > 0);
  const bool by_flops = !by_bytes && (bound == "flops" || (bound.empty() && flops > 0));
  if (!(by_bytes || by_flops) || !std::isfinite(median_s) || median_s <= 0) return {};
  const double amount = by_bytes ? bytes : flops;
  const bool gpu = detail::case_device(c) == "gpu";
  const int threads = gpu ? 0 : static_cast<int>(num(c, "threads_per_worker", 0.0));
  const double n = std::max(1.0, workers);
  // The floor: the work at the bounding ceiling, or the inputs' Philox calls at the device's
  // Philox rate when that takes longer (a case that generates its rows where it uses them).
  Efficiency e;
  double floor_s = 0;
  if (std::isfinite(amount) && amount > 0) {
    const std::string kind =
        gpu ? (by_bytes ? "copy_bandwidth" : "fp64_gemm") : (by_bytes ? "stream_triad" : "dgemm");
    const double per_device = ceilings(kind, threads);
    if (std::isfinite(per_device)) {
      e = {kNaN, kind, per_device, per_device * n, by_bytes ? "B/s" : "flop/s"};
      floor_s = amount / e.total;
    }
  }
  if (std::isfinite(philox) && philox > 0) {
    const std::string kind = gpu ? "philox" : "philox_simd";
    const double per_device = ceilings(kind, threads);
    if (!std::isfinite(per_device)) return {};  // which of the two bounds it is unknown
    if (philox / (per_device * n) > floor_s) {
      e = {kNaN, kind, per_device, per_device * n, "calls/s"};
      floor_s = philox / e.total;
    }
  }
  if (floor_s <= 0) return {};
  e.value = floor_s / median_s;
  return e;
}

/// The preset one size up, for the "too small" note ("" above the largest).
std::string larger_preset(const std::string& preset) {
  static const std::map<std::string, std::string> next{
      {"tiny", "small"}, {"small", "seed"}, {"seed", "large"}};
  const auto it = next.find(preset);
  return it != next.end() ? it->second : std::string();
}

/// Below this speedup a case is "slower than its reference"; between it and 1 the difference is
/// within the usual noise of short repeats.
constexpr double kSlowerBelow = 0.9;

/// The note of a case slower than its reference path (speedup below kSlowerBelow), "" otherwise:
/// multi-gpu against single-gpu (single-cpu when there is none), every other path against
/// single-cpu. Form: "slower than REF (RATIO): WHY" (detail::split_note).
std::string slower_note(const json& c, const json& row, const std::string& preset,
                        const Busier& busy) {
  const std::string path = str(row, "path");
  if (path == "single-cpu" || str(row, "status") != "ok") return {};
  std::string ref = "single-cpu";
  double s = num(row, "speedup_vs_single_cpu");
  if (path == "multi-gpu" && std::isfinite(num(row, "speedup_vs_single_gpu"))) {
    ref = "single-gpu";
    s = num(row, "speedup_vs_single_gpu");
  }
  if (!std::isfinite(s) || s >= kSlowerBelow) return {};
  // A case measured on a busy, throttled or slowed machine says nothing about its problem
  // size: the interference is named as the cause.
  if (busy.busy)
    return fmt::format(
        "slower than {} ({}): the machine was busy, throttled or slowed while it ran (its "
        "note), so this says nothing of how the case scales, rerun on a quiet machine to see "
        "that",
        ref, detail::human_ratio(s));
  const bool gpu = detail::case_device(c) == "gpu";
  const std::string what = detail::case_parallel_label(c);
  const std::string overhead = path == "single-gpu"
                                   ? "kernel launches, host-device copies and dispatch"
                               : gpu ? "dispatch and the exchange between GPUs"
                                     : "dispatch, messages and waits";
  const std::string bigger = larger_preset(preset);
  return fmt::format(
      "slower than {} ({}): at this size the work is too small for {} and the overhead ({}) "
      "dominates, {} shows the scaling",
      ref, detail::human_ratio(s), path == "single-gpu" ? "a GPU" : what, overhead,
      bigger.empty() ? std::string("larger inputs (--param)")
                     : "a larger preset (--preset " + bigger + ")");
}

/// The warning of a case above its ceiling (efficiency over 100%), "" otherwise. Form: "above
/// the measured ceiling (FIGURE): WHY".
std::string above_ceiling_note(const Efficiency& e, double workers) {
  if (!(e.value > 1.0)) return {};
  const std::string per = detail::human_rate(e.per_device, e.unit);
  const std::string ceiling =
      workers > 1 ? fmt::format("{} workers \xC3\x97 {} = {}", static_cast<long long>(workers), per,
                                detail::human_rate(e.total, e.unit))
                  : per;
  return fmt::format(
      "above the measured ceiling ({} of {} {}): the ceiling or the work count is off",
      detail::human_percent(e.value), e.ceiling, ceiling);
}

/// "2 of 5 repeats throttled (power cap), left out of the median" ("" when none was).
std::string throttled_note(const json& c) {
  const json& m = sub(c, "metrics");
  const double marked = num(m, "throttled_repeats", 0.0);
  if (!(marked > 0)) return {};
  std::string why;
  for (const auto& r : sub(c, "repeats"))
    if (why.empty()) why = str(r, "throttle_reason");
  const auto n = sub(c, "repeats").size();
  const bool left_out = num(m, "left_out_repeats", 0.0) > 0;
  return fmt::format("throttled repeats ({} of {}): {}{}", static_cast<long long>(marked), n,
                     why.empty() ? std::string("clock-event reasons") : why,
                     left_out ? ", left out of the median (--keep-throttled keeps them)"
                     : marked >= static_cast<double>(n) ? ", all of them, so all count"
                                                        : ", kept (--keep-throttled)");
}

/// "host stalls in 1 of 20 repeats (longest 2.1 ms: ...), left out of the median" ("" when
/// none was; runtime/src/host_stall.hpp).
std::string host_stall_note(const json& c) {
  const json& m = sub(c, "metrics");
  const double marked = num(m, "host_stalled_repeats", 0.0);
  if (!(marked > 0)) return {};
  double longest = 0;
  for (const auto& r : sub(c, "repeats")) longest = std::max(longest, num(r, "host_stall", 0.0));
  const auto n = sub(c, "repeats").size();
  const bool left_out = num(m, "left_out_repeats", 0.0) > 0;
  return fmt::format(
      "host stalls in {} of {} repeats (longest {:.2f} ms: a worker's CPU was away or slow, "
      "not the workload){}",
      static_cast<long long>(marked), n, longest * 1e3,
      left_out                           ? ", left out of the median (--keep-throttled keeps them)"
      : marked >= static_cast<double>(n) ? ", all of them, so all count"
                                         : ", kept (--keep-throttled)");
}

/// What a run's cases measured typically (the medians over its cases): a case's own clock or
/// vector probe below that counts as a slowed machine. Other processes and the cgroup quota
/// count from zero.
Interference run_reference(const json& cases) {
  std::vector<double> mhz, probe;
  for (const auto& c : cases) {
    const Interference i = read_interference(c, 0.0);
    if (std::isfinite(i.cpu_mhz) && i.cpu_mhz > 0) mhz.push_back(i.cpu_mhz);
    if (std::isfinite(i.vector_probe_s) && i.vector_probe_s > 0) probe.push_back(i.vector_probe_s);
  }
  Interference ref;
  ref.recorded = true;
  ref.other_cpu_fraction = 0;
  ref.throttled_share = 0;
  ref.cpu_mhz = median(mhz);
  ref.vector_probe_s = median(probe);
  return ref;
}

/// "measured on a busy machine (FIGURE): WHY" for a case that interference can explain, "".
std::string interference_note(const Busier& b) {
  if (!b.busy) return {};
  const std::string head = b.reason.find("other processes") != std::string::npos
                               ? "measured on a busy machine"
                           : b.reason.find("quota") != std::string::npos
                               ? "measured while the cgroup CPU quota held it back"
                               : "measured on a slowed machine";
  return fmt::format(
      "{} ({}, explains up to +{:.0f}% of its time): its time says more about the machine "
      "than about the code, rerun on a quiet machine",
      head, b.reason, 100.0 * b.explains);
}

/// "median within +-32.9% after 100 repeats, not the +-1% asked for (stopped by max-repeats)"
/// for a `--repeats auto` case that stopped before its median was known well enough, "".
std::string auto_repeats_note(const json& c, double spread) {
  const json& st = sub(c, "repeat_stop");
  const std::string reason = str(st, "reason");
  if (reason != "max-repeats" && reason != "max-time") return {};
  const double target = num(st, "target_spread");
  const double got = std::isfinite(num(st, "spread")) ? num(st, "spread") : spread;
  if (!std::isfinite(got) || (std::isfinite(target) && got <= target)) return {};
  return fmt::format(
      "median not known to the target (\u00b1{:.1f}% after {} repeats{}): --repeats auto stopped "
      "by {}, more --max-time or --max-repeats, or a quieter machine, narrow it",
      100.0 * got, static_cast<long long>(num(st, "repeats", 0.0)),
      std::isfinite(target) ? fmt::format(", \u00b1{:.1f}% asked", 100.0 * target) : std::string(),
      reason);
}

std::string reference_key(const json& c) {
  return str(c, "workload") + '\n' + sub(c, "params").dump();
}

}  // namespace

nlohmann::json summarize(const nlohmann::json& model) {
  const json& cases = sub(model, "cases");
  CeilingMedians ceilings(sub(sub(model, "system"), "ceilings"));
  const std::string preset = str(sub(model, "attrs"), "preset");
  json rows = json::array();
  if (!cases.is_array()) return rows;

  struct Row {
    std::vector<double> totals;
    double median = kNaN;
    Throughput tp;
  };
  const Interference typical = run_reference(cases);
  std::vector<Row> pre(cases.size());
  std::map<std::string, double> single_cpu, single_gpu;  // reference throughput per key
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const json& c = cases[i];
    pre[i].totals = detail::kept_phase_times(c, "total");
    pre[i].median = median(pre[i].totals);
    pre[i].tp = throughput_of(c, pre[i].median);
    if (str(c, "status") != "ok" || !std::isfinite(pre[i].tp.value) || pre[i].tp.value <= 0)
      continue;
    const std::string path = detail::canonical_path(str(c, "path"));
    if (path == "single-cpu") single_cpu.emplace(reference_key(c), pre[i].tp.value);
    if (path == "single-gpu") single_gpu.emplace(reference_key(c), pre[i].tp.value);
  }

  // The worst verdict of each device record (node acceptance, verdicts.hpp).
  std::map<std::string, std::pair<std::string, std::string>> verdict_of;
  static const std::map<std::string, int> rank{
      {"not judged", 0}, {"ok", 1},   {"inefficient", 2}, {"slow", 3},
      {"throttled", 4},  {"busy", 5}, {"unhealthy", 6},   {"failed", 7}};
  for (const auto& v : verdicts_of(model)) {
    auto& slot = verdict_of[str(v, "record")];
    const std::string verdict = str(v, "verdict");
    if (slot.first.empty() || rank.count(verdict) == 0 ||
        (rank.count(slot.first) != 0 && rank.at(verdict) > rank.at(slot.first)))
      slot = {verdict, str(v, "reason")};
  }

  for (std::size_t i = 0; i < cases.size(); ++i) {
    const json& c = cases[i];
    const Row& p = pre[i];
    const double workers = num(c, "workers", 1.0);
    auto speedup = [&](const std::map<std::string, double>& ref) {
      const auto it = ref.find(reference_key(c));
      return (it == ref.end() || !std::isfinite(p.tp.value)) ? kNaN : p.tp.value / it->second;
    };
    const Efficiency eff = efficiency_of(c, ceilings, p.median, workers);
    double timed_s = 0;
    for (const double t : detail::phase_times(c, "total")) timed_s += std::isfinite(t) ? t : 0.0;
    const Busier busy = busier_than(read_interference(c, timed_s), typical);
    const double spread = p.totals.size() >= 2 ? median_spread(p.totals) : kNaN;
    json row;
    row["case"] = detail::case_label(c);
    row["workload"] = str(c, "workload");
    row["path"] = detail::canonical_path(str(c, "path"));
    row["workers"] = static_cast<std::int64_t>(num(c, "workers", 0.0));
    row["threads_per_worker"] = static_cast<std::int64_t>(num(c, "threads_per_worker", 0.0));
    row["status"] = str(c, "status", "unknown");
    row["repeats"] = static_cast<std::int64_t>(p.totals.size());
    row["median_s"] = p.median;
    row["min_s"] = min_of(p.totals);
    row["max_s"] = max_of(p.totals);
    row["stddev_s"] = stddev(p.totals);
    // The runtime's own cost (time outside the workers' phases); NaN for older reports.
    row["runtime_s"] = num(sub(c, "metrics"), "median_runtime_s", std::nan(""));
    row["throughput"] = p.tp.value;
    row["throughput_unit"] = p.tp.unit;
    row["speedup_vs_single_cpu"] = speedup(single_cpu);
    row["speedup_vs_single_gpu"] = speedup(single_gpu);
    row["efficiency"] = eff.value;
    row["ceiling"] = eff.ceiling;
    row["ceiling_value"] = eff.total;
    row["ceiling_unit"] = eff.unit;
    std::string notes = above_ceiling_note(eff, workers);
    if (const json& own = sub(sub(c, "metrics"), "notes"); own.is_array())
      for (const auto& n : own)
        if (n.is_string() && !n.get<std::string>().empty())
          notes += (notes.empty() ? "" : "; ") + n.get<std::string>();
    const std::string slower = slower_note(c, row, preset, busy);
    if (!slower.empty()) notes += (notes.empty() ? "" : "; ") + slower;
    const std::string throttled = throttled_note(c);
    if (!throttled.empty()) notes += (notes.empty() ? "" : "; ") + throttled;
    const std::string stalled = host_stall_note(c);
    if (!stalled.empty()) notes += (notes.empty() ? "" : "; ") + stalled;
    if (const std::string n = interference_note(busy); !n.empty())
      notes += (notes.empty() ? "" : "; ") + n;
    if (const std::string n = auto_repeats_note(c, spread); !n.empty())
      notes += (notes.empty() ? "" : "; ") + n;
    row["notes"] = notes;
    row["throttled_repeats"] =
        static_cast<std::int64_t>(num(sub(c, "metrics"), "throttled_repeats", 0.0));
    row["left_out_repeats"] =
        static_cast<std::int64_t>(num(sub(c, "metrics"), "left_out_repeats", 0.0));
    // Energy per answer: one timed repeat computes the case's answer once.
    const detail::EnergyFigures energy = detail::energy_figures(c);
    row["energy_j"] = energy.joules;
    row["power_w"] = energy.power_w;
    row["work_per_j"] = energy.work_per_j;
    row["work_per_j_unit"] = energy.work_unit;
    row["flop_per_j"] = energy.flop_per_j;
    row["energy_source"] = energy.unavailable.empty() ? energy.source : "unavailable";
    row["energy_unavailable"] = energy.unavailable;
    const auto v = verdict_of.find(detail::case_label(c));
    row["verdict"] = v != verdict_of.end() ? v->second.first : std::string();
    row["verdict_reason"] = v != verdict_of.end() ? v->second.second : std::string();
    row["spread"] = spread;
    row["interference"] = busy.busy ? busy.reason : std::string();
    row["interference_explains"] = busy.busy ? busy.explains : 0.0;
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace sb::results
