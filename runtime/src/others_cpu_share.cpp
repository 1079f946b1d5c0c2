// Other processes' share of this process's CPUs while it measured (others_cpu_share.hpp).
#include "others_cpu_share.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "scalebench/clock.hpp"
#include "scalebench/json_number.hpp"
#include "scalebench/telemetry_source.hpp"

namespace sb::detail {

double others_cpu_share(const std::function<void()>& work) {
  const auto cpu = make_cpu_telemetry();
  const int cpus = cpu->describe().value("cpus", 0);
  TelemetrySample before, after;
  cpu->begin_case(false);
  cpu->read(before);
  const double t0 = now();
  work();
  const double wall = now() - t0;
  cpu->read(after);
  const nlohmann::json kernel = cpu->case_summary();
  const double busy = after.node_busy_s - before.node_busy_s;
  const double own = after.own_cpu_s - before.own_cpu_s;
  if (!(cpus > 0) || !(wall > 0) || !std::isfinite(busy) || !std::isfinite(own))
    return std::numeric_limits<double>::quiet_NaN();
  // Interrupt handling and kernel threads are not other processes (case_telemetry.cpp).
  const double irq = after.node_irq_s - before.node_irq_s;
  const double kthreads = kernel.is_object() ? number_or_nan(kernel, "kernel_threads_cpu_s") : 0.0;
  const double others =
      busy - own - (std::isfinite(irq) ? irq : 0.0) - (std::isfinite(kthreads) ? kthreads : 0.0);
  return std::clamp(others / (wall * cpus), 0.0, 1.0);
}

}  // namespace sb::detail
