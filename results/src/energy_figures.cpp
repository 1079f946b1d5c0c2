// A case's energy per answer (energy_figures.hpp).
#include "energy_figures.hpp"

#include <cmath>
#include <cstddef>
#include <map>

#include <fmt/format.h>

namespace sb::results::detail {

EnergyFigures energy_figures(const json& c) {
  EnergyFigures f;
  const json& e = sub(c, "energy");
  if (!e.is_object() || e.empty()) return f;  // no energy record (older reports, telemetry off)
  f.source = str(e, "source");
  if (!e.value("available", false)) {
    f.unavailable = str(e, "why", "unavailable");
    return f;
  }
  f.joules = num(e, "joules_per_repeat");
  f.power_w = num(e, "power_w");
  if (!(f.joules > 0)) return f;
  const json& work = sub(c, "work");
  const double units = num(work, "units"), flops = num(work, "flops");
  if (units > 0) {
    f.work_per_j = units / f.joules;
    f.work_unit = str(work, "unit", "units") + "/J";
  }
  if (flops > 0) f.flop_per_j = flops / f.joules;
  return f;
}

std::string human_joules(double j) {
  if (!std::isfinite(j)) return "-";
  if (j >= 1e6) return fmt::format("{:.3g} MJ", j / 1e6);
  if (j >= 1e3) return fmt::format("{:.3g} kJ", j / 1e3);
  if (j >= 1) return fmt::format("{:.3g} J", j);
  return fmt::format("{:.3g} mJ", j * 1e3);
}

bool any_energy_figure(const json& summary) {
  for (const auto& r : summary)
    if (std::isfinite(num(r, "energy_j"))) return true;
  return false;
}

std::string energy_note(const json& summary) {
  std::map<std::string, std::size_t> why;  // reason -> cases
  for (const auto& r : summary)
    if (const std::string un = str(r, "energy_unavailable"); !un.empty()) ++why[un];
  const bool figures = any_energy_figure(summary);
  std::string out =
      figures ? "energy: joules per timed repeat (GPU cases: the GPUs' energy counters; CPU "
                "cases: the nodes' CPU packages, RAPL); work/J: work units per joule"
              : "";
  for (const auto& [reason, cases] : why)
    out += fmt::format("{}energy unavailable{}: {}", out.empty() ? "" : "; ",
                       figures ? fmt::format(" for {} case(s)", cases) : std::string(), reason);
  return out;
}

}  // namespace sb::results::detail
