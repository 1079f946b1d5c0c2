/// The tidy formats, "csv" and "records" (docs/report-schema.md, "Tidy export"): one row per
/// case, or per timed repeat (per_repeat), every parameter a column of its own (param_<key>),
/// and the run's host, commit, version and times on every row, so that pandas, DuckDB or a
/// spreadsheet reads them as they are. CSV: RFC 4180, empty fields for missing values; records:
/// a JSON array of row objects, null for missing values.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "format_util.hpp"
#include "formats.hpp"
#include "report_layout.hpp"
#include "summary_util.hpp"

namespace sb::results::detail {

void TidyTable::set(Row& row, const std::string& column, json value) {
  if (std::find(columns.begin(), columns.end(), column) == columns.end()) columns.push_back(column);
  row[column] = std::move(value);
}

namespace {

json finite_or_null(const json& v) {
  if (v.is_number_float() && !std::isfinite(v.get<double>())) return nullptr;
  return v;
}

/// A parameter's value as a number when it is one ("20000" -> 20000), else the text.
json param_value(const json& v) {
  if (!v.is_string()) return v;
  const std::string s = v.get<std::string>();
  if (s.empty()) return s;
  char* end = nullptr;
  const double d = std::strtod(s.c_str(), &end);
  if (end == nullptr || *end != '\0' || !std::isfinite(d)) return s;
  if (s.find_first_of(".eE") == std::string::npos && std::abs(d) < 9.0e15)
    return static_cast<std::int64_t>(std::llround(d));
  return d;
}

std::string joined(const json& arr) {
  std::string out;
  for (const auto& h : arr.is_array() ? arr : json::array())
    out += (out.empty() ? "" : ";") + (h.is_string() ? h.get<std::string>() : h.dump());
  return out;
}

}  // namespace

void add_tidy_rows(TidyTable& t, const json& model, const json& summary, bool per_repeat,
                   const std::string* report) {
  const json& attrs = sub(model, "attrs");
  const json& cases = sub(model, "cases");
  for (std::size_t i = 0; i < summary.size(); ++i) {
    const json& s = summary[i];
    const json& c = cases.is_array() && i < cases.size() ? cases[i] : json::object();
    TidyTable::Row base;
    if (report != nullptr) t.set(base, "report", *report);
    for (const auto& col : layout::summary_columns())
      if (const auto it = s.find(col.name); it != s.end())
        t.set(base, col.name, finite_or_null(*it));
    const json& params = sub(c, "params");
    if (params.is_object())
      for (const auto& [k, v] : params.items()) t.set(base, "param_" + k, param_value(v));
    t.set(base, "preset", str(c, "preset"));
    t.set(base, "hosts", joined(sub(c, "hosts")));
    t.set(base, "device_id", str(c, "device_id"));
    t.set(base, "message", str(c, "message"));
    t.set(base, "started_utc", str(c, "started_utc"));
    t.set(base, "ended_utc", str(c, "ended_utc"));
    t.set(base, "run_host", str(attrs, "host"));
    t.set(base, "scheduler", str(attrs, "scheduler"));
    t.set(base, "job_id", str(attrs, "job_id"));
    t.set(base, "git_sha", str(attrs, "git_sha"));
    t.set(base, "scalebench_version", str(attrs, "scalebench_version"));
    t.set(base, "run_start_utc", str(attrs, "start_utc"));
    t.set(base, "run_status", str(attrs, "status"));
    if (!per_repeat) {
      t.rows.push_back(std::move(base));
      continue;
    }
    const json& reps = sub(c, "repeats");
    const bool leave_out = num(sub(c, "metrics"), "left_out_repeats", 0.0) > 0;
    for (std::size_t r = 0; reps.is_array() && r < reps.size(); ++r) {
      TidyTable::Row row = base;
      const json& rep = reps[r];
      t.set(row, "repeat", static_cast<std::int64_t>(r));
      for (const char* phase : {"total", "generate", "compute", "communicate"})
        t.set(row, std::string(phase) + "_s", finite_or_null(json(num(rep, phase))));
      t.set(row, "throttled",
            marked_repeat(json{{"throttled", rep.value("throttled", json(false))}}));
      t.set(row, "host_stalled",
            marked_repeat(json{{"host_stalled", rep.value("host_stalled", json(false))}}));
      t.set(row, "in_median", !(leave_out && marked_repeat(rep)));
      t.rows.push_back(std::move(row));
    }
  }
}

std::string tidy_csv(const TidyTable& t, bool header) {
  std::string out;
  if (header) {
    for (std::size_t c = 0; c < t.columns.size(); ++c)
      out += (c ? "," : "") + csv_field(t.columns[c]);
    out += '\n';
  }
  for (const auto& row : t.rows) {
    for (std::size_t c = 0; c < t.columns.size(); ++c) {
      if (c) out += ',';
      const auto it = row.find(t.columns[c]);
      if (it == row.end() || it->second.is_null()) continue;
      const json& v = it->second;
      if (v.is_string()) {
        out += csv_field(v.get<std::string>());
      } else if (v.is_boolean()) {
        out += v.get<bool>() ? "true" : "false";
      } else if (v.is_number_integer() || v.is_number_unsigned()) {
        out += v.dump();
      } else if (v.is_number()) {
        out += plain_number(v.get<double>());
      } else {
        out += csv_field(v.dump());
      }
    }
    out += '\n';
  }
  return out;
}

std::string tidy_records(const TidyTable& t) {
  json arr = json::array();
  for (const auto& row : t.rows) {
    json o = json::object();
    for (const auto& c : t.columns) {
      const auto it = row.find(c);
      o[c] = it == row.end() ? json(nullptr) : it->second;
    }
    arr.push_back(std::move(o));
  }
  return arr.dump(1) + '\n';
}

}  // namespace sb::results::detail
