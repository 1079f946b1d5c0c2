#pragma once
/// @file health_verdicts.hpp
/// (private) The verdict table's health rows: one per GPU of /system/gpu_health (the fields a
/// run with each-gpu cases reads at start-up, runtime/src/gpu_health.hpp), each field judged with
/// its reason: against the GPU's own maximum or default (PCIe link, application clocks, power
/// limit), on its own (row remapping pending or failed, a corrupted InfoROM, compute mode
/// prohibited, an ECC mode change pending), against the GPUs of its node (persistence and
/// compute mode) and of the fleet (driver; VBIOS, ECC mode and NVLink links per model).

#include <nlohmann/json.hpp>

namespace sb::results::detail {

/// Appends one row per GPU: the columns of a device row, `case` "health", `workload` "health",
/// `unit` "findings", `value` the number of findings (`expected` 0), verdict `unhealthy` (a
/// finding), `ok`, or `not judged` (every judged field unavailable).
void add_health_verdicts(const nlohmann::json& model, nlohmann::json& rows);

}  // namespace sb::results::detail
