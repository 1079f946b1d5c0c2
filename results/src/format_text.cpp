#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "format_util.hpp"
#include "formats.hpp"
#include "report_layout.hpp"
#include "scalebench/error.hpp"
#include "scalebench/report.hpp"
#include "summary_util.hpp"

namespace sb::results {
namespace detail {
namespace {

std::string attr_text(const json& attrs, const char* key) {
  const auto it = attrs.find(key);
  if (it == attrs.end() || it->is_null()) return "-";
  if (it->is_string())
    return it->get_ref<const std::string&>().empty() ? "-" : it->get<std::string>();
  return it->dump();
}

/// Header lines describing the run (shared by table and markdown).
std::vector<std::string> run_lines(const json& model) {
  const json& a = sub(model, "attrs");
  std::vector<std::string> lines;
  lines.push_back(fmt::format("scalebench {} (git {}), report schema {}, run status {}",
                              attr_text(a, "scalebench_version"), attr_text(a, "git_sha"),
                              attr_text(a, "schema_version"), attr_text(a, "status")));
  lines.push_back(fmt::format("run {} .. {}, scheduler {}, job {}, preset {}",
                              attr_text(a, "start_utc"), attr_text(a, "end_utc"),
                              attr_text(a, "scheduler"), attr_text(a, "job_id"),
                              attr_text(a, "preset")));
  lines.push_back(fmt::format("{} node(s), {} rank(s), {} worker(s)", attr_text(a, "nodes"),
                              attr_text(a, "ranks"), attr_text(a, "workers")));
  if (a.contains("command_line")) lines.push_back("command: " + attr_text(a, "command_line"));
  return lines;
}

std::vector<std::vector<std::string>> summary_cells(const json& summary) {
  std::vector<std::vector<std::string>> rows{{"case", "status", "reps", "median", "min", "max",
                                              "stddev", "throughput", "vs 1cpu", "vs 1gpu",
                                              "efficiency"}};
  for (const auto& r : summary) {
    rows.push_back({str(r, "case"), str(r, "status"), fmt::format("{}", r.value("repeats", 0)),
                    human_seconds(num(r, "median_s")), human_seconds(num(r, "min_s")),
                    human_seconds(num(r, "max_s")), human_seconds(num(r, "stddev_s")),
                    human_rate(num(r, "throughput"), str(r, "throughput_unit")),
                    human_ratio(num(r, "speedup_vs_single_cpu")),
                    human_ratio(num(r, "speedup_vs_single_gpu")),
                    human_percent(num(r, "efficiency"))});
  }
  return rows;
}

const std::vector<bool>& summary_right() {
  static const std::vector<bool> r{false, false, true, true, true, true,
                                   true,  true,  true, true, true};
  return r;
}

/// One line per case that did not finish ok or failed a check.
std::vector<std::string> problem_lines(const json& model) {
  std::vector<std::string> out;
  const json& cases = sub(model, "cases");
  if (!cases.is_array()) return out;
  for (const auto& c : cases) {
    const std::string status = str(c, "status", "unknown");
    if (status != "ok") {
      const std::string msg = str(c, "message");
      out.push_back(fmt::format("{}: {}{}", case_label(c), status, msg.empty() ? "" : ": " + msg));
    }
    const json& v = sub(c, "validation");
    if (!v.is_array()) continue;
    for (const auto& e : v) {
      if (!e.is_object() || !e.contains("pass") || !e["pass"].is_boolean() || e["pass"].get<bool>())
        continue;
      auto number = [](double x) { return std::isnan(x) ? std::string("-") : plain_number(x); };
      out.push_back(fmt::format("{}: check {} failed: value {}, limit {}{}", case_label(c),
                                str(e, "name"), number(num(e, "value")), number(num(e, "limit")),
                                str(e, "detail").empty() ? "" : " (" + str(e, "detail") + ")"));
    }
  }
  return out;
}

constexpr const char* kEfficiencyNote =
    "efficiency: achieved bytes/s or flop/s over the measured ceiling (GPU: copy bandwidth or "
    "fp64 GEMM; CPU: STREAM triad or DGEMM; times workers)";

}  // namespace

std::string format_table(const json& model, const json& summary) {
  std::string out;
  for (const auto& l : run_lines(model)) out += l + '\n';
  out += '\n';
  out += render_aligned(summary_cells(summary), summary_right());
  out += std::string("\n") + kEfficiencyNote + '\n';
  const auto problems = problem_lines(model);
  if (!problems.empty()) {
    out += "\nproblems:\n";
    for (const auto& p : problems) out += "  " + p + '\n';
  }
  return out;
}

std::string format_markdown(const json& model, const json& summary) {
  std::string out = "## scalebench report\n\n";
  for (const auto& l : run_lines(model)) out += "- " + markdown_cell(l) + '\n';
  out += '\n';
  out += render_markdown(summary_cells(summary), summary_right());
  out += std::string("\n_") + kEfficiencyNote + "_\n";
  const auto problems = problem_lines(model);
  if (!problems.empty()) {
    out += "\n### Problems\n\n";
    for (const auto& p : problems) out += "- " + markdown_cell(p) + '\n';
  }
  return out;
}

std::string format_csv(const json& summary) {
  std::string out;
  const auto& cols = layout::summary_columns();
  for (std::size_t c = 0; c < cols.size(); ++c) out += (c ? "," : "") + cols[c].name;
  out += '\n';
  for (const auto& r : summary) {
    for (std::size_t c = 0; c < cols.size(); ++c) {
      if (c) out += ',';
      const auto it = r.find(cols[c].name);
      if (it == r.end() || it->is_null()) continue;
      if (it->is_string()) {
        out += csv_field(it->get<std::string>());
      } else if (it->is_number_integer()) {
        out += it->dump();
      } else if (it->is_number()) {
        out += plain_number(it->get<double>());
      }
    }
    out += '\n';
  }
  return out;
}

std::string format_json(const json& model, const json& summary) {
  json out = model;
  out["summary"] = summary;
  return out.dump(2) + '\n';
}

}  // namespace detail

std::string format_report(const nlohmann::json& model, const std::string& format) {
  const auto& names = report_formats();
  if (std::find(names.begin(), names.end(), format) == names.end())
    throw UsageError(
        fmt::format("unknown report format '{}'; use one of {}", format, fmt::join(names, ", ")));
  const nlohmann::json summary = summarize(model);
  if (format == "table") return detail::format_table(model, summary);
  if (format == "markdown") return detail::format_markdown(model, summary);
  if (format == "csv") return detail::format_csv(summary);
  if (format == "json") return detail::format_json(model, summary);
  if (format == "gbench-json") return detail::format_gbench(model, summary);
  return detail::format_html(model, summary);
}

const std::vector<std::string>& report_formats() {
  static const std::vector<std::string> names{"table", "markdown",    "csv",
                                              "json",  "gbench-json", "html"};
  return names;
}

}  // namespace sb::results
