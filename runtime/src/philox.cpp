#include "scalebench/philox.hpp"

#include <sleef.h>

namespace sb::data {

Pair box_muller(Pair u) noexcept {
  // SLEEF's 1.0-ulp log and 0.506-ulp sincospi: the same accuracy class as CUDA's log and
  // sincospi, so CPU and GPU normals agree to within a couple of ulps.
  const double r = std::sqrt(-2.0 * Sleef_log_u10(u.a));
  const Sleef_double2 sc = Sleef_sincospi_u05(2.0 * u.b);
  return {r * sc.y, r * sc.x};
}

}  // namespace sb::data
