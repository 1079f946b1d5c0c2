#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "report_layout.hpp"
#include "report_parts.hpp"
#include "scalebench/error.hpp"
#include "scalebench/h5_tree.hpp"
#include "scalebench/merge.hpp"
#include "scalebench/report.hpp"

namespace sb::results {
namespace {

using h5::Handle;
using json = nlohmann::json;

}  // namespace

/// `slim`: without what drop_series (merge.hpp) drops, never read.
json read_case(hid_t cases, const std::string& name, bool slim) {
  Handle g{SB_HDF5_CHECK(H5Gopen2(cases, name.c_str(), H5P_DEFAULT)), H5Gclose};
  json c;
  if (!slim) {
    c = h5::read_group(g.get());
  } else {
    c = h5::read_attrs(g.get());
    for (const auto& link : h5::link_names(g.get())) {
      const std::string key = h5::unescape_name(link);
      if (key == "task_events" || key == "results") continue;
      if (key != layout::kTelemetry) {
        c[key] = h5::read_link(g.get(), key);
        continue;
      }
      Handle t = h5::open_group(g.get(), key);
      json tel = h5::read_attrs(t.get());
      for (const auto& tl : h5::link_names(t.get()))
        if (const std::string k = h5::unescape_name(tl); k != "series")
          tel[k] = h5::read_link(t.get(), k);
      c[key] = std::move(tel);
    }
  }
  if (auto t = c.find(layout::kTimes); t != c.end() && t->is_array()) {
    json reps = json::array();
    for (auto& row : *t) {
      if (row.is_object()) row.erase("repeat");
      reps.push_back(std::move(row));
    }
    c.erase(layout::kTimes);
    c["repeats"] = std::move(reps);
  }
  return c;
}

json read_cases(hid_t parent, bool slim) {
  {
    const Handle obj{SB_HDF5_CHECK(H5Oopen(parent, layout::kCases, H5P_DEFAULT)), H5Oclose};
    if (SB_HDF5_CHECK(H5Iget_type(obj.get())) == H5I_DATASET)
      return read_cases_json(obj.get(), slim);
  }
  Handle g = h5::open_group(parent, layout::kCases);
  std::vector<std::pair<long long, std::string>> names;
  for (const auto& n : h5::link_names(g.get())) names.emplace_back(std::atoll(n.c_str()), n);
  std::sort(names.begin(), names.end());
  json cases = json::array();
  for (const auto& [i, n] : names) cases.push_back(read_case(g.get(), n, slim));
  return cases;
}

void read_system(hid_t parent, json& model) {
  Handle g = h5::open_group(parent, layout::kSystem);
  json sys = h5::read_group(g.get());
  if (auto st = sys.find(layout::kStartup); st != sys.end()) {
    model["startup"] = std::move(*st);
    sys.erase(layout::kStartup);
  }
  model["system"] = std::move(sys);
}

namespace {

json read_model(hid_t file, bool slim) {
  json model = json::object();
  json attrs = h5::read_attrs(file);
  for (const auto& name : h5::link_names(file)) {
    const std::string key = h5::unescape_name(name);
    if (key == layout::kSystem) {
      read_system(file, model);
    } else if (key == layout::kCases) {
      model["cases"] = read_cases(file, slim);
    } else if (key == layout::kAb) {
      model[layout::kAb] = read_ab(file);
    } else if (key == layout::kSummary) {
      continue;  // derived; summarize(model) recomputes it
    } else if (key == layout::kVerdicts) {
      model[layout::kVerdicts] = h5::read_link(file, key);
    } else if (key == layout::kPlan) {
      model[layout::kPlan] = h5::read_link(file, key);
    } else if (key == layout::kExtra) {
      Handle g = h5::open_group(file, key);
      json extra = h5::read_group(g.get());
      for (auto& [k, v] : extra.items()) model[k] = std::move(v);
    } else {
      attrs[key] = h5::read_link(file, key);
    }
  }
  model["attrs"] = std::move(attrs);
  return model;
}

}  // namespace

namespace {

json read_file(const std::string& path, bool slim) {
  namespace fs = std::filesystem;
  h5::quiet_errors();
  std::error_code ec;
  if (!fs::exists(path, ec)) throw UsageError(fmt::format("report {} does not exist", path));
  if (fs::is_directory(path, ec))
    throw UsageError(fmt::format("report {} is a folder, not a report file", path));

  bool hdf5 = false;
  try {
    hdf5 = SB_HDF5_CHECK(H5Fis_hdf5(path.c_str())) > 0;
  } catch (const LibraryError&) {
    hdf5 = false;
  }
  if (!hdf5)
    throw UsageError(fmt::format("{} is not an HDF5 file, so not a scalebench report", path));

  Handle file;
  try {
    file = Handle{SB_HDF5_CHECK(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT)), H5Fclose};
  } catch (const LibraryError&) {
    throw UsageError(fmt::format(
        "report {} is truncated or damaged: HDF5 cannot open it (re-run to write it again)", path));
  }

  try {
    if (SB_HDF5_CHECK(H5Aexists(file.get(), "schema_version")) <= 0)
      throw UsageError(fmt::format(
          "{} is an HDF5 file but not a scalebench report (no schema_version attribute)", path));
    const json version = h5::read_attrs(file.get()).value("schema_version", json());
    if (!version.is_number_integer())
      throw UsageError(
          fmt::format("{} is not a scalebench report (schema_version is not an integer)", path));
    if (version.get<long long>() != kSchemaVersion)
      throw UsageError(
          fmt::format("report {} has schema version {}; this scalebench reads version {}", path,
                      version.get<long long>(), kSchemaVersion));
    return read_model(file.get(), slim);
  } catch (const LibraryError&) {
    throw UsageError(fmt::format(
        "report {} is truncated or damaged: HDF5 cannot read part of it (re-run to write it again)",
        path));
  }
}

}  // namespace

nlohmann::json read_report(const std::string& path) {
  return read_file(path, false);
}

nlohmann::json read_report_slim(const std::string& path) {
  return read_file(path, true);
}

}  // namespace sb::results
