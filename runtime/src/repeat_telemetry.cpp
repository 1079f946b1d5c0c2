// Per-repeat telemetry summaries and the throttle rule (repeat_telemetry.hpp).
#include "scalebench/repeat_telemetry.hpp"
#include "scalebench/json_number.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

namespace sb {
namespace {

SignalStats stats_of(std::vector<double> v) {
  SignalStats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  const std::size_t n = v.size();
  s.median = n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  return s;
}

/// Last finite reading minus the first one; NaN when there are fewer than two.
template <class Get>
double difference(std::span<const TelemetrySample> xs, Get get) {
  double first = kNoReading, last = kNoReading;
  for (const auto& s : xs) {
    const double v = get(s);
    if (!std::isfinite(v)) continue;
    if (!std::isfinite(first)) first = v;
    last = v;
  }
  return std::isfinite(first) ? std::max(0.0, last - first) : kNoReading;
}

template <class Get>
SignalStats levels(std::span<const TelemetrySample> xs, Get get) {
  std::vector<double> v;
  for (const auto& s : xs)
    if (const double x = get(s); std::isfinite(x)) v.push_back(x);
  return stats_of(std::move(v));
}

bool gpu_idle(const TelemetrySample& s) {
  return std::isfinite(s.gpu_reasons) &&
         (static_cast<std::uint64_t>(s.gpu_reasons) & clock_event::kGpuIdle) != 0;
}

}  // namespace

RepeatTelemetry summarize_repeat(std::span<const TelemetrySample> xs, int repeat, double origin) {
  RepeatTelemetry r;
  r.repeat = repeat;
  r.samples = static_cast<int>(xs.size());
  if (xs.empty()) return r;
  r.t_begin = xs.front().t - origin;
  r.t_end = xs.back().t - origin;
  r.wall_s = xs.back().t - xs.front().t;
  r.node_busy_s = difference(xs, [](const auto& s) { return s.node_busy_s; });
  r.steal_s = difference(xs, [](const auto& s) { return s.steal_s; });
  r.node_irq_s = difference(xs, [](const auto& s) { return s.node_irq_s; });
  r.own_cpu_s = difference(xs, [](const auto& s) { return s.own_cpu_s; });
  r.cgroup_throttled_s = difference(xs, [](const auto& s) { return s.cgroup_throttled_s; });
  r.gpu_ecc_corrected = difference(xs, [](const auto& s) { return s.gpu_ecc_corrected; });
  r.gpu_ecc_uncorrected = difference(xs, [](const auto& s) { return s.gpu_ecc_uncorrected; });
  r.gpu_xid = difference(xs, [](const auto& s) { return s.gpu_xid_events; });
  r.gpu_nvlink_errors = difference(xs, [](const auto& s) { return s.gpu_nvlink_errors; });
  r.cpu_energy_j = difference(xs, [](const auto& s) { return s.cpu_energy_j; });
  r.gpu_energy_j = difference(xs, [](const auto& s) { return s.gpu_energy_j; });
  r.gpu_util_pct = levels(xs, [](const auto& s) { return s.gpu_util_pct; }).median;
  r.gpu_others = levels(xs, [](const auto& s) { return s.gpu_others; }).max;
  r.gpu_others_sm_pct = levels(xs, [](const auto& s) { return s.gpu_others_sm_pct; });
  r.cpu_mhz = levels(xs, [](const auto& s) { return s.cpu_mhz; });
  r.vector_probe_s = levels(xs, [](const auto& s) { return s.vector_probe_s; }).min;
  // The SM clock while the GPU worked: an idle GPU between tasks lowers its clock by design.
  std::vector<TelemetrySample> busy;
  for (const auto& s : xs)
    if (!gpu_idle(s)) busy.push_back(s);
  const std::span<const TelemetrySample> working =
      busy.empty() ? xs : std::span<const TelemetrySample>(busy);
  r.gpu_sm_mhz = levels(working, [](const auto& s) { return s.gpu_sm_mhz; });
  r.gpu_mem_mhz = levels(xs, [](const auto& s) { return s.gpu_mem_mhz; });
  r.gpu_power_w = levels(xs, [](const auto& s) { return s.gpu_power_w; });
  r.gpu_temp_c = levels(xs, [](const auto& s) { return s.gpu_temp_c; });
  r.gpu_power_limit_w = levels(xs, [](const auto& s) { return s.gpu_power_limit_w; }).median;
  r.gpu_app_sm_mhz = levels(xs, [](const auto& s) { return s.gpu_app_sm_mhz; }).median;
  for (const auto& s : xs) {
    if (std::isfinite(s.gpu_retired_pages)) r.gpu_retired_pages = s.gpu_retired_pages;
    if (std::isfinite(s.gpu_last_xid)) r.gpu_last_xid = s.gpu_last_xid;
    if (std::isfinite(s.gpu_reasons)) {
      r.gpu_reasons_known = true;
      r.gpu_reasons |= static_cast<std::uint64_t>(s.gpu_reasons);
    }
  }
  return r;
}

std::string throttle_reason_names(std::uint64_t reasons) {
  static const std::pair<std::uint64_t, const char*> names[] = {
      {clock_event::kSwPowerCap, "power cap"},
      {clock_event::kHwSlowdown, "hardware slowdown"},
      {clock_event::kSwThermalSlowdown, "software thermal slowdown"},
      {clock_event::kHwThermalSlowdown, "hardware thermal slowdown"},
      {clock_event::kHwPowerBrakeSlowdown, "power brake"}};
  std::string out;
  for (const auto& [bit, name] : names)
    if ((reasons & bit) != 0) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

Throttle throttle_of(const RepeatTelemetry& r) {
  Throttle t;
  std::string why = throttle_reason_names(r.gpu_reasons & clock_event::kThrottling);
  const double sm = r.gpu_sm_mhz.median;
  const double app = r.gpu_app_sm_mhz;
  if (std::isfinite(sm) && std::isfinite(app) && app > 0 && sm < kThrottledClockShare * app)
    why += fmt::format("{}SM clock {:.0f} MHz, {:.0f}% of {:.0f}", why.empty() ? "" : "; ", sm,
                       100.0 * sm / app, app);
  t.throttled = !why.empty();
  t.reason = std::move(why);
  return t;
}

nlohmann::json to_json(const RepeatTelemetry& r) {
  nlohmann::json j = {{"repeat", r.repeat},
                      {"samples", r.samples},
                      {"t_begin", finite_or_null(r.t_begin)},
                      {"t_end", finite_or_null(r.t_end)},
                      {"wall_s", finite_or_null(r.wall_s)},
                      {"node_busy_s", finite_or_null(r.node_busy_s)},
                      {"steal_s", finite_or_null(r.steal_s)},
                      {"node_irq_s", finite_or_null(r.node_irq_s)},
                      {"own_cpu_s", finite_or_null(r.own_cpu_s)},
                      {"cgroup_throttled_s", finite_or_null(r.cgroup_throttled_s)},
                      {"gpu_ecc_corrected", finite_or_null(r.gpu_ecc_corrected)},
                      {"gpu_ecc_uncorrected", finite_or_null(r.gpu_ecc_uncorrected)},
                      {"gpu_xid", finite_or_null(r.gpu_xid)},
                      {"gpu_nvlink_errors", finite_or_null(r.gpu_nvlink_errors)},
                      {"cpu_energy_j", finite_or_null(r.cpu_energy_j)},
                      {"gpu_energy_j", finite_or_null(r.gpu_energy_j)},
                      {"gpu_util_pct", finite_or_null(r.gpu_util_pct)},
                      {"gpu_others", finite_or_null(r.gpu_others)},
                      {"vector_probe_s", finite_or_null(r.vector_probe_s)},
                      {"gpu_power_limit_w", finite_or_null(r.gpu_power_limit_w)},
                      {"gpu_app_sm_mhz", finite_or_null(r.gpu_app_sm_mhz)},
                      {"gpu_retired_pages", finite_or_null(r.gpu_retired_pages)},
                      {"gpu_last_xid", finite_or_null(r.gpu_last_xid)}};
  auto put = [&](const char* name, const SignalStats& s) {
    j[std::string(name) + "_min"] = finite_or_null(s.min);
    j[std::string(name) + "_median"] = finite_or_null(s.median);
    j[std::string(name) + "_max"] = finite_or_null(s.max);
  };
  put("cpu_mhz", r.cpu_mhz);
  put("gpu_sm_mhz", r.gpu_sm_mhz);
  put("gpu_mem_mhz", r.gpu_mem_mhz);
  put("gpu_power_w", r.gpu_power_w);
  put("gpu_temp_c", r.gpu_temp_c);
  put("gpu_others_sm_pct", r.gpu_others_sm_pct);
  j["gpu_clock_event_reasons"] =
      r.gpu_reasons_known ? nlohmann::json(r.gpu_reasons) : nlohmann::json(nullptr);
  return j;
}

RepeatTelemetry repeat_telemetry_from_json(const nlohmann::json& j) {
  RepeatTelemetry r;
  if (!j.is_object()) return r;
  r.repeat = j.value("repeat", 0);
  r.samples = j.value("samples", 0);
  r.t_begin = number_or_nan(j, "t_begin");
  r.t_end = number_or_nan(j, "t_end");
  r.wall_s = number_or_nan(j, "wall_s");
  r.node_busy_s = number_or_nan(j, "node_busy_s");
  r.steal_s = number_or_nan(j, "steal_s");
  r.node_irq_s = number_or_nan(j, "node_irq_s");
  r.own_cpu_s = number_or_nan(j, "own_cpu_s");
  r.cgroup_throttled_s = number_or_nan(j, "cgroup_throttled_s");
  r.gpu_ecc_corrected = number_or_nan(j, "gpu_ecc_corrected");
  r.gpu_ecc_uncorrected = number_or_nan(j, "gpu_ecc_uncorrected");
  r.gpu_xid = number_or_nan(j, "gpu_xid");
  r.gpu_nvlink_errors = number_or_nan(j, "gpu_nvlink_errors");
  r.cpu_energy_j = number_or_nan(j, "cpu_energy_j");
  r.gpu_energy_j = number_or_nan(j, "gpu_energy_j");
  r.gpu_util_pct = number_or_nan(j, "gpu_util_pct");
  r.gpu_others = number_or_nan(j, "gpu_others");
  r.vector_probe_s = number_or_nan(j, "vector_probe_s");
  r.gpu_power_limit_w = number_or_nan(j, "gpu_power_limit_w");
  r.gpu_app_sm_mhz = number_or_nan(j, "gpu_app_sm_mhz");
  r.gpu_retired_pages = number_or_nan(j, "gpu_retired_pages");
  r.gpu_last_xid = number_or_nan(j, "gpu_last_xid");
  auto get = [&](const char* name, SignalStats& s) {
    s.min = number_or_nan(j, (std::string(name) + "_min").c_str());
    s.median = number_or_nan(j, (std::string(name) + "_median").c_str());
    s.max = number_or_nan(j, (std::string(name) + "_max").c_str());
  };
  get("cpu_mhz", r.cpu_mhz);
  get("gpu_sm_mhz", r.gpu_sm_mhz);
  get("gpu_mem_mhz", r.gpu_mem_mhz);
  get("gpu_power_w", r.gpu_power_w);
  get("gpu_temp_c", r.gpu_temp_c);
  get("gpu_others_sm_pct", r.gpu_others_sm_pct);
  if (const auto it = j.find("gpu_clock_event_reasons"); it != j.end() && it->is_number()) {
    r.gpu_reasons_known = true;
    r.gpu_reasons = it->get<std::uint64_t>();
  }
  return r;
}

}  // namespace sb
