/// The text formats: "table" (a terminal or a log, fitted to a width), "markdown" (CI job
/// summaries), "csv", "json"; format_report and format_reports dispatch every format.

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "energy_figures.hpp"
#include "format_util.hpp"
#include "formats.hpp"
#include "report_layout.hpp"
#include "scalebench/error.hpp"
#include "scalebench/fleet.hpp"
#include "scalebench/report.hpp"
#include "scalebench/scaling.hpp"
#include "scalebench/verdicts.hpp"
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

/// Header lines describing the run (shared by table and markdown): the headline first.
std::vector<std::string> run_lines(const json& model) {
  const json& a = sub(model, "attrs");
  const Headline h = headline_of(model);
  std::vector<std::string> lines;
  lines.push_back(fmt::format("run {}: {}", h.status, h.tally));
  lines.push_back(fmt::format("scalebench {} (git {}), report schema {}",
                              attr_text(a, "scalebench_version"), attr_text(a, "git_sha"),
                              attr_text(a, "schema_version")));
  if (!h.hosts.empty()) {
    std::string host = "host " + h.hosts;
    if (!h.cpus.empty()) host += "; CPU " + h.cpus;
    host += "; GPU " + (h.gpus.empty() ? std::string("none") : h.gpus);
    lines.push_back(host);
  }
  lines.push_back(fmt::format("{}, preset {}; {} node(s), {} rank(s), {} worker(s)", h.job,
                              attr_text(a, "preset"), attr_text(a, "nodes"), attr_text(a, "ranks"),
                              attr_text(a, "workers")));
  if (!h.when.empty()) lines.push_back("run " + h.when);
  if (a.contains("command_line")) lines.push_back("command: " + attr_text(a, "command_line"));
  return lines;
}

/// Column order of the summary table.
enum Col {
  kCase,
  kRanOn,
  kStatus,
  kReps,
  kMedian,
  kNoise,
  kMin,
  kMax,
  kStddev,
  kThroughput,
  kVsCpu,
  kVsGpu,
  kEfficiency,
  kEnergy,
  kWorkPerJ,
  kCols
};

/// The noise column: the median's 95% interval as +-% of the median (nvbench's noise), and a
/// flag when the machine was busy, throttled or slowed while the case ran (the notes say how
/// much that explains).
std::string noise_text(const json& r) {
  const double s = num(r, "spread");
  std::string out = std::isfinite(s) ? fmt::format("\u00b1{}", human_percent(s)) : "-";
  const std::string why = str(r, "interference");
  if (!why.empty())
    out += why.find("other processes") != std::string::npos ? " busy"
           : why.find("quota") != std::string::npos         ? " quota"
                                                            : " slow";
  return out;
}

/// The summary's cells; the energy columns (last) only when a case has an energy figure.
std::vector<std::vector<std::string>> summary_cells(const json& summary,
                                                    const std::vector<std::string>& labels) {
  std::vector<std::vector<std::string>> rows{
      {"case", "workers", "status", "reps", "median", "noise", "min", "max", "stddev", "throughput",
       "vs 1cpu", "vs 1gpu", "efficiency", "energy", "work/J"}};
  const bool energy = any_energy_figure(summary);
  for (std::size_t i = 0; i < summary.size(); ++i) {
    const json& r = summary[i];
    const double eff = num(r, "efficiency");
    const std::string device = str(r, "path").find("gpu") != std::string::npos ? "gpu" : "cpu";
    rows.push_back(
        {labels[i], parallel_label(device, num(r, "workers"), num(r, "threads_per_worker")),
         str(r, "status"), fmt::format("{}", r.value("repeats", 0)),
         human_seconds(num(r, "median_s")), noise_text(r), human_seconds(num(r, "min_s")),
         human_seconds(num(r, "max_s")), human_seconds(num(r, "stddev_s")),
         human_rate(num(r, "throughput"), str(r, "throughput_unit")),
         human_ratio(num(r, "speedup_vs_single_cpu")), human_ratio(num(r, "speedup_vs_single_gpu")),
         human_percent(eff) + (eff > 1.0 ? "!" : ""), human_joules(num(r, "energy_j")),
         std::isfinite(num(r, "work_per_j"))
             ? human_rate(num(r, "work_per_j"), str(r, "work_per_j_unit"))
             : std::string("-")});
  }
  if (!energy)
    for (auto& row : rows) row.resize(kEnergy);
  return rows;
}

