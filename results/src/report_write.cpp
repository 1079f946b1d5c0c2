#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "h5_image.hpp"
#include "report_layout.hpp"
#include "report_parts.hpp"
#include "scalebench/error.hpp"
#include "scalebench/h5_tree.hpp"
#include "scalebench/report.hpp"

namespace sb::results {
namespace {

using h5::Handle;
using json = nlohmann::json;

bool is_scalar(const json& v) {
  return v.is_null() || v.is_boolean() || v.is_number() || v.is_string();
}

void set_units(hid_t parent, const char* name, const char* units) {
  Handle ds{SB_HDF5_CHECK(H5Dopen2(parent, name, H5P_DEFAULT)), H5Dclose};
  h5::set_text_attr(ds.get(), "units", units);
}

/// A table where the schema wants one; the generic form when the values do not fit a table.
void write_table_or_value(hid_t parent, const std::string& key, const json& v,
                          const std::vector<h5::Column>& cols) {
  if (!h5::write_table(parent, key, v, cols, true)) h5::write_value(parent, key, v);
}

/// A case's telemetry: its per-repeat table and its time series (columns, NaN = no reading).
void write_telemetry(hid_t parent, const json& t) {
  if (!t.is_object()) {
    h5::write_value(parent, layout::kTelemetry, t);
    return;
  }
  Handle g = h5::create_group(parent, layout::kTelemetry);
  if (const auto r = t.find("repeats"); r != t.end())
    write_table_or_value(g.get(), "repeats", *r, layout::telemetry_repeat_columns());
  if (const auto s = t.find("series"); s != t.end()) {
    if (h5::write_columns(g.get(), "series", *s, layout::telemetry_series_columns())) {
      set_units(g.get(), "series",
                "t: s since the worker's first timed repeat began; *_mhz: MHz; *_w: W; *_c: "
                "degrees Celsius");
    } else {
      h5::write_value(g.get(), "series", *s);
    }
  }
  h5::write_members(g.get(), t, {"repeats", "series"});
}

}  // namespace

void write_case(hid_t cases, std::size_t i, const json& c) {
  if (!c.is_object()) throw UsageError(fmt::format("report model: case {} is not an object", i));
  const auto wl = c.find("workload");
  const auto path = c.find("path");
  if (wl == c.end() || !wl->is_string() || path == c.end() || !path->is_string())
    throw UsageError(fmt::format("report model: case {} has no workload or path", i));
  Handle g = h5::create_group(
      cases, fmt::format("{:04d}_{}_{}", i, wl->get<std::string>(), path->get<std::string>()));
  if (const auto reps = c.find("repeats"); reps != c.end()) {
    bool done = false;
    if (reps->is_array() &&
        std::all_of(reps->begin(), reps->end(), [](const json& r) { return r.is_object(); })) {
      json rows = json::array();
      for (std::size_t r = 0; r < reps->size(); ++r) {
        json row = (*reps)[r];
        row["repeat"] = r;
        rows.push_back(std::move(row));
      }
      done = h5::write_table(g.get(), layout::kTimes, rows, layout::times_columns(), true);
      if (done) set_units(g.get(), layout::kTimes, "s");
    }
    if (!done) h5::write_value(g.get(), "repeats", *reps);
  }
  if (const auto v = c.find("validation"); v != c.end())
    write_table_or_value(g.get(), "validation", *v, layout::validation_columns());
  if (const auto te = c.find("task_events"); te != c.end()) {
    if (h5::write_columns(g.get(), "task_events", *te, layout::task_event_columns())) {
      set_units(g.get(), "task_events", "start, end: s since the case started; bytes: bytes");
    } else {
      h5::write_value(g.get(), "task_events", *te);
    }
  }
  if (const auto t = c.find(layout::kTelemetry); t != c.end()) write_telemetry(g.get(), *t);
  h5::write_members(g.get(), c, {"repeats", "validation", "task_events", layout::kTelemetry});
}

void write_system(hid_t parent, const json& system, const json* startup) {
  if (!system.is_object()) throw UsageError("report model: \"system\" is not an object");
  Handle sys = h5::create_group(parent, layout::kSystem);
  if (const auto n = system.find("nodes"); n != system.end())
    write_table_or_value(sys.get(), "nodes", *n, layout::node_columns());
  if (const auto gp = system.find("gpus"); gp != system.end())
    write_table_or_value(sys.get(), "gpus", *gp, layout::gpu_columns());
  if (const auto ce = system.find("ceilings"); ce != system.end())
    write_table_or_value(sys.get(), "ceilings", *ce, layout::ceiling_columns());
  if (startup != nullptr) {
    if (system.contains(layout::kStartup))
      throw UsageError("report model: both \"startup\" and \"system.startup\" are set");
    h5::write_value(sys.get(), layout::kStartup, *startup);
  }
  h5::write_members(sys.get(), system, {"nodes", "gpus", "ceilings"});
}

void write_cases(hid_t parent, const json& cases) {
  if (!cases.is_array()) throw UsageError("report model: \"cases\" is not an array");
  Handle g = h5::create_group(parent, layout::kCases);
  for (std::size_t i = 0; i < cases.size(); ++i) write_case(g.get(), i, cases[i]);
}

namespace {

void write_model(hid_t file, const json& model) {
  json attrs = model.value("attrs", json::object());
  if (!attrs.is_object()) throw UsageError("report model: \"attrs\" is not an object");
  attrs["schema_version"] = kSchemaVersion;
  for (const auto& [k, v] : attrs.items()) {
    if (!is_scalar(v) && (k == layout::kSystem || k == layout::kCases || k == layout::kSummary ||
                          k == layout::kExtra || k == layout::kVerdicts || k == layout::kAb))
      throw UsageError(fmt::format("report model: attrs.{} clashes with the /{} group", k, k));
    if (!is_scalar(v) && k == layout::kPlan)
      throw UsageError("report model: attrs.plan clashes with the /plan table");
  }
  h5::write_members(file, attrs);

  {
    const auto st = model.find("startup");
    write_system(file, model.value("system", json::object()), st != model.end() ? &*st : nullptr);
  }
  {
    static const json no_cases = json::array();
    const auto it = model.find("cases");
    const json& cases = it != model.end() ? *it : no_cases;  // by reference: cases can be large
    if (cases_as_json(model)) {
      write_cases_json(file, cases);
    } else {
      write_cases(file, cases);
    }
  }
  if (const auto ab = model.find(layout::kAb); ab != model.end()) write_ab(file, *ab);

  const json summary = summarize(model);
  if (!h5::write_table(file, layout::kSummary, summary, layout::summary_columns(), true))
    throw Error("internal error: the summary does not fit its table");
  set_units(file, layout::kSummary,
            "median_s, min_s, max_s, stddev_s: s; throughput: throughput_unit; speedups: ratio; "
            "efficiency: fraction of the ceiling; ceiling_value: ceiling_unit");

  if (const auto v = model.find(layout::kVerdicts); v != model.end()) {
    if (!h5::write_table(file, layout::kVerdicts, *v, layout::verdict_columns(), true))
      throw UsageError("report model: \"verdicts\" is not a table of flat rows");
    set_units(file, layout::kVerdicts, "value, expected, reference_s: s");
  }

  if (const auto p = model.find(layout::kPlan); p != model.end()) {
    if (!h5::write_table(file, layout::kPlan, *p, layout::plan_columns(), true))
      throw UsageError("report model: \"plan\" is not a table of flat rows");
  }

  const std::vector<std::string> known{"attrs",   "system",          "startup",   "cases",
                                       "summary", layout::kVerdicts, layout::kAb, layout::kPlan};
  bool has_extra = false;
  for (const auto& [k, v] : model.items())
    has_extra = has_extra || std::find(known.begin(), known.end(), k) == known.end();
  if (has_extra) {
    Handle g = h5::create_group(file, layout::kExtra);
    h5::write_members(g.get(), model, known);
  }
}

}  // namespace

ReportWriteError::ReportWriteError(const std::string& path, const std::string& step, int err)
    : EnvironmentError(fmt::format("cannot write report {}: {}: {} (errno {})", path, step,
                                   std::strerror(err), err)),
      path_(path),
      errno_(err) {}

void write_report(const nlohmann::json& model, const std::string& path,
                  const std::string& temp_dir) {
  namespace fs = std::filesystem;
  h5::quiet_errors();
  SB_EXPECTS(!path.empty(), "the report path is empty");
  SB_EXPECTS(model.is_object(), "report model: not a JSON object");
  // Never rename over something that is not a regular file (/dev/null, a pipe, a folder);
  // follow a symlink so that it keeps pointing at the new report.
  std::error_code ec;
  std::string target = path;
  if (fs::is_symlink(fs::symlink_status(path, ec))) {
    const fs::path resolved = fs::canonical(path, ec);
    if (!ec) target = resolved.string();
  }
  const fs::file_status st = fs::status(target, ec);
  if (fs::exists(st) && !fs::is_regular_file(st))
    throw UsageError(
        fmt::format("cannot write report {}: it exists and is not a regular file", path));
  const std::string tmp =
      temp_dir.empty() ? fmt::format("{}.tmp-{}", target, ::getpid())
                       : (fs::path(temp_dir) / fmt::format("report-{}.tmp", ::getpid())).string();

  // The file is built in memory before the disk is touched.
  const std::vector<char> image = h5::file_image([&](hid_t file) { write_model(file, model); });
  const h5::WriteFailure f = h5::write_durably(tmp, target, image);
  if (f.err != 0) throw ReportWriteError(path, f.step, f.err);
}

void rewrite_report_in_place(const nlohmann::json& model, const std::string& path) {
  h5::quiet_errors();
  SB_EXPECTS(model.is_object(), "report model: not a JSON object");
  const std::vector<char> image = h5::file_image([&](hid_t file) { write_model(file, model); });
  const h5::WriteFailure f = h5::write_in_place(path, image);
  if (f.err != 0) throw ReportWriteError(path, f.step, f.err);
}

}  // namespace sb::results
