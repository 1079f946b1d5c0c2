// Other compute processes on a case's GPUs (case_gpu_processes.hpp).
#include "case_gpu_processes.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "scalebench/json_number.hpp"

namespace sb::detail {
namespace {

using json = nlohmann::json;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

json combine_gpu_processes(const std::vector<WorkerTelemetry>& workers, std::size_t repeats) {
  json out = json::object();
  json rows = json::array();
  std::string unavailable, note;
  double most = kNaN;
  std::vector<double> per_repeat(repeats, kNaN);
  bool any = false;
  for (const auto& w : workers) {
    if (w.gpu < 0 || !w.data.is_object()) continue;
    const json& census = w.data.value("summaries", json::object()).value("gpu_processes", json());
    if (!census.is_object()) continue;
    any = true;
    if (!census.value("listed", false)) {
      if (unavailable.empty())
        unavailable = "GPU " + std::to_string(w.gpu) + " on " + w.host + ": " +
                      census.value("why", std::string("not read"));
      continue;
    }
    if (census.contains("note") && note.empty()) note = census["note"].get<std::string>();
    for (const auto& p : census.value("others", json::array())) {
      json row = {{"host", w.host}, {"gpu", w.gpu}};
      row.update(p);
      row["of_readings"] = census.value("readings", 0);
      rows.push_back(std::move(row));
    }
    for (const auto& r : w.data.value("repeats", json::array())) {
      const double others = number_or_nan(r, "gpu_others");
      if (std::isfinite(others)) most = std::isfinite(most) ? std::max(most, others) : others;
      const auto i = static_cast<std::size_t>(r.value("repeat", -1));
      const double sm = number_or_nan(r, "gpu_others_sm_pct_median");
      if (i < repeats && std::isfinite(sm))
        per_repeat[i] = std::isfinite(per_repeat[i]) ? std::max(per_repeat[i], sm) : sm;
    }
  }
  if (!any) return out;
  std::erase_if(per_repeat, [](double x) { return !std::isfinite(x); });
  double sm = kNaN;
  if (!per_repeat.empty()) {
    std::sort(per_repeat.begin(), per_repeat.end());
    const std::size_t n = per_repeat.size();
    sm = n % 2 == 1 ? per_repeat[n / 2] : 0.5 * (per_repeat[n / 2 - 1] + per_repeat[n / 2]);
  }
  out["gpu_processes"] = std::move(rows);
  out["gpu_other_processes"] = finite_or_null(most);
  out["gpu_others_sm_pct"] = finite_or_null(sm);
  if (!unavailable.empty()) out["gpu_processes_unavailable"] = unavailable;
  if (!note.empty()) out["gpu_processes_note"] = note;
  return out;
}

}  // namespace sb::detail