const std::vector<bool>& summary_right() {
  static const std::vector<bool> r{false, false, false, true, true, true, true, true,
                                   true,  true,  true,  true, true, true, true};
  return r;
}

/// Narrow widths drop these first (rank 1 first); 0: always shown. Columns with nothing in them
/// ("-" on every row, e.g. vs 1gpu without a GPU) go before any other, and do not come back.
AlignedLayout summary_layout(const std::vector<std::vector<std::string>>& rows, std::size_t width) {
  AlignedLayout l;
  const std::size_t cols = rows.front().size();  // kCols, or without the energy columns
  l.right = summary_right();
  l.right.resize(cols);
  l.drop.assign(kCols, 0);
  l.drop[kMin] = l.drop[kMax] = 2;
  l.drop[kStddev] = 3;
  l.drop[kReps] = 4;
  l.drop[kVsGpu] = 5;
  l.drop[kThroughput] = 6;
  l.drop[kEfficiency] = 7;
  l.drop[kVsCpu] = 8;
  l.drop[kNoise] = 9;
  l.drop[kEnergy] = l.drop[kWorkPerJ] = 2;
  l.drop.resize(cols);
  for (std::size_t c = 0; c < cols; ++c) {
    if (l.drop[c] == 0) continue;
    bool empty = true;
    for (std::size_t i = 1; i < rows.size(); ++i) empty = empty && rows[i][c] == "-";
    if (empty && rows.size() > 1) l.drop[c] = -1;
  }
  l.cheap_drops = 4;  // min, max, stddev and reps go before a case id is cut
  l.elide.assign(cols, false);
  l.elide[kCase] = true;
  l.width = width;
  return l;
}

/// Case ids without the parameters every case of their workload shares; `common` gets one
/// "workload: k=v,k=v" per workload that has any.
std::vector<std::string> short_ids(const json& summary, std::vector<std::string>* common) {
  std::vector<std::pair<std::string, std::vector<std::size_t>>> by_workload;  // first-seen order
  for (std::size_t i = 0; i < summary.size(); ++i) {
    const std::string wl = str(summary[i], "workload");
    auto it = std::find_if(by_workload.begin(), by_workload.end(),
                           [&](const auto& p) { return p.first == wl; });
    if (it == by_workload.end()) it = by_workload.insert(by_workload.end(), {wl, {}});
    it->second.push_back(i);
  }
  std::vector<std::string> out(summary.size());
  for (const auto& [wl, idx] : by_workload) {
    std::vector<CaseIdParts> parts;
    for (std::size_t i : idx) parts.push_back(split_case_id(str(summary[i], "case"), wl));
    const std::vector<std::string> shared = shared_params(parts);
    if (!shared.empty()) common->push_back(fmt::format("{}: {}", wl, fmt::join(shared, ",")));
    for (std::size_t k = 0; k < idx.size(); ++k) {
      std::vector<std::string> own;
      for (const auto& p : parts[k].params)
        if (std::find(shared.begin(), shared.end(), p) == shared.end()) own.push_back(p);
      out[idx[k]] = wl + "/" + parts[k].path +
                    (own.empty() ? "" : " " + fmt::format("{}", fmt::join(own, ",")));
    }
  }
  return out;
}

std::size_t widest_line(const std::string& text) {
  std::size_t w = 0, start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    w = std::max(w, display_width(text.substr(start, end - start)));
    start = end + 1;
  }
  return w;
}

/// `text` word-wrapped to `width` (0: one line): the first line starts with `first`, the others
/// with `rest`; each line ends in '\n'.
std::string wrapped(const std::string& text, std::size_t width, const std::string& first,
                    const std::string& rest) {
  const std::size_t lead = std::max(display_width(first), display_width(rest));
  const std::size_t room =
      width == 0 ? 0 : std::max<std::size_t>(20, width - std::min(width, lead));
  std::string out;
  const auto ls = wrap_words(text, room);
  for (std::size_t i = 0; i < ls.size(); ++i) out += (i == 0 ? first : rest) + ls[i] + '\n';
  return out;
}

constexpr const char* kNoiseNote =
    "noise: the median's 95% interval, \u00b1% of the median; busy, quota, slow: other "
    "processes, the cgroup CPU quota, or a lower clock or slower vector units took part of the "
    "machine while the case ran (its note says how much that explains)";

