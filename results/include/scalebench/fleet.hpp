#pragma once
/// @file fleet.hpp
/// The fleet of a merged acceptance sweep (merge.hpp, docs/acceptance.md "A fleet"): one row per
/// node from the verdicts of every device on it, judged against all the fleet's peers, and the
/// nodes (or array elements) that never reported.

#include <string>

#include <nlohmann/json.hpp>

namespace sb::results {

/// One row per node (every node a device verdict names, and every merged report's node: one
/// without a device record is judged by its run's status), not-ok nodes first, then missing
/// ones, then ok ones (each group by name):
/// {"host", "status" ("not ok", "missing", "ok"), "verdict" (the worst of its devices; "missing"),
/// "devices" (judged), "not_ok" (devices not ok), "worst" (the worst device's verdict line, or the
/// missing element's reason), "report" (the report its records came from), "job_id"}. Empty
/// when the model holds no device verdict and no fleet.
[[nodiscard]] nlohmann::json fleet_nodes(const nlohmann::json& model);

/// The fleet for a terminal: a tally, the nodes that are not ok or missing (with the reason of
/// their worst device), then the command that re-submits them ("" without a fleet).
[[nodiscard]] std::string format_fleet_text(const nlohmann::json& model);

}  // namespace sb::results
