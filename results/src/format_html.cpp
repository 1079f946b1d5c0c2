/// One self-contained HTML page: no scripts, no external resources; charts are inline SVG.
/// It reads top-down like a dashboard: the headline (run status, case tally, host, CPU/GPU,
/// scheduler and job), what needs attention (notes, problems), the summary table, then the
/// charts (speedup, repeat distributions, scaling, phases, task streams), validation and the
/// system description with units.

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iterator>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "energy_figures.hpp"
#include "format_util.hpp"
#include "formats.hpp"
#include "html_charts.hpp"
#include "scalebench/verdicts.hpp"
#include "summary_util.hpp"

namespace sb::results::detail {
namespace {

constexpr const char* kStyle = R"(
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#222;max-width:1600px}
h1{font-size:1.5em;margin-bottom:0.3em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ddd}h3{font-size:1em}
table{border-collapse:collapse;font-size:0.85em;margin:8px 0}
th,td{border:1px solid #ddd;padding:2px 6px;text-align:left;white-space:nowrap}td.n{text-align:right;font-variant-numeric:tabular-nums}
th{background:#f3f3f3}.bad{color:#b00020;font-weight:600}.ok{color:#1b7f3b}.skip{color:#777}.warn{color:#9a5b00;font-weight:600}
tr.group th{background:#e9eef5;font-weight:600}
.scroll{overflow-x:auto}
#summary{width:100%}#summary td.id{width:100%;max-width:0;min-width:14em;overflow:hidden;text-overflow:ellipsis}
svg{font-size:11px;font-family:inherit}svg text{fill:#333}.note{color:#666;font-size:0.85em}
.headline{border:1px solid #ddd;border-radius:6px;padding:12px 16px;background:#fafafa}
.headline .status{font-size:1.4em;font-weight:700;margin:0 0 4px 0}
.headline .status.ok{color:#1b7f3b}.headline .status.bad{color:#b00020}
.headline .tally{margin:0 0 8px 0;font-size:1.05em}
.headline dl{display:grid;grid-template-columns:max-content auto;gap:2px 12px;margin:0;font-size:0.9em}
.headline dt{color:#666}.headline dd{margin:0;min-width:0;overflow-wrap:anywhere}
table.kv td{white-space:normal;overflow-wrap:anywhere}
.attention li{margin:4px 0}.attention .why{color:#444;font-weight:400}
.legend{font-size:0.8em;color:#444;margin:4px 0 12px 0}
.legend .key{display:inline-block;margin-right:16px;white-space:nowrap}
.legend .swatch{display:inline-block;width:11px;height:11px;margin-right:5px;vertical-align:-1px;border:1px solid #0002}
.legend .swatch.line{height:3px;vertical-align:3px}
)";

/// "1.23 GiB" for *_bytes, "2.40 GHz" for *_mhz, "12.3 ms" for *_s, else as recorded.
std::string value_text(const std::string& key, const json& v) {
  auto ends = [&](const char* suffix) {
    const std::string s(suffix);
    return key.size() >= s.size() && key.compare(key.size() - s.size(), s.size(), s) == 0;
  };
  if (v.is_number()) {
    const double x = v.get<double>();
    if (!std::isfinite(x)) return "-";
    if (ends("_bytes")) return human_bytes(x);
    if (ends("_mhz")) return human_mhz(x);
    if (ends("_s")) return human_seconds(x);
    if (v.is_number_float()) return fmt::format("{:.6g}", x);
    return v.dump();
  }
  if (v.is_string()) return v.get<std::string>().empty() ? "-" : v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  if (v.is_null()) return "-";
  return v.dump();
}

/// A table of an array of flat objects, with units: the columns `first` names (those present)
/// first, then the other keys in first-seen order.
std::string html_records(const json& rows, const std::vector<std::string>& first = {}) {
  if (!rows.is_array() || rows.empty()) return "<p class=\"note\">none</p>\n";
  std::vector<std::string> cols;
  for (const auto& k : first)
    for (const auto& r : rows)
      if (r.is_object() && r.contains(k)) {
        cols.push_back(k);
        break;
      }
  for (const auto& r : rows) {
    if (!r.is_object()) continue;
    for (const auto& [k, v] : r.items())
      if (std::find(cols.begin(), cols.end(), k) == cols.end()) cols.push_back(k);
  }
  std::string out = "<div class=\"scroll\"><table><tr>";
  for (const auto& c : cols) out += "<th>" + html_escape(c) + "</th>";
  out += "</tr>\n";
  for (const auto& r : rows) {
    out += "<tr>";
    for (const auto& c : cols) {
      const json v = r.is_object() ? r.value(c, json()) : json();
      out += std::string(v.is_number() ? "<td class=\"n\"" : "<td") +
             (v.is_number() ? " title=\"" + html_escape(v.dump()) + "\">" : ">") +
             html_escape(value_text(c, v)) + "</td>";
    }
    out += "</tr>\n";
  }
  return out + "</table></div>\n";
}

/// Key/value table of an object's members, with units (values wrap: a long path or command line
/// must not widen the page).
std::string html_object(const json& obj) {
  if (!obj.is_object() || obj.empty()) return "<p class=\"note\">none</p>\n";
  std::string out = "<table class=\"kv\">";
  for (const auto& [k, v] : obj.items())
    out += "<tr><th>" + html_escape(k) + "</th><td>" + html_escape(value_text(k, v)) + "</td></tr>";
  return out + "</table>\n";
}

/// The ceilings with their values in readable units ("20.0 GB/s" for value 2e10, unit B/s).
json readable_ceilings(const json& ceilings) {
  json out = json::array();
  for (const auto& c : ceilings.is_array() ? ceilings : json::array()) {
    json r = c;
    const std::string unit = str(c, "unit");
    const double v = num(c, "value");
    if (std::isfinite(v)) {
      std::string lower;
      for (char ch : unit) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      const std::string base = lower.find("flop") != std::string::npos ? "flop/s" : "B/s";
      r["value"] = human_rate(v * rate_unit_scale(unit), base);
      r.erase("unit");
    }
    out.push_back(std::move(r));
  }
  return out;
}

/// The run's attributes, the known ones first in reading order, then the rest.
std::string run_attributes(const json& a) {
  static const char* const order[] = {"status",
                                      "start_utc",
                                      "end_utc",
                                      "scheduler",
                                      "job_id",
                                      "nodes",
                                      "ranks",
                                      "workers",
                                      "preset",
                                      "jobs",
                                      "scalebench_version",
                                      "git_sha",
                                      "schema_version",
                                      "command_line"};
  json ordered = json::object();
  std::string out = "<table class=\"kv\">";  // the command line wraps
  auto row = [&](const std::string& k, const json& v) {
    std::string text = value_text(k, v);
    if (k == "job_id" && text == "-") text = "- (not a batch job)";
    out += "<tr><th>" + html_escape(k) + "</th><td>" + html_escape(text) + "</td></tr>";
  };
  for (const char* k : order)
    if (a.contains(k)) row(k, a[k]);
  for (const auto& [k, v] : a.items())
    if (std::find_if(std::begin(order), std::end(order), [&](const char* o) { return k == o; }) ==
        std::end(order))
      row(k, v);
  return out + "</table>\n";
}

std::string headline(const json& model) {
  const Headline h = headline_of(model);
  const bool good = h.status == "ok" && h.failed == 0 && h.timeout == 0;
  std::string out = fmt::format(
      "<section class=\"headline\" id=\"headline\" data-status=\"{}\" data-ok=\"{}\" "
      "data-failed=\"{}\" data-skipped=\"{}\">\n",
      html_escape(h.status), h.ok, h.failed + h.timeout, h.skipped);
  out += fmt::format("<p class=\"status {}\">Run {}</p>\n", good ? "ok" : "bad",
                     html_escape(h.status));
  out += fmt::format(
      "<p class=\"tally\"><span class=\"ok\">{} ok</span> · <span class=\"{}\">{} failed</span> "
      "· {} skipped{} — {} case{}</p>\n",
      h.ok, h.failed + h.timeout > 0 ? "bad" : "", h.failed + h.timeout, h.skipped,
      h.timeout > 0 ? fmt::format(" (of the failed, {} timed out)", h.timeout) : "", h.cases,
      h.cases == 1 ? "" : "s");
  out += "<dl>";
  auto fact = [&](const char* k, const std::string& v) {
    if (!v.empty()) out += fmt::format("<dt>{}</dt><dd>{}</dd>", k, html_escape(v));
  };
  fact("host", h.hosts);
  fact("CPU", h.cpus);
  fact("GPU", h.gpus.empty() ? "none" : h.gpus);
  fact("scheduler", h.job.substr(std::string("scheduler ").size()));
  fact("preset", h.preset);
  fact("run", h.when);
  const json& a = sub(model, "attrs");
  fact("scalebench", str(a, "scalebench_version") +
                         (str(a, "git_sha").empty() ? "" : " (git " + str(a, "git_sha") + ")"));
  fact("command", str(a, "command_line"));
  return out + "</dl>\n</section>\n";
}

/// What needs a reader's attention: every case note (above the ceiling, slower than its
/// reference) and the problems (cases not ok, grouped; failed checks).
std::string attention(const json& model, const json& summary) {
  std::string out;
  std::string notes;
  for (const auto& g : note_groups(summary)) {
    const bool warn = g.head.find("above the measured ceiling") != std::string::npos;
    std::string cases;
    for (const auto& c : g.cases) cases += (cases.empty() ? "" : ", ") + html_escape(c);
    notes += fmt::format(
        "<li class=\"{}\">{}<b>{}</b>: {}{}</li>\n", warn ? "warn" : "",
        warn ? "\xE2\x9A\xA0 " : "", html_escape(g.head), cases,
        g.why.empty() ? "" : "<br><span class=\"why\">" + html_escape(g.why) + "</span>");
  }
  if (!notes.empty())
    out += "<h2>Notes</h2>\n<ul class=\"attention\" id=\"notes\">\n" + notes + "</ul>\n";
  if (const auto here = not_run_here_lines(model); !here.empty()) {
    out += "<h2>Not run here</h2>\n<ul class=\"attention\" id=\"not-run-here\">\n";
    for (const auto& p : here) out += "<li>" + html_escape(p) + "</li>\n";
    out += "</ul>\n";
  }
  auto problems = problem_lines(model);
  for (const auto& l : never_run_lines(model)) problems.push_back(l);
  if (!problems.empty()) {
    out += "<h2>Problems</h2>\n<ul class=\"attention\" id=\"problems\">\n";
    for (const auto& p : problems) out += "<li class=\"bad\">" + html_escape(p) + "</li>\n";
    out += "</ul>\n";
  }
  if (const auto next = next_lines(model); !next.empty()) {
    out += "<h2>Next</h2>\n<pre id=\"next\">";
    for (const auto& n : next) out += html_escape(n) + "\n";
    out += "</pre>\n";
  }
  return out;
}

/// The summary, one group of rows per workload: the group's header says the parameters all its
/// cases share, each row the path and the parameters of its own (the whole id in its title).
/// It fits a 1280-pixel window without a sideways scroll: min, max and the standard deviation
/// are the median cell's title (the distribution chart draws them), the ceiling the efficiency
/// cell's, and the case column takes what the others leave (at least 14em), so a case's own
/// parameters too long for it end in "…" (the whole id is its title) whatever the other cells
/// hold (busy markers, energy columns).
std::string summary_table(const json& summary) {
  // Energy per answer where a case has a figure (joules per repeat, work per joule), as the text
  // table: a run with none says why once, under the table, not "n/a" in every row.
  const bool energy = any_energy_figure(summary);
  std::string out =
      "<div class=\"scroll\"><table id=\"summary\"><tr><th>case</th><th>workers</th>"
      "<th>status</th><th>reps</th><th>median</th><th title=\"the median's 95% interval, "
      "&#177;% of the median; busy, quota, slow: the machine was busy, held back by its cgroup's "
      "CPU quota or slowed while the case ran\">noise</th><th>throughput</th><th>vs "
      "1cpu</th><th>vs 1gpu</th><th>efficiency</th>";
  out += energy ? "<th>energy</th><th>work/J</th></tr>\n" : "</tr>\n";
  std::string workload;
  bool first = true;
  std::vector<std::string> shared;
  for (const auto& r : summary) {
    const std::string wl = str(r, "workload");
    if (first || wl != workload) {
      first = false;
      workload = wl;
      std::vector<CaseIdParts> parts;
      for (const auto& q : summary)
        if (str(q, "workload") == wl) parts.push_back(split_case_id(str(q, "case"), wl));
      shared = shared_params(parts);
      std::string common;
      for (const auto& p : shared) common += (common.empty() ? "" : ",") + p;
      out +=
          fmt::format("<tr class=\"group\"><th colspan=\"{}\">{}{}</th></tr>\n", energy ? 12 : 10,
                      html_escape(wl), common.empty() ? "" : " — " + html_escape(common));
    }
    const CaseIdParts id = split_case_id(str(r, "case"), wl);
    std::string own;
    for (const auto& p : id.params)
      if (std::find(shared.begin(), shared.end(), p) == shared.end())
        own += (own.empty() ? "" : ",") + p;
    const std::string status = str(r, "status");
    const double eff = num(r, "efficiency");
    const bool above = eff > 1.0;
    const std::string device = str(r, "path").find("gpu") != std::string::npos ? "gpu" : "cpu";
    const std::string ceiling =
        str(r, "ceiling").empty() ? std::string()
                                  : "of " + str(r, "ceiling") + " " +
                                        human_rate(num(r, "ceiling_value"), str(r, "ceiling_unit"));
    const double spread = num(r, "spread");
    const std::string busy = str(r, "interference");
    std::string noise = std::isfinite(spread) ? "&#177;" + human_percent(spread) : "-";
    if (!busy.empty())
      noise += busy.find("other processes") != std::string::npos ? " busy"
               : busy.find("quota") != std::string::npos         ? " quota"
                                                                 : " slow";
    const std::string range =
        std::isfinite(num(r, "min_s"))
            ? fmt::format("min {}, max {}, stddev {}", human_seconds(num(r, "min_s")),
                          human_seconds(num(r, "max_s")), human_seconds(num(r, "stddev_s")))
            : std::string();
    out += fmt::format(
        "<tr><td class=\"id\" title=\"{}\">{}{}</td><td>{}</td><td class=\"{}\">{}</td>"
        "<td class=\"n\">{}</td><td class=\"n\" title=\"{}\">{}</td><td class=\"n{}\" "
        "title=\"{}\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>"
        "<td class=\"n\">{}</td><td class=\"n{}\" title=\"{}\">{}</td>",
        html_escape(str(r, "case")), html_escape(id.path),
        own.empty() ? "" : " " + html_escape(own),
        html_escape(parallel_label(device, num(r, "workers"), num(r, "threads_per_worker"))),
        status == "ok"        ? "ok"
        : status == "skipped" ? "skip"
                              : "bad",
        html_escape(status), r.value("repeats", 0), range, human_seconds(num(r, "median_s")),
        busy.empty() ? "" : " warn",
        html_escape(busy.empty() ? "the median's 95% interval"
                                 : busy + fmt::format(": explains up to +{:.0f}%",
                                                      100.0 * num(r, "interference_explains"))),
        noise, html_escape(human_rate(num(r, "throughput"), str(r, "throughput_unit"))),
        human_ratio(num(r, "speedup_vs_single_cpu")), human_ratio(num(r, "speedup_vs_single_gpu")),
        above ? " warn" : "", html_escape(above ? str(r, "notes") : ceiling),
        (above ? "\xE2\x9A\xA0 " : "") + human_percent(eff));
    if (energy) {
      const std::string un = str(r, "energy_unavailable");
      out += fmt::format(
          "<td class=\"n\" title=\"{}\">{}</td><td class=\"n\">{}</td>",
          html_escape(un.empty() ? fmt::format("{}; {}", str(r, "energy_source"),
                                               std::isfinite(num(r, "power_w"))
                                                   ? fmt::format("{:.0f} W", num(r, "power_w"))
                                                   : std::string("-"))
                                 : "unavailable: " + un),
          un.empty() ? html_escape(human_joules(num(r, "energy_j"))) : std::string("n/a"),
          html_escape(std::isfinite(num(r, "work_per_j"))
                          ? human_rate(num(r, "work_per_j"), str(r, "work_per_j_unit"))
                          : std::string("-")));
    }
    out += "</tr>\n";
  }
  return out + "</table></div>\n";
}

std::string validation_section(const json& model) {
  std::string out;
  const json& cases = sub(model, "cases");
  for (const auto& c : cases.is_array() ? cases : json::array()) {
    const json& v = sub(c, "validation");
    const std::string status = str(c, "status");
    const bool bad = (status != "ok" && status != "skipped") || validation_failed(c);
    const std::string how = case_parallel_label(c);
    out +=
        fmt::format("<details{}><summary class=\"{}\">{}{} — {}{}</summary>\n", bad ? " open" : "",
                    bad                   ? "bad"
                    : status == "skipped" ? "skip"
                                          : "ok",
                    html_escape(case_label(c)), how == "-" ? "" : " (" + html_escape(how) + ")",
                    html_escape(status),
                    str(c, "message").empty() ? "" : ": " + html_escape(str(c, "message")));
    out += html_records(v);
    out += "</details>\n";
  }
  return out;
}

}  // namespace

std::string format_html(const json& model, const json& summary) {
  const json& a = sub(model, "attrs");
  const json& sys = sub(model, "system");
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  out += fmt::format("<title>scalebench report {}</title>\n", html_escape(str(a, "start_utc")));
  out += std::string("<style>") + kStyle + "</style></head><body>\n";
  out += "<h1>scalebench report</h1>\n" + headline(model);
  out += attention(model, summary);
  if (model.contains("fleet")) out += "<h2>Fleet</h2>\n" + fleet_section(model);
  if (model.contains("verdicts") || !verdicts_of(model).empty())
    out += "<h2>Verdicts</h2>\n" + verdict_heatmap(model) + verdict_table(model);
  if (model.contains("scaling")) out += "<h2>Scaling study</h2>\n" + scaling_section(model);
  out += "<h2>Summary</h2>\n" + summary_table(summary);
  out +=
      "<p class=\"note\">Workers: CPU cases as workers \xC3\x97 threads per worker, GPU cases as "
      "GPUs. Speedups compare throughput (work per second at the median time) with the "
      "single-cpu / single-gpu case of the same workload and parameters. Efficiency: achieved "
      "bytes/s or flop/s over the measured ceiling (GPU copy bandwidth or fp64 GEMM; CPU STREAM "
      "triad or DGEMM; times workers); the ceiling column names the kind and the value used";
  if (const std::string c = ceilings_used(model, summary); !c.empty()) out += "; " + html_escape(c);
  if (const std::string e = energy_note(summary); !e.empty()) out += ". " + html_escape(e);
  out += ".</p>\n";
  out += "<h2>Speedup</h2>\n" + speedup_charts(summary);
  out += "<h2>Repeat distributions</h2>\n" + distribution_charts(model, summary);
  out += "<h2>Scaling</h2>\n" + scaling_chart(model, summary);
  out += "<h2>Phase breakdown (median per phase)</h2>\n" + phase_chart(model);
  if (const std::string links = link_charts(model); !links.empty())
    out += "<h2>Interconnect</h2>\n" + links;
  out += "<h2>Task streams (first timed repeat)</h2>\n" + task_streams(model, 24, 5000);
  out += "<h2>Telemetry (timed repeats)</h2>\n" + telemetry_charts(model, 24);
  out += "<h2>Validation</h2>\n" + validation_section(model);
  out +=
      "<h2>System</h2>\n<h3>Nodes</h3>\n" +
      html_records(sub(sys, "nodes"),
                   {"host", "cpu_model", "sockets", "cores", "pus", "numa_domains", "memory_bytes",
                    "cpu_mhz", "l1d_cache_bytes", "l1d_cache_sharing", "l1i_cache_bytes",
                    "l1i_cache_sharing", "l2_cache_bytes", "l2_cache_sharing", "l3_cache_bytes",
                    "l3_cache_sharing", "load_avg_1m", "load_avg_5m", "load_avg_15m"});
  out += "<h3>GPUs</h3>\n" +
         html_records(sub(sys, "gpus"), {"host", "index", "name", "memory_bytes", "sm_count",
                                         "clock_mhz", "memory_clock_mhz"});
  out += "<h3>Ceilings</h3>\n" +
         html_records(readable_ceilings(sub(sys, "ceilings")),
                      {"scope", "host", "device", "worker_rank", "kind", "value", "threads"});
  out += "<h3>Versions</h3>\n" + html_object(sub(sys, "versions"));
  out += "<h3>Start-up</h3>\n" + html_object(sub(model, "startup"));
  if (sys.contains("topology"))
    out += "<h3>Topology</h3>\n<pre>" + html_escape(value_text("topology", sys["topology"])) +
           "</pre>\n";
  out += "<h3>Run</h3>\n" + run_attributes(a);
  out += "</body></html>\n";
  return out;
}

}  // namespace sb::results::detail
