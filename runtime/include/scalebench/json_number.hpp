#pragma once
/// @file json_number.hpp
/// A measured figure in a JSON record: JSON has no NaN or infinity, and a figure that was not
/// measured (NaN) must read as missing, not as a number.

#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

namespace sb {

/// `v` as a JSON number, or null when it is NaN or infinite.
[[nodiscard]] inline nlohmann::json finite_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

/// The number `j[key]`, or NaN when `j` has no such member or it is not a number (null).
[[nodiscard]] inline double number_or_nan(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>()
                                          : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace sb
