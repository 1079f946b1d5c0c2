#include "scalebench/interference.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "summary_util.hpp"

namespace sb::results {
namespace {

using json = nlohmann::json;

constexpr double kBusyCores = 0.05;      ///< +5% of the node's cores taken by others
constexpr double kBusyThrottled = 0.02;  ///< +2% of the wall time throttled by the cgroup
constexpr double kBusyClock = 0.05;      ///< clock 5% lower
/// A thread whose core's vector units are shared with another runs up to twice as long.
constexpr double kSharedVectorsExplain = 1.0;

double clock_of(const json& mhz) {
  if (mhz.is_number()) return mhz.get<double>();
  for (const char* k : {"median", "mean", "avg", "average"}) {
    const double v = detail::num(mhz, k);
    if (std::isfinite(v)) return v;
  }
  return detail::kNaN;
}

double or_zero(double v) {
  return std::isfinite(v) ? v : 0.0;
}

}  // namespace

Interference read_interference(const json& c, double timed_s) {
  Interference out;
  const json& rec = detail::sub(c, "interference");
  if (!rec.is_object() || rec.empty()) return out;
  out.recorded = true;
  out.other_cpu_fraction = detail::num(rec, "other_cpu_fraction");
  if (std::isfinite(out.other_cpu_fraction))
    out.other_cpu_fraction = std::clamp(out.other_cpu_fraction, 0.0, 1.0);
  if (const auto it = rec.find("cpu_mhz"); it != rec.end()) out.cpu_mhz = clock_of(*it);
  const double thr = detail::num(rec, "cgroup_throttled_s");
  if (std::isfinite(thr) && timed_s > 0) out.throttled_share = std::clamp(thr / timed_s, 0.0, 1.0);
  out.vector_probe_s = detail::num(rec, "vector_probe_s");
  return out;
}

Busier busier_than(const Interference& run, const Interference& ref) {
  Busier b;
  if (!run.recorded) return b;
  std::vector<std::string> why;

  const double cores = or_zero(run.other_cpu_fraction) - or_zero(ref.other_cpu_fraction);
  if (cores >= kBusyCores) {
    b.busy = true;
    b.explains = std::max(b.explains, 1.0 / (1.0 - std::min(0.9, 2.0 * cores)) - 1.0);
    why.push_back(fmt::format("{:.0f}% of the cores taken by other processes",
                              100.0 * run.other_cpu_fraction));
  }
  const double thr = or_zero(run.throttled_share) - or_zero(ref.throttled_share);
  if (thr >= kBusyThrottled) {
    b.busy = true;
    b.explains = std::max(b.explains, thr / (1.0 - std::min(0.9, thr)));
    why.push_back(
        fmt::format("the cgroup CPU quota held it back {:.0f}% of the time", 100.0 * thr));
  }
  if (run.cpu_mhz > 0 && ref.cpu_mhz > 0 && run.cpu_mhz < (1.0 - kBusyClock) * ref.cpu_mhz) {
    b.busy = true;
    b.explains = std::max(b.explains, ref.cpu_mhz / run.cpu_mhz - 1.0);
    why.push_back(fmt::format("CPU clock {:.0f} MHz against {:.0f} MHz", run.cpu_mhz, ref.cpu_mhz));
  }
  if (run.vector_probe_s > 0 && ref.vector_probe_s > 0 &&
      run.vector_probe_s >= (1.0 + kSlowVectorProbe) * ref.vector_probe_s) {
    const double c = run.vector_probe_s / ref.vector_probe_s;
    b.busy = true;
    b.explains = std::max({b.explains, kSharedVectorsExplain, c - 1.0});
    why.push_back(
        fmt::format("vector code {:.0f}% slower (the vector probe, {:.1f} us against "
                    "{:.1f} us)",
                    100.0 * (c - 1.0), 1e6 * run.vector_probe_s, 1e6 * ref.vector_probe_s));
  }
  for (const auto& w : why) b.reason += (b.reason.empty() ? "" : ", ") + w;
  return b;
}

Busier busy_in_either(const Interference& baseline, const Interference& current) {
  Busier b;
  if (!baseline.recorded || !current.recorded) return b;
  const double share =
      std::max(or_zero(baseline.other_cpu_fraction), or_zero(current.other_cpu_fraction));
  if (share < kAbBusyShare) return b;
  b.busy = true;
  b.explains = 1.0 / (1.0 - std::min(0.9, 2.0 * share)) - 1.0;
  b.reason = fmt::format(
      "{:.0f}% and {:.0f}% of the cores taken by other processes in the baseline's and the "
      "current side's turns",
      100.0 * baseline.other_cpu_fraction, 100.0 * current.other_cpu_fraction);
  return b;
}

}  // namespace sb::results
