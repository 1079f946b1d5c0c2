// Other processes' share of this process's CPUs while it measured (others_cpu_share.hpp).
#include "others_cpu_share.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "scalebench/clock.hpp"
#include "scalebench/telemetry_source.hpp"

namespace sb::detail {

double others_cpu_share(const std::function<void()>& work) {
  const auto cpu = make_cpu_telemetry();
  const int cpus = cpu->describe().value("cpus", 0);
  TelemetrySample before, after;
  cpu->read(before);
  const double t0 = now();
  work();
  const double wall = now() - t0;
  cpu->read(after);
  const double busy = after.node_busy_s - before.node_busy_s;
  const double own = after.own_cpu_s - before.own_cpu_s;
  if (!(cpus > 0) || !(wall > 0) || !std::isfinite(busy) || !std::isfinite(own))
    return std::numeric_limits<double>::quiet_NaN();
  return std::clamp((busy - own) / (wall * cpus), 0.0, 1.0);
}

}  // namespace sb::detail