constexpr const char* kEfficiencyNote =
    "efficiency: achieved bytes/s or flop/s over the measured ceiling (GPU: copy bandwidth or "
    "fp64 GEMM; CPU: STREAM triad or DGEMM; times workers), or a case's floor over its time where "
    "generating its inputs takes longer at the Philox rate";

}  // namespace

std::string format_table(const json& model, const json& summary, std::size_t width) {
  std::string out;
  for (const auto& l : run_lines(model)) out += wrapped(l, width, "", "  ");
  out += '\n';
  std::vector<std::string> labels;
  for (const auto& r : summary) labels.push_back(str(r, "case"));
  auto rows = summary_cells(summary, labels);
  std::vector<std::string> common, dropped;
  if (width > 0 && widest_line(render_aligned(rows, summary_layout(rows, 0))) > width) {
    labels = short_ids(summary, &common);
    rows = summary_cells(summary, labels);
    for (const auto& c : common) out += wrapped(c, width, "parameters of ", "  ");
    if (!common.empty()) out += '\n';
  }
  out += render_aligned(rows, summary_layout(rows, width), &dropped);
  if (!dropped.empty())
    out += wrapped(fmt::format("{} hidden to fit {} columns (--wide shows every column)",
                               fmt::join(dropped, ", "), width),
                   width, "", "  ");
  out += '\n';
  out += wrapped(kNoiseNote, width, "", "  ");
  out += wrapped(kEfficiencyNote, width, "", "  ");
  if (const std::string c = ceilings_used(model, summary); !c.empty())
    out += wrapped(c, width, "", "  ");
  if (const std::string e = energy_note(summary); !e.empty()) out += wrapped(e, width, "", "  ");
  const auto notes = note_groups(summary, labels);
  if (!notes.empty()) {
    out += "\nnotes:\n";
    for (const auto& g : notes) {
      out +=
          wrapped(g.head + ": " + fmt::format("{}", fmt::join(g.cases, ", ")), width, "  ", "    ");
      if (!g.why.empty()) out += wrapped(g.why, width, "    ", "    ");
    }
  }
  if (const auto here = not_run_here_lines(model); !here.empty()) {
    out += "\nnot run here:\n";
    for (const auto& p : here) out += wrapped(p, width, "  ", "    ");
  }
  auto problems = problem_lines(model);
  for (const auto& l : never_run_lines(model)) problems.push_back(l);
  if (!problems.empty()) {
    out += "\nproblems:\n";
    for (const auto& p : problems) out += wrapped(p, width, "  ", "    ");
  }
  if (const auto next = next_lines(model); !next.empty()) {
    out += "\nnext:\n";
    for (const auto& n : next) out += wrapped(n, width, "  ", "    ");
  }
  if (const std::string v = format_verdicts_text(verdicts_of(model)); !v.empty()) {
    // Each entry fitted to the width: its continuation lines under its reason's indent.
    out += "\n";
    std::size_t start = 0;
    const std::string indent(10, ' ');
    while (start < v.size()) {
      const std::size_t end = v.find('\n', start);
      const std::string line = v.substr(start, end - start);
      if (width == 0 || display_width(line) <= width) {
        out += line + '\n';  // as aligned
      } else {
        out += line.rfind(indent, 0) == 0
                   ? wrapped(line.substr(indent.size()), width, indent, indent)
                   : wrapped(line, width, "", indent);
      }
      start = end == std::string::npos ? v.size() : end + 1;
    }
  }
  // Merged reports (merge.hpp): the fleet's nodes and the scaling study.
  if (const std::string f = format_fleet_text(model); !f.empty()) out += "\n" + f;
  if (const std::string sc = format_scaling_text(model); !sc.empty()) out += "\n" + sc;
  return out;
}

