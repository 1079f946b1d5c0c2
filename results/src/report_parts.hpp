#pragma once
/// @file report_parts.hpp
/// (private) The parts of the report's HDF5 layout that appear more than once: a report's
/// /system and /cases, and an A/B report's baseline side under /ab/baseline (report_ab.cpp).

#include <hdf5.h>

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

namespace sb::results {

/// `parent`/system from `system` and `startup` (null: none); `parent`/cases from `cases`.
void write_system(hid_t parent, const nlohmann::json& system, const nlohmann::json* startup);
void write_cases(hid_t parent, const nlohmann::json& cases);
/// One case group, `cases`/NNNN_workload_path.
void write_case(hid_t cases, std::size_t i, const nlohmann::json& c);

/// A merged report (attrs.merge set) keeps its cases as /cases, a 1-D dataset of one JSON text
/// per case (report_cases_json.cpp): read_cases reads either form.
[[nodiscard]] bool cases_as_json(const nlohmann::json& model);
void write_cases_json(hid_t parent, const nlohmann::json& cases);
[[nodiscard]] nlohmann::json read_cases_json(hid_t dataset, bool slim);

/// The inverses: model["system"] and model["startup"]; the cases in their order.
void read_system(hid_t parent, nlohmann::json& model);
/// `slim`: without the bulky arrays drop_series (merge.hpp) drops, which are not read.
[[nodiscard]] nlohmann::json read_cases(hid_t parent, bool slim = false);
[[nodiscard]] nlohmann::json read_case(hid_t cases, const std::string& name, bool slim = false);

/// /ab: an A/B run's settings, sides, turns and baseline side (docs/report-schema.md).
void write_ab(hid_t file, const nlohmann::json& ab);
[[nodiscard]] nlohmann::json read_ab(hid_t file);

}  // namespace sb::results
