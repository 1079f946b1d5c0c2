/// `history show --format json`: the runs, the machines and each case's trend with its steps, for
/// scripts, pandas (`pd.json_normalize`) and jq. Numbers in seconds; a missing value is null.
#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "history_formats.hpp"

namespace sb::results::history {
namespace {

using json = nlohmann::json;

json number(double v) {
  return std::isfinite(v) ? json(v) : json(nullptr);
}

json count(long long v) {
  return v > 0 ? json(v) : json(nullptr);
}

json run_json(const HistoryRun& r) {
  return {{"run", r.id},
          {"commit", r.commit},
          {"time_utc", r.time_utc},
          {"host", r.host},
          {"machine", r.machine},
          {"scheduler", r.scheduler},
          {"job_id", r.job_id},
          {"nodes", count(r.nodes)},
          {"workers", count(r.workers)},
          {"preset", r.preset},
          {"scalebench_version", r.scalebench_version},
          {"status", r.status},
          {"report", r.report},
          {"added_utc", r.added_utc}};
}

json trend_json(const HistoryStore& store, const Trend& t) {
  json params = json::object();
  for (const auto& [k, v] : history_params(t.params)) params[k] = v;
  json points = json::array();
  for (std::size_t i = 0; i < t.points.size(); ++i) {
    const TrendPoint& p = t.points[i];
    const HistoryRun& run = store.runs[p.run];
    points.push_back(
        {{"point", i + 1},
         {"run", run.id},
         {"commit", run.commit},
         {"time_utc", run.time_utc},
         {"fast_s", number(p.fast_s)},
         {"median_s", number(p.median_s)},
         {"repeats", p.repeats},
         {"change", i > 0 ? number(p.fast_s / t.points[i - 1].fast_s - 1.0) : json(nullptr)}});
  }
  json steps = json::array();
  for (const auto& s : t.steps) {
    const HistoryRun& run = store.runs[t.points[s.index].run];
    steps.push_back({{"point", s.index + 1},
                     {"run", run.id},
                     {"commit", run.commit},
                     {"time_utc", run.time_utc},
                     {"before_s", number(s.before)},
                     {"after_s", number(s.after)},
                     {"change", number(s.change)}});
  }
  return {{"machine", t.machine}, {"case", t.key},      {"workload", t.workload}, {"path", t.path},
          {"params", params},     {"device", t.device}, {"points", points},       {"steps", steps}};
}

}  // namespace

std::string json_text(const HistoryStore& store, const std::vector<Trend>& trends) {
  json runs = json::array(), machines = json::array();
  for (const auto& r : store.runs) {
    runs.push_back(run_json(r));
    bool known = false;
    for (auto& m : machines)
      if (m["machine"] == r.machine) {
        m["runs"] = m["runs"].get<long long>() + 1;
        known = true;
      }
    if (!known)
      machines.push_back({{"machine", r.machine}, {"description", r.machine_text}, {"runs", 1}});
  }
  json out = {{"kind", "scalebench history"}, {"runs", runs}, {"machines", machines}};
  out["trends"] = json::array();
  for (const auto& t : trends) out["trends"].push_back(trend_json(store, t));
  return out.dump(2) + "\n";
}

}  // namespace sb::results::history