/// The verdicts of node acceptance: a line when every device is ok, else a table of those that
/// are not.
std::string markdown_verdicts(const json& verdicts) {
  if (!verdicts.is_array() || verdicts.empty()) return {};
  const std::size_t bad = count_not_ok(verdicts);
  std::string out = "\n### Verdicts\n\n";
  if (bad == 0 && unjudged_devices(verdicts).empty())
    return out + markdown_cell(format_verdicts_text(verdicts)) + "\n";
  std::vector<std::vector<std::string>> rows{
      {"verdict", "host", "device", "case", "value", "expected", "reason"}};
  for (const auto& v : verdicts) {
    if (str(v, "verdict") == "ok") continue;
    rows.push_back({str(v, "verdict"), str(v, "host"), verdict_device_text(v), str(v, "case"),
                    verdict_value_text(v, "value"), verdict_value_text(v, "expected"),
                    str(v, "reason")});
  }
  const std::string first = format_verdicts_text(verdicts);
  out += "**" + markdown_cell(first.substr(0, first.find('\n'))) + "**\n\n";
  return out + render_markdown(rows, {false, false, false, false, true, true, false});
}

/// A merged fleet (fleet.hpp): the nodes that are not ok or missing, and the re-submit command.
std::string markdown_fleet(const json& model) {
  if (!model.contains("fleet")) return {};
  std::string text = format_fleet_text(model);
  std::string out = "\n### Fleet\n\n" + markdown_cell(text.substr(0, text.find('\n'))) + "\n";
  std::vector<std::vector<std::string>> rows{{"node", "status", "verdict", "not ok", "why"}};
  for (const auto& r : fleet_nodes(model))
    if (str(r, "status") != "ok")
      rows.push_back({str(r, "host"), str(r, "status"), str(r, "verdict"),
                      fmt::format("{} of {}", static_cast<long long>(num(r, "not_ok", 0)),
                                  static_cast<long long>(num(r, "devices", 0))),
                      str(r, "worst")});
  if (rows.size() > 1) out += "\n" + render_markdown(rows, {false, false, false, true, false});
  if (const std::string cmd = str(sub(model, "fleet"), "resubmit"); !cmd.empty())
    out += "\nRe-submit the failed and missing nodes: `" + cmd + "`\n";
  return out;
}

/// A merged scaling study (scaling.hpp): its table.
std::string markdown_scaling(const json& model) {
  const json& rows = sub(sub(model, "scaling"), "rows");
  if (!rows.is_array() || rows.empty()) return {};
  std::vector<std::vector<std::string>> t{
      {"case", "nodes", "workers", "median", "speedup", "ideal", "efficiency", "status"}};
  for (const auto& r : rows) {
    const std::string device = str(r, "path") == "multi-gpu" ? "gpu" : "cpu";
    t.push_back({str(r, "case"), fmt::format("{}", static_cast<long long>(num(r, "nodes", 0))),
                 parallel_label(device, num(r, "workers"), num(r, "threads_per_worker")),
                 human_seconds(num(r, "median_s")), human_ratio(num(r, "speedup")),
                 std::isfinite(num(r, "ideal")) ? fmt::format("{:g}x", num(r, "ideal")) : "-",
                 human_percent(num(r, "efficiency")), str(r, "status")});
  }
  return fmt::format("\n### Scaling ({})\n\n", str(sub(model, "scaling"), "mode")) +
         render_markdown(t, {false, true, true, true, true, true, true, false});
}

std::string format_markdown(const json& model, const json& summary) {
  std::string out = "## scalebench report\n\n";
  const auto lines = run_lines(model);
  out += "**" + markdown_cell(lines.front()) + "**\n\n";
  for (std::size_t i = 1; i < lines.size(); ++i) out += "- " + markdown_cell(lines[i]) + '\n';
  out += '\n';
  std::vector<std::string> labels;
  for (const auto& r : summary) labels.push_back(str(r, "case"));
  const auto cells = summary_cells(summary, labels);
  std::vector<bool> right = summary_right();
  right.resize(cells.front().size());
  out += render_markdown(cells, right);
  out += std::string("\n_") + kNoiseNote + "_; _" + kEfficiencyNote + "_";
  if (const std::string c = ceilings_used(model, summary); !c.empty()) out += "; _" + c + "_";
  if (const std::string e = energy_note(summary); !e.empty()) out += "; _" + markdown_cell(e) + "_";
  out += '\n';
  const auto notes = note_groups(summary, labels);
  if (!notes.empty()) {
    out += "\n### Notes\n\n";
    for (const auto& g : notes)
      out += "- **" + markdown_cell(g.head) +
             "**: " + markdown_cell(fmt::format("{}", fmt::join(g.cases, ", "))) +
             (g.why.empty() ? "" : ". " + markdown_cell(g.why)) + '\n';
  }
  if (const auto here = not_run_here_lines(model); !here.empty()) {
    out += "\n### Not run here\n\n";
    for (const auto& p : here) out += "- " + markdown_cell(p) + '\n';
  }
  auto problems = problem_lines(model);
  for (const auto& l : never_run_lines(model)) problems.push_back(l);
  if (!problems.empty()) {
    out += "\n### Problems\n\n";
    for (const auto& p : problems) out += "- " + markdown_cell(p) + '\n';
  }
  if (const auto next = next_lines(model); !next.empty()) {
    out += "\n### Next\n\n```sh\n";
    for (const auto& n : next) out += n + '\n';
    out += "```\n";
  }
  out += markdown_verdicts(verdicts_of(model));
  out += markdown_fleet(model);
  out += markdown_scaling(model);
  return out;
}

