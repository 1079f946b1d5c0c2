// A case's energy from its workers' telemetry (case_energy.hpp).
#include "case_energy.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>

#include <fmt/format.h>

#include "scalebench/duration_text.hpp"
#include "scalebench/json_number.hpp"

namespace sb::detail {
namespace {

using json = nlohmann::json;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
/// The counter resolves the repeats when it moved in this share of them...
constexpr double kResolvedShare = 0.9;
/// ... or moved this many times over them, enough steps to add up (tools/energy_vs_smi.py).
constexpr int kMinSteps = 20;

double median_of(std::vector<double> v) {
  std::erase_if(v, [](double x) { return !std::isfinite(x); });
  if (v.empty()) return kNaN;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

json number(double v) {
  return std::isfinite(v) ? json(v) : json(nullptr);
}

/// One device's readings: per timed repeat its energy and wall time, and its span.
struct Device {
  std::vector<std::vector<double>> joules, wall;  ///< per repeat, one per worker reading it
  std::vector<std::vector<double>> power;         ///< per repeat, the GPU's median power (W)
  json span;                                      ///< the first worker's
};

}  // namespace

json combine_energy(const std::vector<WorkerTelemetry>& workers, bool gpu, std::size_t repeats) {
  const char* kind = gpu ? "gpu" : "cpu";
  const std::string have = std::string(kind) + "_energy";
  const std::string lacks = have + "_unavailable";
  const std::string field = have + "_j";
  json out = {{"source", gpu ? "nvml" : "rapl"}};
  std::string why;
  bool any_telemetry = false;
  // A GPU case counts every GPU worker; a CPU case each node once.
  std::map<std::string, Device> devices;
  for (const auto& w : workers) {
    if (!w.data.is_object() || !w.data.contains("repeats")) continue;
    any_telemetry = true;
    if (gpu && w.gpu < 0) continue;
    const json& sources = w.data.value("sources", json::object());
    if (!sources.contains(have)) {
      if (why.empty())
        why = sources.contains(lacks) && sources[lacks].is_string()
                  ? sources[lacks].get<std::string>()
                  : (gpu ? "no NVML energy counter for this GPU" : "no CPU energy source");
      continue;
    }
    Device& d = devices[gpu ? w.host + "\n" + std::to_string(w.gpu) : w.host];
    d.joules.resize(repeats);
    d.wall.resize(repeats);
    d.power.resize(repeats);
    for (const auto& r : w.data["repeats"]) {
      const auto i = static_cast<std::size_t>(r.value("repeat", -1));
      if (i >= repeats) continue;
      d.joules[i].push_back(number_or_nan(r, field.c_str()));
      d.wall[i].push_back(number_or_nan(r, "wall_s"));
      d.power[i].push_back(gpu ? number_or_nan(r, "gpu_power_w_median") : kNaN);
    }
    const json& span = w.data.value("energy", json::object());
    if (d.span.is_null() && span.contains(kind)) d.span = span[kind];
  }
  if (!any_telemetry) return nullptr;
  if (devices.empty()) {
    out["available"] = false;
    out["why"] = why.empty() ? std::string("no worker read an energy counter") : why;
    return out;
  }
  // Per timed repeat the devices' joules: from the counters, or (`from_power`) from the power
  // readings times the repeat's time.
  json per_repeat;
  double joules = 0, wall = 0;
  int measured = 0, readings = 0, moved = 0;
  std::vector<double> walls;
  auto add_up = [&](bool from_power) {
    per_repeat = json::array();
    joules = wall = 0;
    measured = readings = moved = 0;
    walls.clear();
    for (std::size_t i = 0; i < repeats; ++i) {
      double sum = 0, longest = 0;
      bool all = true;
      for (const auto& [name, d] : devices) {
        const double s = median_of(d.wall[i]);
        const double j = from_power ? median_of(d.power[i]) * s : median_of(d.joules[i]);
        if (!std::isfinite(j)) {
          all = false;
          break;
        }
        ++readings;
        if (j > 0) ++moved;
        sum += j;
        if (std::isfinite(s)) longest = std::max(longest, s);
      }
      if (!all) {
        per_repeat.push_back(nullptr);
        continue;
      }
      per_repeat.push_back(sum);
      joules += sum;
      wall += longest;
      walls.push_back(longest);
      ++measured;
    }
  };
  add_up(false);
  out["available"] = measured > 0;
  out["devices"] = devices.size();
  if (measured == 0) {
    out["why"] = "no timed repeat had a reading at its begin and its end";
    return out;
  }
  // A counter that moves less often than the repeats end (NVML's, every 100 ms or so on an
  // H200 in a virtual machine, against 25 ms repeats) gives a repeat either nothing or a whole
  // step: per repeat that is noise, and only many steps add up to the energy. GPU cases then
  // take the power readings over each repeat instead (tools/energy_vs_smi.py checks both).
  if (static_cast<double>(moved) < kResolvedShare * readings && moved < kMinSteps) {
    const std::string coarse =
        fmt::format("the energy counter moved in {} of {} timed repeats (each {} long)", moved,
                    readings, human_seconds(median_of(walls)));
    if (gpu) add_up(true);
    if (!gpu || measured == 0) {
      out["available"] = false;
      out["why"] =
          coarse + ": coarser than the repeats; more repeats or a larger preset resolve it";
      return out;
    }
    out["method"] = "power";
    out["note"] = coarse + "; from the GPUs' power readings over each repeat instead";
  } else {
    out["method"] = "counter";
  }
  out["per_repeat_j"] = std::move(per_repeat);
  out["joules"] = joules;
  out["repeats_measured"] = measured;
  out["joules_per_repeat"] = joules / measured;
  out["power_w"] = number(wall > 0 ? joules / wall : kNaN);
  double span_j = 0, span_s = 0, t0 = kNaN, t1 = kNaN;
  double updates = kNaN;
  bool spans = true;
  for (const auto& [name, d] : devices) {
    if (!d.span.is_object()) {
      spans = false;
      break;
    }
    span_j += number_or_nan(d.span, "joules");
    span_s = std::max(span_s, number_or_nan(d.span, "seconds"));
    const double b = number_or_nan(d.span, "t_begin_unix"), e = number_or_nan(d.span, "t_end_unix");
    t0 = std::isfinite(t0) ? std::min(t0, b) : b;
    t1 = std::isfinite(t1) ? std::max(t1, e) : e;
    const double u = number_or_nan(d.span, "updates");
    updates = std::isfinite(updates) ? std::min(updates, u) : u;
  }
  if (spans)
    out["span"] = {{"joules", span_j},
                   {"seconds", span_s},
                   {"t_begin_unix", number(t0)},
                   {"t_end_unix", number(t1)},
                   {"updates", number(updates)}};
  return out;
}

}  // namespace sb::detail
