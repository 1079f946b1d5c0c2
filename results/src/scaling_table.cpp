// The scaling table of a merged scaling study (scaling.hpp).
#include "scalebench/scaling.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "format_util.hpp"
#include "scalebench/stats.hpp"
#include "summary_util.hpp"

namespace sb::results {
namespace {

using json = nlohmann::json;
using detail::kNaN;
using detail::num;
using detail::str;
using detail::sub;

/// The case a record measures at every node count: `scaling_id` (a weak run's id at the first
/// node count), else the id it had before the merge told the node counts apart.
std::string scaling_key(const json& c) {
  if (const std::string s = str(c, "scaling_id"); !s.empty()) return s;
  if (const std::string p = str(c, "planned_id"); !p.empty()) return p;
  return detail::case_label(c);
}

double median_of(const json& c) {
  const double m = num(sub(c, "metrics"), "median_s");
  return std::isfinite(m) ? m : median(detail::kept_phase_times(c, "total"));
}

}  // namespace

nlohmann::json scaling_table(const nlohmann::json& model) {
  const json& cases = sub(model, "cases");
  if (!cases.is_array()) return nullptr;
  struct Point {
    long long nodes;
    const json* c;
  };
  std::map<std::string, std::vector<Point>> groups;  // by case, in first-seen order below
  std::vector<std::string> order;
  for (const auto& c : cases) {
    const long long nodes = static_cast<long long>(num(c, "scaling_nodes", 0));
    if (nodes <= 0) continue;
    const std::string path = detail::canonical_path(str(c, "path"));
    if (path != "multi-cpu" && path != "multi-gpu") continue;
    const std::string key = scaling_key(c);
    if (groups.count(key) == 0) order.push_back(key);
    groups[key].push_back({nodes, &c});
  }
  if (order.empty()) return nullptr;
  const std::string mode_attr = str(sub(model, "attrs"), "scaling_mode");
  const bool weak = mode_attr == "weak";
  json rows = json::array();
  for (const auto& key : order) {
    auto& pts = groups[key];
    std::stable_sort(pts.begin(), pts.end(),
                     [](const Point& a, const Point& b) { return a.nodes < b.nodes; });
    const Point* base = nullptr;
    for (const auto& p : pts)
      if (str(*p.c, "status") == "ok" && std::isfinite(median_of(*p.c)) && median_of(*p.c) > 0) {
        base = &p;
        break;
      }
    for (const auto& p : pts) {
      const json& c = *p.c;
      const double t = median_of(c);
      const double work = num(sub(c, "work"), "units");
      json row = {
          {"case", key},
          {"workload", str(c, "workload")},
          {"path", detail::canonical_path(str(c, "path"))},
          {"nodes", p.nodes},
          {"workers", static_cast<std::int64_t>(num(c, "workers", 0))},
          {"threads_per_worker", static_cast<std::int64_t>(num(c, "threads_per_worker", 0))},
          {"status", str(c, "status")},
          {"median_s", t},
          {"work_units", std::isfinite(work) ? work : kNaN},
          {"speedup", kNaN},
          {"ideal", kNaN},
          {"efficiency", kNaN},
          {"record", detail::case_label(c)}};
      if (base != nullptr && str(c, "status") == "ok" && std::isfinite(t) && t > 0) {
        const double t0 = median_of(*base->c);
        const double w0 = num(sub(*base->c, "work"), "units");
        double speedup = t0 / t;
        // Weak: work per second against the first node count's (the problem grew).
        if (weak && std::isfinite(work) && work > 0 && std::isfinite(w0) && w0 > 0)
          speedup = (work / t) / (w0 / t0);
        const double ideal = static_cast<double>(p.nodes) / static_cast<double>(base->nodes);
        row["speedup"] = speedup;
        row["ideal"] = ideal;
        row["efficiency"] = speedup / ideal;
      }
      rows.push_back(std::move(row));
    }
  }
  return {{"mode", mode_attr.empty() ? std::string("strong") : mode_attr}, {"rows", rows}};
}

std::string format_scaling_text(const nlohmann::json& model) {
  const json& s = sub(model, "scaling");
  const json& rows = sub(s, "rows");
  if (!rows.is_array() || rows.empty()) return {};
  const std::string mode = str(s, "mode", "strong");
  std::string out = fmt::format(
      "scaling ({}: {}):\n", mode,
      mode == "weak" ? "the problem grows with the nodes; speedup is work per second against the "
                       "fewest nodes, efficiency that over the node ratio"
                     : "the same problem on more nodes; speedup is the fewest nodes' time over "
                       "this one, efficiency that over the node ratio");
  std::vector<std::vector<std::string>> t{
      {"case", "nodes", "workers", "median", "speedup", "ideal", "efficiency", "status"}};
  std::string last;
  for (const auto& r : rows) {
    const std::string key = str(r, "case");
    const std::string device = str(r, "path") == "multi-gpu" ? "gpu" : "cpu";
    t.push_back({key == last ? std::string() : key,
                 fmt::format("{}", static_cast<long long>(num(r, "nodes", 0))),
                 detail::parallel_label(device, num(r, "workers"), num(r, "threads_per_worker")),
                 detail::human_seconds(num(r, "median_s")), detail::human_ratio(num(r, "speedup")),
                 std::isfinite(num(r, "ideal")) ? fmt::format("{:g}x", num(r, "ideal")) : "-",
                 detail::human_percent(num(r, "efficiency")), str(r, "status")});
    last = key;
  }
  return out + detail::render_aligned(t, {false, true, true, true, true, true, true, false});
}

}  // namespace sb::results
