#pragma once
/// @file json_number.hpp
/// A measured figure in a JSON record: JSON has no NaN or infinity, and a figure that was not
/// measured (NaN) must read as missing, not as a number.

#include <cmath>

#include <nlohmann/json.hpp>

namespace sb {

/// `v` as a JSON number, or null when it is NaN or infinite.
[[nodiscard]] inline nlohmann::json finite_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

}  // namespace sb
