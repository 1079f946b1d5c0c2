#pragma once
/// @file html_charts.hpp
/// (private) The inline-SVG charts of the HTML page (html_charts.cpp) and their legends. Every
/// chart is `<svg class="chart" data-chart=KIND>`; every colour a chart paints is explained by a
/// swatch (`class="swatch"`) in the legend that follows it (tests/results/check_html_render.py
/// checks both in a browser).

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace sb::results::detail {

/// One legend entry: a colour and what it means.
struct LegendKey {
  std::string color;
  std::string text;
  bool line = false;  ///< drawn as a thin bar (a line in the chart) instead of a block
};
/// The opening tag of a chart: `<svg ... class="chart" data-chart=KIND MORE>`, `more` being
/// further attributes (` data-path="..."`).
std::string svg_open(const char* kind, double width, double height, const std::string& more = "");
/// `<div class="legend" data-legend=NAME>` with one swatch per key.
std::string html_legend(const std::string& name, const std::vector<LegendKey>& keys);

/// Colour of a phase (generate, compute, communicate, other; others brown).
std::string phase_color(const std::string& phase);
/// What a phase is, for legends ("other": the part of a repeat's wall time outside the
/// workers' phases).
std::string phase_meaning(const std::string& phase);

/// Speedup bars per workload (log axis around 1x), with their legend.
std::string speedup_charts(const nlohmann::json& summary);
/// Every repeat's total time per case (dots), quartile box, median and range; one chart per
/// workload on a shared log time axis, with the legend.
std::string distribution_charts(const nlohmann::json& model, const nlohmann::json& summary);
/// Speedup against parallel units (workers x threads, GPUs), one line per workload variant.
std::string scaling_chart(const nlohmann::json& model, const nlohmann::json& summary);
/// Median share of each phase in each case's total time, with the legend.
std::string phase_chart(const nlohmann::json& model);
/// The interconnect charts (html_link_charts.cpp): per path, bus bandwidth against message
/// size for the cases whose metrics hold a size sweep, and a heat map per case whose metrics
/// hold a pair matrix, each with its legend. Empty when no case has either.
std::string link_charts(const nlohmann::json& model);
/// The task stream of the first timed repeat of up to `max_cases` cases, with the legend.
std::string task_streams(const nlohmann::json& model, std::size_t max_cases,
                         std::size_t max_events);

/// Node acceptance (html_acceptance.cpp): the node x GPU heat map of the worst verdict per
/// device, with its legend; the verdict rows (all up to 64, else those not ok); the telemetry
/// timelines (SM clock, power, temperature; CPU clock, others' CPU use) of up to `max_cases`
/// cases, throttled repeats shaded, each with its legend.
std::string verdict_heatmap(const nlohmann::json& model);
std::string verdict_table(const nlohmann::json& model);
std::string telemetry_charts(const nlohmann::json& model, std::size_t max_cases);

/// Merged reports (html_merged.cpp): the fleet's nodes, those not ok and missing first, with
/// the command that re-submits them; the scaling study's table and chart (speedup against the
/// node count on log-2 axes, the ideal dashed), with its legend.
std::string fleet_section(const nlohmann::json& model);
std::string scaling_section(const nlohmann::json& model);

}  // namespace sb::results::detail
