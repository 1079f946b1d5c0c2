#pragma once
/// @file link_verdicts.hpp
/// (private) The verdict table's link rows: one per link of every pair matrix in the report
/// (comms `op=pairs`), judged by the workload against the other links of its kind
/// (workloads/comms/link_health.hpp) and stored in the case's `metrics/links`.

#include <nlohmann/json.hpp>

namespace sb::results::detail {

/// Appends a row per measured link of every ok pair-matrix case of `cases` to `rows`: the
/// columns of a device row, `device` the source GPU (-1: a CPU worker), `value` and `expected`
/// in B/s (`unit` "B/s"), `link` "GPU 3 -> GPU 5", verdict ok or slow.
void add_link_verdicts(const nlohmann::json& cases, nlohmann::json& rows);

}  // namespace sb::results::detail
