// Durations as text (duration_text.hpp).
#include "scalebench/duration_text.hpp"

#include <cmath>

#include <fmt/format.h>

namespace sb {

std::string human_seconds(double s) {
  if (!std::isfinite(s)) return "-";
  const double a = std::abs(s);
  if (a >= 1.0) return fmt::format("{:.3f} s", s);
  if (a >= 1e-3) return fmt::format("{:.2f} ms", s * 1e3);
  if (a >= 1e-6) return fmt::format("{:.2f} us", s * 1e6);
  if (a == 0.0) return "0 s";
  return fmt::format("{:.1f} ns", s * 1e9);
}

}  // namespace sb
