#pragma once
/// @file export_inputs.hpp
/// groupby's inputs for `scalebench datagen` (input_export.hpp, docs/datagen.md).

#include <vector>

#include "scalebench/input_export.hpp"

namespace sb::groupby {

/// The table's columns as arrays "table/timestamp" (int64 ns), "table/id" (int64),
/// "table/name" (int32 codes into "table/name_dictionary"), "table/x", "table/y" (float64) and
/// "table/key" (int64), made by the workers' generator (generate.hpp). The answer: per query
/// variant, the groups sorted by key with the query's outputs, aggregated by the CPU worker's
/// hash aggregation; by-key only up to the small preset (per_group()), as the workload does.
[[nodiscard]] InputExport export_inputs(const std::vector<Params>& variants);

}  // namespace sb::groupby
