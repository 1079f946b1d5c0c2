#pragma once
/// @file report_layout.hpp
/// (private) Names and fixed columns of the HDF5 report, schema version 1
/// (docs/report-schema.md). Shared by the writer and the reader.

#include <vector>

#include "scalebench/h5_tree.hpp"

namespace sb::results::layout {

inline constexpr const char* kSystem = "system";
inline constexpr const char* kStartup = "startup";  // /system/startup
inline constexpr const char* kCases = "cases";
inline constexpr const char* kSummary = "summary";
inline constexpr const char* kExtra = "extra";          // unknown top-level model keys
inline constexpr const char* kTimes = "times";          // per-case dataset for "repeats"
inline constexpr const char* kVerdicts = "verdicts";    // node acceptance, one row per device
inline constexpr const char* kTelemetry = "telemetry";  // per-case group
inline constexpr const char* kAb = "ab";                // an A/B run's sides (report_ab.cpp)
inline constexpr const char* kPlan = "plan";            // the run's planned cases, in order

using h5::Column;
using h5::Kind;

inline const std::vector<Column>& times_columns() {
  static const std::vector<Column> c{{"repeat", Kind::Int},    {"generate", Kind::Float},
                                     {"compute", Kind::Float}, {"communicate", Kind::Float},
                                     {"total", Kind::Float},   {"runtime", Kind::Float},
                                     {"messages", Kind::Float}};
  return c;
}

inline const std::vector<Column>& validation_columns() {
  static const std::vector<Column> c{{"name", Kind::Str},
                                     {"value", Kind::Float},
                                     {"limit", Kind::Float},
                                     {"pass", Kind::Bool},
                                     {"detail", Kind::Str}};
  return c;
}

inline const std::vector<Column>& task_event_columns() {
  static const std::vector<Column> c{
      {"repeat", Kind::Int},  {"worker", Kind::Int}, {"task", Kind::Int}, {"phase", Kind::Str},
      {"start", Kind::Float}, {"end", Kind::Float},  {"bytes", Kind::Int}};
  return c;
}

inline const std::vector<Column>& plan_columns() {
  static const std::vector<Column> c{{"index", Kind::Int},
                                     {"id", Kind::Str},
                                     {"workload", Kind::Str},
                                     {"path", Kind::Str},
                                     {"preset", Kind::Str}};
  return c;
}

inline const std::vector<Column>& node_columns() {
  static const std::vector<Column> c{{"host", Kind::Str},
                                     {"cpu_model", Kind::Str},
                                     {"cores", Kind::Int},
                                     {"numa_domains", Kind::Int},
                                     {"memory_bytes", Kind::Int}};
  return c;
}

inline const std::vector<Column>& gpu_columns() {
  static const std::vector<Column> c{{"host", Kind::Str},         {"index", Kind::Int},
                                     {"name", Kind::Str},         {"uuid", Kind::Str},
                                     {"memory_bytes", Kind::Int}, {"sm_count", Kind::Int},
                                     {"clock_mhz", Kind::Float},  {"memory_clock_mhz", Kind::Float},
                                     {"driver", Kind::Str},       {"pci_bus_id", Kind::Str}};
  return c;
}

inline const std::vector<Column>& ceiling_columns() {
  static const std::vector<Column> c{{"scope", Kind::Str},
                                     {"device", Kind::Str},
                                     {"kind", Kind::Str},
                                     {"value", Kind::Float},
                                     {"unit", Kind::Str}};
  return c;
}

inline const std::vector<Column>& verdict_columns() {
  static const std::vector<Column> c{{"host", Kind::Str},          {"device", Kind::Int},
                                     {"case", Kind::Str},          {"verdict", Kind::Str},
                                     {"value", Kind::Float},       {"expected", Kind::Float},
                                     {"reason", Kind::Str},        {"model", Kind::Str},
                                     {"path", Kind::Str},          {"workload", Kind::Str},
                                     {"record", Kind::Str},        {"peers", Kind::Int},
                                     {"reference_s", Kind::Float}, {"throttled_repeats", Kind::Int},
                                     {"link", Kind::Str},          {"unit", Kind::Str}};
  return c;
}

inline const std::vector<Column>& telemetry_repeat_columns() {
  static const std::vector<Column> c{{"repeat", Kind::Int},     {"worker", Kind::Int},
                                     {"host", Kind::Str},       {"gpu", Kind::Int},
                                     {"throttled", Kind::Bool}, {"throttle_reason", Kind::Str}};
  return c;
}

inline const std::vector<Column>& telemetry_series_columns() {
  static const std::vector<Column> c{
      {"worker", Kind::Int}, {"repeat", Kind::Int}, {"t", Kind::Float}};
  return c;
}

inline const std::vector<Column>& summary_columns() {
  static const std::vector<Column> c{{"case", Kind::Str},
                                     {"workload", Kind::Str},
                                     {"path", Kind::Str},
                                     {"workers", Kind::Int},
                                     {"threads_per_worker", Kind::Int},
                                     {"status", Kind::Str},
                                     {"repeats", Kind::Int},
                                     {"median_s", Kind::Float},
                                     {"min_s", Kind::Float},
                                     {"max_s", Kind::Float},
                                     {"stddev_s", Kind::Float},
                                     {"runtime_s", Kind::Float},
                                     {"throughput", Kind::Float},
                                     {"throughput_unit", Kind::Str},
                                     {"speedup_vs_single_cpu", Kind::Float},
                                     {"speedup_vs_single_gpu", Kind::Float},
                                     {"efficiency", Kind::Float},
                                     {"ceiling", Kind::Str},
                                     {"ceiling_value", Kind::Float},
                                     {"ceiling_unit", Kind::Str},
                                     {"notes", Kind::Str},
                                     {"throttled_repeats", Kind::Int},
                                     {"left_out_repeats", Kind::Int},
                                     {"verdict", Kind::Str},
                                     {"verdict_reason", Kind::Str},
                                     {"energy_j", Kind::Float},
                                     {"power_w", Kind::Float},
                                     {"work_per_j", Kind::Float},
                                     {"work_per_j_unit", Kind::Str},
                                     {"flop_per_j", Kind::Float},
                                     {"energy_source", Kind::Str},
                                     {"energy_unavailable", Kind::Str},
                                     {"spread", Kind::Float},
                                     {"interference", Kind::Str},
                                     {"interference_explains", Kind::Float}};
  return c;
}

}  // namespace sb::results::layout
