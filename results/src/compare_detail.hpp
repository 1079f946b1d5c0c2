#pragma once
/// @file compare_detail.hpp
/// (results internals) The parts of compare_reports that compare_ab_report shares.

#include <map>

#include <nlohmann/json.hpp>

#include "scalebench/compare.hpp"

namespace sb::results {

/// An A/B run's turns (their numbers, as the repeats name them) by round: its rounds of one
/// timed turn per side, counted from 0 within each case.
using TurnRounds = std::map<int, int>;

/// The verdict of current case `c` against baseline case `b` (null: none). `rounds` (an A/B
/// report): both sides measured side by side in one job, so the interval resamples the rounds
/// and the busy-machine rule is that of one machine shared turn by turn (busy_in_either); null for
/// two reports.
[[nodiscard]] CaseComparison compare_case(const nlohmann::json* b, const nlohmann::json& c,
                                          const CompareOptions& o, const TurnRounds* rounds);

/// A baseline case that current lacks: missing (or skipped).
[[nodiscard]] CaseComparison baseline_only(const nlohmann::json& b);

/// Throws sb::UsageError for a threshold or alpha out of range.
void check_options(const CompareOptions& o);

}  // namespace sb::results
