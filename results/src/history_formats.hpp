#pragma once
/// @file history_formats.hpp
/// (private) The renderings of format_history (history.hpp) and the text they share.

#include <string>
#include <vector>

#include "scalebench/history.hpp"

namespace sb::results::history {

/// The first 12 characters of a commit.
std::string short_commit(const std::string& commit);
/// "step +8.1% (125.3 ms -> 135.4 ms)".
std::string step_text(const ChangePoint& s);
/// The hardware description of a machine fingerprint.
std::string machine_text_of(const std::vector<Trend>& trends, const std::string& machine);
/// "12 runs, last 1.23 s; step +8.1% (...) at #7 (commit abc, time)".
std::string trend_summary(const HistoryStore& store, const Trend& t);

/// Self-contained page: one inline SVG chart per trend, change points marked.
std::string html(const HistoryStore& store, const std::vector<Trend>& trends);
/// JSON: the runs, the machines and the trends with their steps.
std::string json_text(const HistoryStore& store, const std::vector<Trend>& trends);
/// OpenMetrics text exposition, one sample per run and case, timestamped with the run's time.
std::string openmetrics(const HistoryStore& store, const std::vector<Trend>& trends);

}  // namespace sb::results::history