std::string format_json(const json& model, const json& summary) {
  json out = model;
  out["summary"] = summary;
  out["verdicts"] = verdicts_of(model);
  return out.dump(2) + '\n';
}

}  // namespace detail

std::string format_report(const nlohmann::json& model, const std::string& format, std::size_t width,
                          bool per_repeat) {
  check_report_request(1, format, per_repeat);
  const nlohmann::json summary = summarize(model);
  if (format == "table") return detail::format_table(model, summary, width);
  if (format == "markdown") return detail::format_markdown(model, summary);
  if (format == "csv" || format == "records") {
    detail::TidyTable t;
    detail::add_tidy_rows(t, model, summary, per_repeat);
    return format == "csv" ? detail::tidy_csv(t) : detail::tidy_records(t);
  }
  if (format == "json") return detail::format_json(model, summary);
  if (format == "gbench-json") return detail::format_gbench(model, summary);
  if (format == "junit") return detail::format_junit(model, summary);
  return detail::format_html(model, summary);
}

void check_report_request(std::size_t files, const std::string& format, bool per_repeat) {
  if (per_repeat && format != "csv" && format != "records")
    throw UsageError(fmt::format(
        "--per-repeat applies to --format csv and records (one row per repeat), not {}", format));
  const auto& names = report_formats();
  if (std::find(names.begin(), names.end(), format) == names.end())
    throw UsageError(
        fmt::format("unknown report format '{}'; use one of {}", format, fmt::join(names, ", ")));
  const std::size_t n = files;
  if (n > 1 && (format == "html" || format == "gbench-json" || format == "junit"))
    throw UsageError(
        fmt::format("--format {} renders one report, not {}: run `scalebench report` once per file",
                    format, n));
}

std::string format_reports(const std::vector<NamedReport>& reports, const std::string& format,
                           std::size_t width, bool per_repeat) {
  check_report_request(reports.size(), format, per_repeat);
  // The formats for people name the file in the commands that finish an incomplete report.
  const bool for_people = format == "table" || format == "markdown" || format == "html";
  const auto named = [&](const NamedReport& r) {
    nlohmann::json m = r.model;
    m["file"] = r.name;
    return m;
  };
  if (reports.size() == 1)
    return format_report(for_people ? named(reports.front()) : reports.front().model, format, width,
                         per_repeat);
  if (format == "csv" || format == "records") {
    detail::TidyTable t;
    for (const auto& r : reports)
      detail::add_tidy_rows(t, r.model, summarize(r.model), per_repeat, &r.name);
    return format == "csv" ? detail::tidy_csv(t) : detail::tidy_records(t);
  }
  std::string out;
  if (format == "json") {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& r : reports) {
      nlohmann::json one = r.model;
      one["report"] = r.name;
      one["summary"] = summarize(r.model);
      arr.push_back(std::move(one));
    }
    return arr.dump(2) + '\n';
  }
  for (std::size_t i = 0; i < reports.size(); ++i) {
    const auto& r = reports[i];
    if (i > 0) out += '\n';
    if (format == "markdown") {
      out += "# " + detail::markdown_cell(r.name) + "\n\n";
    } else {
      out += "==> " + r.name + " <==\n";
    }
    out += format_report(for_people ? named(r) : r.model, format, width);
  }
  return out;
}

std::string format_rate(double value, const std::string& unit) {
  return detail::human_rate(value, unit);
}

const std::vector<std::string>& report_formats() {
  static const std::vector<std::string> names{"table", "markdown",    "csv",  "records",
                                              "json",  "gbench-json", "html", "junit"};
  return names;
}

}  // namespace sb::results
