#include "scalebench/byte_size.hpp"

#include <cmath>

#include <fmt/format.h>

namespace sb {

std::string human_bytes(double bytes) {
  if (!std::isfinite(bytes)) return "-";
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  double x = bytes;
  while (std::abs(x) >= 1024.0 && u < 5) {
    x /= 1024.0;
    ++u;
  }
  if (u == 0) return fmt::format("{:.0f} B", x);
  return std::abs(x) < 10.0    ? fmt::format("{:.2f} {}", x, units[u])
         : std::abs(x) < 100.0 ? fmt::format("{:.1f} {}", x, units[u])
                               : fmt::format("{:.0f} {}", x, units[u]);
}

}  // namespace sb
