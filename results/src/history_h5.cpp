// History stores of earlier scalebench versions: one HDF5 file of flat tables, version 1
// (docs/history-schema.md, "Stores of earlier versions"). Read by `history show`, `report` and
// `import`; written only by tests, which need a real old store.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <string>
#include <tuple>

#include <fmt/format.h>

#include "h5_image.hpp"
#include "history_h5.hpp"
#include "scalebench/error.hpp"
#include "scalebench/h5_tree.hpp"
#include "scalebench/history.hpp"
#include "scalebench/stats.hpp"
#include "scalebench/system_identity.hpp"
#include "scalebench/utc_time.hpp"
#include "summary_util.hpp"

namespace sb::results {
namespace {

using h5::Column;
using h5::Handle;
using h5::Kind;
using json = nlohmann::json;
using detail::str;
using detail::sub;

constexpr const char* kKind = "scalebench history";
/// The HDF5 layout is history version 1; SQLite and PostgreSQL stores are kHistoryVersion.
constexpr int kHdf5Version = 1;

const std::vector<Column>& run_columns() {
  static const std::vector<Column> c{{"run", Kind::Int},
                                     {"commit", Kind::Str},
                                     {"time_utc", Kind::Str},
                                     {"host", Kind::Str},
                                     {"machine", Kind::Str},
                                     {"machine_text", Kind::Str},
                                     {"scalebench_version", Kind::Str},
                                     {"preset", Kind::Str},
                                     {"report", Kind::Str},
                                     {"added_utc", Kind::Str}};
  return c;
}

const std::vector<Column>& case_columns() {
  static const std::vector<Column> c{
      {"run", Kind::Int},     {"case", Kind::Str},     {"workload", Kind::Str},
      {"path", Kind::Str},    {"params", Kind::Str},   {"status", Kind::Str},
      {"repeats", Kind::Int}, {"fast_s", Kind::Float}, {"median_s", Kind::Float}};
  return c;
}

const std::vector<Column>& time_columns() {
  static const std::vector<Column> c{
      {"run", Kind::Int}, {"case", Kind::Str}, {"repeat", Kind::Int}, {"total", Kind::Float}};
  return c;
}

double num_or_nan(double v) {
  return std::isfinite(v) ? v : detail::kNaN;
}

json run_row(const HistoryRun& r) {
  return {{"run", r.id},
          {"commit", r.commit},
          {"time_utc", r.time_utc},
          {"host", r.host},
          {"machine", r.machine},
          {"machine_text", r.machine_text},
          {"scalebench_version", r.scalebench_version},
          {"preset", r.preset},
          {"report", r.report},
          {"added_utc", r.added_utc}};
}

void write_tables(hid_t file, const HistoryStore& store) {
  json runs = json::array(), cases = json::array(), times = json::array();
  for (const auto& r : store.runs) {
    runs.push_back(run_row(r));
    for (const auto& c : r.cases) {
      cases.push_back({{"run", r.id},
                       {"case", c.key},
                       {"workload", c.workload},
                       {"path", c.path},
                       {"params", c.params},
                       {"status", c.status},
                       {"repeats", c.totals.empty() ? c.repeats : c.totals.size()},
                       {"fast_s", num_or_nan(c.fast_s)},
                       {"median_s", num_or_nan(c.median_s)}});
      for (std::size_t i = 0; i < c.totals.size(); ++i)
        times.push_back({{"run", r.id}, {"case", c.key}, {"repeat", i}, {"total", c.totals[i]}});
    }
  }
  h5::write_attr(file, "kind", kKind);
  h5::write_attr(file, "history_version", kHdf5Version);
  if (!h5::write_table(file, "runs", runs, run_columns(), true) ||
      !h5::write_table(file, "cases", cases, case_columns(), true) ||
      !h5::write_table(file, "times", times, time_columns(), true))
    throw Error("internal error: a history table does not fit its columns");
}

std::string text(const json& row, const char* key) {
  return str(row, key);
}

long long integer(const json& row, const char* key) {
  const double v = detail::num(row, key, -1);
  return static_cast<long long>(v);
}

HistoryStore read_tables(hid_t file, const std::string& path) {
  const json attrs = h5::read_attrs(file);
  if (attrs.value("kind", json()) != kKind)
    throw UsageError(fmt::format("{} is an HDF5 file but not a scalebench history store", path));
  const json version = attrs.value("history_version", json());
  if (!version.is_number_integer() || version.get<long long>() != kHdf5Version)
    throw UsageError(fmt::format("history store {} has version {}; this scalebench reads {}", path,
                                 version.dump(), kHdf5Version));
  const json runs = h5::read_link(file, "runs");
  const json cases = h5::read_link(file, "cases");
  const json times = h5::read_link(file, "times");
  HistoryStore store;
  std::map<long long, std::size_t> by_id;
  for (const auto& row : runs.is_array() ? runs : json::array()) {
    HistoryRun r;
    r.id = integer(row, "run");
    r.commit = text(row, "commit");
    r.time_utc = text(row, "time_utc");
    r.host = text(row, "host");
    r.machine = text(row, "machine");
    r.machine_text = text(row, "machine_text");
    r.scalebench_version = text(row, "scalebench_version");
    r.preset = text(row, "preset");
    r.report = text(row, "report");
    r.added_utc = text(row, "added_utc");
    by_id[r.id] = store.runs.size();
    store.runs.push_back(std::move(r));
  }
  std::map<std::pair<long long, std::string>, HistoryCase*> case_of;
  for (const auto& row : cases.is_array() ? cases : json::array()) {
    const auto it = by_id.find(integer(row, "run"));
    if (it == by_id.end()) continue;
    HistoryCase c;
    c.key = text(row, "case");
    c.workload = text(row, "workload");
    c.path = text(row, "path");
    c.params = text(row, "params");
    c.status = text(row, "status");
    c.fast_s = detail::num(row, "fast_s");
    c.median_s = detail::num(row, "median_s");
    const double repeats = detail::num(row, "repeats", 0);
    c.repeats = repeats > 0 ? static_cast<std::size_t>(repeats) : 0;
    // The key is workload/path[/params][/device]: what follows the parameters is the device.
    const std::string head = c.workload + "/" + c.path + (c.params.empty() ? "" : "/" + c.params);
    if (c.key.size() > head.size() + 1 && c.key.rfind(head + "/", 0) == 0)
      c.device = c.key.substr(head.size() + 1);
    store.runs[it->second].cases.push_back(std::move(c));
  }
  for (auto& r : store.runs)
    for (auto& c : r.cases) case_of[{r.id, c.key}] = &c;
  for (const auto& row : times.is_array() ? times : json::array()) {
    const auto it = case_of.find({integer(row, "run"), text(row, "case")});
    const double t = detail::num(row, "total");
    if (it != case_of.end() && std::isfinite(t)) it->second->totals.push_back(t);
  }
  for (auto& r : store.runs)
    for (auto& c : r.cases)
      if (c.repeats == 0) c.repeats = c.totals.size();
  return store;
}

}  // namespace

HistoryStore read_history_h5(const std::string& path) {
  namespace fs = std::filesystem;
  h5::quiet_errors();
  std::error_code ec;
  if (!fs::exists(path, ec))
    throw UsageError(
        fmt::format("history store {} does not exist (`history add` creates it)", path));
  if (fs::is_directory(path, ec))
    throw UsageError(fmt::format("history store {} is a folder; a store is one .h5 file", path));
  bool hdf5 = false;
  try {
    hdf5 = SB_HDF5_CHECK(H5Fis_hdf5(path.c_str())) > 0;
  } catch (const LibraryError&) {
    hdf5 = false;
  }
  if (!hdf5) throw UsageError(fmt::format("{} is not an HDF5 file, so not a history store", path));
  try {
    Handle file{SB_HDF5_CHECK(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT)), H5Fclose};
    return read_tables(file.get(), path);
  } catch (const LibraryError&) {
    throw UsageError(fmt::format("history store {} is truncated or damaged", path));
  }
}

void write_history_h5(const HistoryStore& store, const std::string& path) {
  namespace fs = std::filesystem;
  h5::quiet_errors();
  SB_EXPECTS(!path.empty(), "the history store path is empty");
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (fs::exists(st) && !fs::is_regular_file(st))
    throw UsageError(fmt::format("cannot write history store {}: not a regular file", path));
  const std::vector<char> image = h5::file_image([&](hid_t file) { write_tables(file, store); });
  const h5::WriteFailure f =
      h5::write_durably(fmt::format("{}.tmp-{}", path, ::getpid()), path, image);
  if (f.err != 0)
    throw EnvironmentError(fmt::format("cannot write history store {}: {}: {} (errno {})", path,
                                       f.step, std::strerror(f.err), f.err));
}

}  // namespace sb::results
