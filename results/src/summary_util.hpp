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

/// Canonical path name ("cpu1" -> "single-cpu"); unknown names unchanged.
std::string canonical_path(const std::string& path);
/// "cpu" or "gpu": the case's device field, else derived from the path.
std::string case_device(const json& c);
/// Case label: its id, else workload/path/k=v,...
std::string case_label(const json& c);
/// "k=v,k=v" of a params object (sorted keys).
std::string params_text(const json& params);
/// True when any validation entry of the case has pass == false.
bool validation_failed(const json& c);
/// Scale of a rate unit to base units per second: "GB/s" -> 1e9, "TFLOP/s" -> 1e12, "GiB/s".
double rate_unit_scale(const std::string& unit);

}  // namespace sb::results::detail
