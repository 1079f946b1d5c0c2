#pragma once
/// @file device_records.hpp
/// The records one planned case yields: one, or one per device for each-gpu and each-node
/// (runtime/src/each_device.hpp), each carrying `planned_id` (the planned case's id),
/// `device_id` and `devices` (how many the case has). The launcher maps them back to their
/// planned case, knows when a case is complete, and names the devices a dead job never
/// reported.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalebench/workload.hpp"

namespace sb {

/// The id of the planned case a record belongs to: its planned_id, else its id.
[[nodiscard]] std::string planned_id_of(const nlohmann::json& record);
/// The device a record is of ("" for a case that is not per device).
[[nodiscard]] std::string device_id_of(const nlohmann::json& record);

/// True when `records` hold the whole planned case: a record that is not per device, or one
/// record per device of the case.
[[nodiscard]] bool case_complete(const std::vector<nlohmann::json>& records);

/// The devices an each-* case runs on in a job whose start record is `start`: "host:gpuK" for
/// every GPU of /system/gpus (each-gpu), every host of /system/nodes (each-node); each with its
/// host and GPU ordinal (-1 for a node).
struct PlannedDevice {
  std::string id;
  std::string host;
  int gpu = -1;
  std::string model;
};
[[nodiscard]] std::vector<PlannedDevice> devices_of(const CaseSpec& spec,
                                                    const nlohmann::json& start);

/// Records for a planned case that did not finish: for an each-* case, one per device of
/// `start` that `have` lacks (or one for the whole case when the devices are unknown);
/// otherwise one. `whole` is the record of the whole case (its status and message set).
[[nodiscard]] std::vector<nlohmann::json> unfinished_records(
    const CaseSpec& spec, const nlohmann::json& whole, const nlohmann::json& start,
    const std::vector<nlohmann::json>& have);

}  // namespace sb
