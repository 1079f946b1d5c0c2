#pragma once
/// @file energy_figures.hpp
/// (private) A case's energy per answer for the summary, the tables, the HTML page and
/// gbench-json: joules per timed repeat (one repeat computes the answer once), the average
/// power over the repeats, and work per joule (the case's work units, flop, per joule), from
/// the record's `energy` (runtime/src/case_energy.hpp).

#include <string>

#include <nlohmann/json.hpp>

#include "summary_util.hpp"

namespace sb::results::detail {

struct EnergyFigures {
  double joules = kNaN;      ///< per timed repeat
  double power_w = kNaN;     ///< over the timed repeats' wall time
  double work_per_j = kNaN;  ///< work units per joule ("draws/J")
  std::string work_unit;     ///< "draws/J", "rows/J"; "" without units
  double flop_per_j = kNaN;  ///< floating-point operations per joule
  std::string source;        ///< "nvml" (GPUs), "rapl" (CPU packages), "" without a record
  std::string unavailable;   ///< why not, when the record says unavailable
};

/// The figures of one case record (NaN and "" when it has no `energy`).
[[nodiscard]] EnergyFigures energy_figures(const json& record);

/// Whether a summary row has an energy figure: the tables draw energy columns only then.
[[nodiscard]] bool any_energy_figure(const json& summary);

/// What the summary's energy columns hold, and why a case has none, for the note under a
/// table ("" when no case has an energy record).
[[nodiscard]] std::string energy_note(const json& summary);

/// "17.1 J" / "1.2 kJ" / "-".
[[nodiscard]] std::string human_joules(double j);

}  // namespace sb::results::detail
