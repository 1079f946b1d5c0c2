// Parts of a case record shared by the ways of running a case (case_record.hpp).
#include "case_record.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "host_stall.hpp"
#include "scalebench/job_plan.hpp"
#include "scalebench/stats.hpp"
#include "scalebench/utc_time.hpp"

namespace sb::detail {

nlohmann::json record_head(const CaseSpec& spec) {
  return {{"type", "case"},
          {"index", spec.index},
          {"id", spec.id},
          {"workload", spec.workload},
          {"path", std::string(to_string(spec.path))},
          {"params", spec.params.to_json()},
          {"preset", spec.preset},
          {"device", device_of(spec.path) == Device::gpu ? "gpu" : "cpu"},
          {"workers", spec.workers},
          {"threads_per_worker", 0},
          {"warmup", spec.warmup},
          {"status", "ok"},
          {"message", ""},
          {"started_utc", utc_now()}};
}

std::vector<Check> CrossCheckReferences::check(const CaseSpec& spec, const Workload& wl,
                                               const Fingerprint& fp, const std::string& label) {
  std::vector<Check> out;
  const std::string key = spec.workload + "|" + spec.params.canonical();
  if (auto it = refs_.find(key); it != refs_.end()) {
    for (Check c : wl.cross_check(it->second.second, fp)) {
      c.name = "cross:" + c.name;
      c.detail += " (vs " + it->second.first + ")";
      out.push_back(std::move(c));
    }
  } else {
    refs_.emplace(key, std::make_pair(label, fp));
  }
  return out;
}

void TaskEvents::add(int r, int w, const TaskOutcome& o) {
  repeat.push_back(r);
  worker.push_back(w);
  task.push_back(o.task);
  phase.push_back(o.phase);
  start.push_back(o.start);
  end.push_back(o.end);
  bytes.push_back(o.bytes);
}

nlohmann::json TaskEvents::to_json() const {
  nlohmann::json names = nlohmann::json::array();
  for (const Phase p : phase) names.push_back(std::string(to_string(p)));
  return {{"repeat", repeat}, {"worker", worker}, {"task", task},  {"phase", std::move(names)},
          {"start", start},   {"end", end},       {"bytes", bytes}};
}

nlohmann::json repeat_stop_record(const RepeatRule& rule, const RepeatStop& stop,
                                  std::size_t repeats) {
  nlohmann::json out = {{"reason", stop.reason},
                        {"repeats", static_cast<int>(repeats)},
                        {"spread", std::isfinite(stop.spread) ? stop.spread : 0.0}};
  if (rule.adaptive()) {
    out["min_repeats"] = rule.min_repeats;
    out["max_repeats"] = rule.max_repeats;
    out["max_time_s"] = rule.max_time_s;
    out["target_spread"] = rule.target_spread;
  }
  return out;
}

void set_validation(nlohmann::json& rec, const std::vector<Check>& checks) {
  nlohmann::json validation = nlohmann::json::array();
  std::string failed;
  for (const auto& c : checks) {
    validation.push_back({{"name", c.name},
                          {"value", c.value},
                          {"limit", c.limit},
                          {"pass", c.pass},
                          {"detail", c.detail}});
    if (!c.pass && failed.empty())
      failed = fmt::format("validation failed: {} = {:.3g} exceeds {:.3g} ({})", c.name, c.value,
                           c.limit, c.detail);
  }
  rec["validation"] = validation;
  if (!failed.empty()) {
    rec["status"] = "failed";
    rec["message"] = failed;
  }
}

void set_work_and_metrics(nlohmann::json& rec, const Work& work, const std::vector<double>& totals,
                          const std::vector<double>& computes, const std::vector<bool>& throttled,
                          bool keep_throttled) {
  rec["work"] = {
      {"units", work.units},   {"unit", work.unit},
      {"bytes", work.bytes},   {"flops", work.flops},
      {"philox", work.philox}, {"bound", work.bound == Work::Bound::bytes ? "bytes" : "flops"}};
  std::size_t marked = 0, stalled = 0, either = 0;
  nlohmann::json none = nlohmann::json::array();
  nlohmann::json& reps =
      rec.contains("repeats") && rec["repeats"].is_array() ? rec["repeats"] : none;
  std::vector<bool> out(totals.size(), false);
  // A slow host costs a repeat in three ways: late notices, slow launches, or a slow probe
  // after the finishing step (host_stall.hpp); the largest counts.
  std::vector<double> per_task(reps.size(), 0.0), probe(reps.size(), 0.0);
  std::vector<int> submits(reps.size(), 0);
  for (std::size_t i = 0; i < reps.size(); ++i) {
    if (!reps[i].is_object()) continue;
    probe[i] = reps[i].value("probe_s", 0.0);
    if (!reps[i].contains("submits")) continue;
    per_task[i] = reps[i].value("submit_task_s", 0.0);
    submits[i] = reps[i].value("submits", 0);
  }
  const std::vector<double> slow = slow_submit_excess(per_task, submits);
  const std::vector<double> late = slow_probe_excess(probe, totals);
  for (std::size_t i = 0; i < reps.size(); ++i) {
    if (!reps[i].is_object()) continue;
    const double cost = std::max(slow[i], i < late.size() ? late[i] : 0.0);
    if (cost > reps[i].value("host_stall", 0.0)) reps[i]["host_stall"] = cost;
  }
  for (std::size_t i = 0; i < totals.size(); ++i) {
    const bool th = i < throttled.size() && throttled[i];
    // A repeat a host stall slowed (host_stall.hpp) is marked and left out like a throttled one.
    const bool st = i < reps.size() && reps[i].is_object() &&
                    host_stalled(reps[i].value("host_stall", 0.0), totals[i]);
    if (st) reps[i]["host_stalled"] = true;
    marked += th;
    stalled += st;
    out[i] = th || st;
    either += out[i];
  }
  // Every repeat marked: nothing would be left, so all count (the record says so).
  const bool leave_out = !keep_throttled && either > 0 && either < totals.size();
  std::vector<double> kept, kept_compute, kept_runtime;
  for (std::size_t i = 0; i < totals.size(); ++i) {
    if (leave_out && out[i]) continue;
    kept.push_back(totals[i]);
    if (i < computes.size()) kept_compute.push_back(computes[i]);
    if (i < reps.size() && reps[i].contains("runtime"))
      kept_runtime.push_back(reps[i]["runtime"].get<double>());
  }
  const double med = median(kept);
  const double med_compute = median(kept_compute);
  rec["metrics"] = {{"median_s", med},
                    {"throughput", work.units / med},
                    {"throughput_unit", work.unit + "/s"},
                    {"gbytes_per_s", work.bytes / med / 1e9},
                    {"gflops", work.flops / med / 1e9},
                    {"median_compute_s", med_compute},
                    {"compute_throughput", med_compute > 0 ? work.units / med_compute : 0.0},
                    {"throttled_repeats", marked},
                    {"host_stalled_repeats", stalled},
                    {"left_out_repeats", leave_out ? either : 0}};
  // The runtime's own cost: the repeat outside the busiest worker's phases.
  if (!kept_runtime.empty()) rec["metrics"]["median_runtime_s"] = median(kept_runtime);
}

}  // namespace sb::detail
