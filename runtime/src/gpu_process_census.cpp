// Other processes on a GPU over a case (gpu_process_census.hpp).
#include "gpu_process_census.hpp"

#include <algorithm>
#include <cmath>

namespace sb::detail {
namespace {

using json = nlohmann::json;

json number(double v) {
  return std::isfinite(v) ? json(v) : json(nullptr);
}

double median_of(std::vector<double> v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

bool is_mps_server(const GpuProcess& p) {
  return p.name == "nvidia-cuda-mps-server" || p.name == "nvidia-cuda-mps";
}

void ProcessCensus::reset() {
  others_.clear();
  all_.clear();
  other_side_.clear();
  listed_ = any_listed_ = own_seen_ = any_process_ = false;
  why_.clear();
  readings_ = 0;
}

OthersReading ProcessCensus::add(const ProcessSnapshot& s, bool before) {
  OthersReading out;
  if (!before) ++readings_;
  if (!s.listed) {
    if (why_.empty()) why_ = s.why;
    return out;
  }
  any_listed_ = true;
  // A list without any of the job's pids while a worker holds a context on the GPU: NVML's pids
  // are of another namespace, and how many of them are others is unknown.
  bool foreign = !own_.empty() && !s.processes.empty();
  for (const auto& p : s.processes) foreign = foreign && own_.count(p.pid) == 0 && !p.other_side;
  out.count = foreign ? out.count : 0;
  for (const auto& p : s.processes) {
    any_process_ = any_process_ || !p.other_side;
    const bool own = own_.count(p.pid) != 0;
    own_seen_ = own_seen_ || own;
    auto note = [&](std::map<unsigned, Seen>& into) {
      Seen& seen = into[p.pid];
      // A pid seen again keeps the name it had; a new reading may lack the utilization.
      if (seen.last.name.empty() || !p.name.empty()) seen.last = p;
      if (std::isfinite(p.memory_bytes))
        seen.memory_max = std::isfinite(seen.memory_max) ? std::max(seen.memory_max, p.memory_bytes)
                                                         : p.memory_bytes;
      if (std::isfinite(p.sm_util) && !before) seen.sm.push_back(p.sm_util);
      if (before) {
        seen.before = true;
      } else {
        ++seen.readings;
      }
    };
    note(all_);
    if (p.other_side) other_side_.insert(p.pid);
    if (own || p.other_side || is_mps_server(p) || foreign) continue;
    note(others_);
    out.count += 1;
    if (std::isfinite(p.sm_util))
      out.sm_util = (std::isfinite(out.sm_util) ? out.sm_util : 0.0) + p.sm_util;
  }
  if (s.sampled && out.count == 0) out.sm_util = 0;  // NaN count (foreign pids) stays unknown
  listed_ = true;
  return out;
}

json ProcessCensus::summary() const {
  json out = {{"listed", any_listed_}, {"own_seen", own_seen_}, {"readings", readings_}};
  if (!any_listed_) out["why"] = why_.empty() ? std::string("not read") : why_;
  // Not one of the job's pids among the listed processes: NVML's pids are not this
  // namespace's, and every listed process may be the job's own.
  const bool foreign_pids = any_listed_ && any_process_ && !own_seen_ && !own_.empty();
  const auto& from = foreign_pids ? all_ : others_;
  json others = json::array();
  for (const auto& [pid, seen] : from) {
    if (foreign_pids && (is_mps_server(seen.last) || seen.last.other_side)) continue;
    double mx = std::numeric_limits<double>::quiet_NaN();
    for (double x : seen.sm) mx = std::isfinite(mx) ? std::max(mx, x) : x;
    others.push_back({{"pid", pid},
                      {"name", seen.last.name},
                      {"user", seen.last.user},
                      {"command", seen.last.command},
                      {"memory_bytes", number(seen.memory_max)},
                      {"sm_util_max", number(mx)},
                      {"sm_util_median", number(median_of(seen.sm))},
                      {"seen_before", seen.before},
                      {"readings", seen.readings}});
  }
  if (foreign_pids)
    out["note"] =
        "NVML's process ids are not this container's (no worker of the job among them): the job's "
        "own processes cannot be told from others";
  out["others"] = std::move(others);
  if (!other_side_.empty()) out["other_side"] = other_side_.size();
  return out;
}

}  // namespace sb::detail
