// history_trends: each case's series per machine, with its change points (history.hpp).
#include <fnmatch.h>

#include <map>
#include <string>
#include <utility>

#include "scalebench/history.hpp"

namespace sb::results {

std::vector<Trend> history_trends(const HistoryStore& store, const std::string& pattern,
                                  const ChangePointOptions& options) {
  std::vector<std::string> machines;  // in order of first appearance
  std::map<std::pair<std::string, std::string>, Trend> by_key;
  for (std::size_t i = 0; i < store.runs.size(); ++i) {
    const HistoryRun& run = store.runs[i];
    bool known = false;
    for (const auto& m : machines) known = known || m == run.machine;
    if (!known) machines.push_back(run.machine);
    for (const auto& c : run.cases) {
      if (!pattern.empty() && ::fnmatch(pattern.c_str(), c.key.c_str(), 0) != 0) continue;
      Trend& t = by_key[{run.machine, c.key}];
      if (t.key.empty()) {
        t.machine = run.machine;
        t.machine_text = run.machine_text;
        t.key = c.key;
        t.workload = c.workload;
        t.path = c.path;
        t.params = c.params;
        t.device = c.device;
      }
      if (c.status != "ok" || !(c.fast_s > 0)) continue;
      t.points.push_back({i, c.fast_s, c.median_s, c.repeats != 0 ? c.repeats : c.totals.size()});
    }
  }
  std::vector<Trend> out;
  for (const auto& m : machines) {
    for (auto& [key, t] : by_key) {
      if (key.first != m) continue;
      std::vector<double> values;
      for (const auto& p : t.points) values.push_back(p.fast_s);
      t.steps = detect_change_points(values, options);
      out.push_back(std::move(t));
    }
  }
  return out;
}

}  // namespace sb::results
