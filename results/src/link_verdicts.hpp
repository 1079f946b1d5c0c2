#pragma once
/// @file link_verdicts.hpp
/// (private) The verdict table's link rows: one per part a workload judged against its peers
/// and listed in the case's `metrics/verdicts` (SchedulerCase::metrics(), workload.hpp: comms
/// judges every link of a pair matrix). Only those generic fields are read here: no workload's
/// own metrics.

#include <nlohmann/json.hpp>

namespace sb::results::detail {

/// Appends a row per entry of `metrics/verdicts` of every ok case of `cases` to `rows`: the
/// columns of a device row, `link` the entry's `subject` ("GPU 3 -> GPU 5"), `device` its GPU
/// (-1: none), `value` and `expected` in the entry's `unit`, verdict ok or slow.
void add_link_verdicts(const nlohmann::json& cases, nlohmann::json& rows);

}  // namespace sb::results::detail
