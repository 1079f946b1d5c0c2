#pragma once
/// @file compare_detail.hpp
/// (results internals) The parts of compare_reports that compare_ab_report shares.

#include <nlohmann/json.hpp>

#include "scalebench/compare.hpp"

namespace sb::results {

/// The verdict of current case `c` against baseline case `b` (null: none). `same_job`: both
/// measured side by side in one A/B run, so the busy-machine explanation does not apply.
[[nodiscard]] CaseComparison compare_case(const nlohmann::json* b, const nlohmann::json& c,
                                          const CompareOptions& o, bool same_job);

/// A baseline case that current lacks: missing (or skipped).
[[nodiscard]] CaseComparison baseline_only(const nlohmann::json& b);

/// Throws sb::UsageError for a threshold or alpha out of range.
void check_options(const CompareOptions& o);

}  // namespace sb::results
