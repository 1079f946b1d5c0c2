#pragma once
/// @file summary_util.hpp
/// (private) Small readers of the report model shared by the summary, formats and compare.

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sb::results::detail {

using json = nlohmann::json;
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Number at obj[key], or `fallback` when absent or not a number.
inline double num(const json& obj, const char* key, double fallback = kNaN) {
  if (!obj.is_object()) return fallback;
  const auto it = obj.find(key);
  return (it != obj.end() && it->is_number()) ? it->get<double>() : fallback;
}

/// String at obj[key], or `fallback`.
inline std::string str(const json& obj, const char* key, const std::string& fallback = {}) {
  if (!obj.is_object()) return fallback;
  const auto it = obj.find(key);
  return (it != obj.end() && it->is_string()) ? it->get<std::string>() : fallback;
}

/// Object at obj[key], or an empty object.
inline const json& sub(const json& obj, const char* key) {
  static const json empty = json::object();
  if (!obj.is_object()) return empty;
  const auto it = obj.find(key);
  return it != obj.end() ? *it : empty;
}

/// Per-repeat values of one phase ("total", "compute", ...) of a case, in seconds.
inline std::vector<double> phase_times(const json& c, const char* phase = "total") {
  std::vector<double> out;
  const json& reps = sub(c, "repeats");
  if (!reps.is_array()) return out;
  for (const auto& r : reps) {
    const double t = num(r, phase);
    if (std::isfinite(t)) out.push_back(t);
  }
  return out;
}

/// Whether a repeat is marked to be left out of its case's statistics: `throttled` (telemetry) or
/// `host_stalled` (runtime/src/host_stall.hpp), as booleans or non-zero numbers.
inline bool marked_repeat(const json& r) {
  if (!r.is_object()) return false;
  for (const char* key : {"throttled", "host_stalled"}) {
    const auto it = r.find(key);
    if (it == r.end()) continue;
    if (it->is_boolean() ? it->get<bool>() : it->is_number() && it->get<double>() != 0.0)
      return true;
  }
  return false;
}

/// Per-repeat values of one phase over the repeats a case's median counts: without those marked
/// (marked_repeat) when its metrics say they were left out (`left_out_repeats` > 0).
inline std::vector<double> kept_phase_times(const json& c, const char* phase = "total") {
  const bool leave_out = num(sub(c, "metrics"), "left_out_repeats", 0.0) > 0;
  if (!leave_out) return phase_times(c, phase);
  std::vector<double> out;
  const json& reps = sub(c, "repeats");
  if (!reps.is_array()) return out;
  for (const auto& r : reps) {
    if (marked_repeat(r)) continue;
    const double t = num(r, phase);
    if (std::isfinite(t)) out.push_back(t);
  }
  return out;
}

/// Canonical path name ("cpu1" -> "single-cpu"); unknown names unchanged.
std::string canonical_path(const std::string& path);
/// "cpu" or "gpu": the case's device field, else derived from the path.
std::string case_device(const json& c);
/// Case label: its id, else workload/path/k=v,...
std::string case_label(const json& c);
/// How a case ran: "1w×2t" (CPU: workers × threads per worker), "2 GPUs" (GPU), "-" when no
/// worker ran it. `device` is "cpu" or "gpu".
std::string parallel_label(const std::string& device, double workers, double threads);
/// parallel_label of a case record (workers, threads_per_worker, device).
std::string case_parallel_label(const json& c);

/// A case id "workload/path/k=v,k=v" split into its path and parameters ("k=v" each).
struct CaseIdParts {
  std::string path;
  std::vector<std::string> params;
};
CaseIdParts split_case_id(const std::string& id, const std::string& workload);
/// The parameters ("k=v") that every one of `ids` has (in the first id's order).
std::vector<std::string> shared_params(const std::vector<CaseIdParts>& ids);
/// "k=v,k=v" of a params object (sorted keys).
std::string params_text(const json& params);
/// A summary note "HEAD (FIGURE): WHY" in parts ({note, "", ""} when it has another form), so
/// readers can group the cases that share HEAD and WHY.
struct NoteParts {
  std::string head, figure, why;
};
NoteParts split_note(const std::string& note);
/// The notes of a summary row's `notes` ("; " between them).
std::vector<std::string> split_notes(const std::string& notes);
/// True when any validation entry of the case has pass == false.
bool validation_failed(const json& c);
/// Median of the /system/ceilings rows of one kind, in base units per second; NaN when none.
/// With threads > 0, only the rows measured with that many threads when there are any.
double ceiling_median(const json& ceilings, const std::string& kind, int threads = 0);
/// Scale of a rate unit to base units per second: "GB/s" -> 1e9, "TFLOP/s" -> 1e12, "GiB/s".
double rate_unit_scale(const std::string& unit);

}  // namespace sb::results::detail
