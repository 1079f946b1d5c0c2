// Merging reports into one (merge.hpp).
#include "scalebench/merge.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "scalebench/error.hpp"
#include "scalebench/report.hpp"
#include "scalebench/scaling.hpp"
#include "scalebench/verdicts.hpp"
#include "scalebench/version.hpp"
#include "summary_util.hpp"

namespace sb::results {
namespace {

using json = nlohmann::json;
using detail::num;
using detail::str;
using detail::sub;

void add_unique(std::vector<std::string>& list, const std::string& v) {
  if (!v.empty() && std::find(list.begin(), list.end(), v) == list.end()) list.push_back(v);
}

std::string joined(const std::vector<std::string>& list, const char* many) {
  if (list.size() == 1) return list.front();
  if (list.empty()) return {};
  std::string out = many;
  for (std::size_t i = 0; i < list.size(); ++i) out += (i == 0 ? ": " : ", ") + list[i];
  return out;
}

/// The match key compare and history use: workload, path, parameters and device.
std::string match_key(const json& c) {
  return str(c, "workload") + '\n' + detail::canonical_path(str(c, "path")) + '\n' +
         sub(c, "params").dump() + '\n' + str(c, "device_id");
}

/// The host a record ran on, as a device: `host:gpuK` for a single-gpu record.
std::string host_device(const json& c) {
  std::string host = str(c, "host");
  if (host.empty()) {
    const json& hosts = sub(c, "hosts");
    if (hosts.is_array() && !hosts.empty() && hosts[0].is_string())
      host = hosts[0].get<std::string>();
  }
  if (host.empty()) host = str(c, "source_host");
  if (detail::canonical_path(str(c, "path")) == "single-gpu" && num(c, "gpu") >= 0)
    host += fmt::format(":gpu{}", static_cast<long long>(num(c, "gpu")));
  return host;
}

/// Cases that occur in several reports are told apart (merge.hpp): "/nodes=K", "/HOST" or
/// "/report=N" appended to their id, the same in `device_id`.
void tell_apart(json& cases) {
  std::map<std::string, std::vector<std::size_t>> by_key;
  for (std::size_t i = 0; i < cases.size(); ++i) by_key[match_key(cases[i])].push_back(i);
  for (const auto& [key, idx] : by_key) {
    if (idx.size() < 2) continue;
    std::set<double> sources;
    for (const std::size_t i : idx) sources.insert(num(cases[i], "source", -1));
    if (sources.size() < 2) continue;  // one report's own repeats of a case stay as they are
    const auto disambiguate = [&](auto&& name_of) {
      std::set<std::string> names;
      for (const std::size_t i : idx) names.insert(name_of(cases[i]));
      return names.size() == idx.size();
    };
    std::function<std::string(const json&)> name_of;
    const auto by_nodes = [](const json& c) {
      return fmt::format("nodes={}", static_cast<long long>(num(c, "scaling_nodes", 0)));
    };
    const auto by_host = [](const json& c) { return host_device(c); };
    const auto by_report = [](const json& c) {
      return fmt::format("report={}", static_cast<long long>(num(c, "source", 0)));
    };
    if (std::all_of(idx.begin(), idx.end(),
                    [&](std::size_t i) { return num(cases[i], "scaling_nodes", 0) > 0; }) &&
        disambiguate(by_nodes)) {
      name_of = by_nodes;
    } else if (disambiguate(by_host)) {
      name_of = by_host;
    } else {
      name_of = by_report;
    }
    for (const std::size_t i : idx) {
      json& c = cases[i];
      const std::string name = name_of(c);
      if (!c.contains("planned_id")) c["planned_id"] = detail::case_label(c);
      c["id"] = detail::case_label(c) + "/" + name;
      const std::string device = str(c, "device_id");
      c["device_id"] = device.empty() ? name : device + "/" + name;
    }
  }
}

}  // namespace

void drop_series(nlohmann::json& model) {
  auto it = model.find("cases");
  if (it == model.end() || !it->is_array()) return;
  for (auto& c : *it) {
    if (!c.is_object()) continue;
    c.erase("task_events");
    c.erase("results");
    if (auto t = c.find("telemetry"); t != c.end() && t->is_object()) t->erase("series");
  }
}

ReportMerger::ReportMerger(MergeOptions options) : options_(std::move(options)) {}

void ReportMerger::add(const std::string& name, nlohmann::json model) {
  if (!model.is_object()) throw UsageError(fmt::format("cannot merge {}: not a report", name));
  const json& a = sub(model, "attrs");
  if (const auto v = a.find("schema_version");
      v != a.end() && (!v->is_number_integer() || v->get<long long>() != kSchemaVersion))
    throw UsageError(
        fmt::format("cannot merge {}: schema version {}; this scalebench merges "
                    "reports of schema version {}",
                    name, v->dump(), kSchemaVersion));
  if (!model.contains("cases") || !model["cases"].is_array())
    throw UsageError(fmt::format("cannot merge {}: it holds no cases", name));
  if (!options_.keep_series) drop_series(model);

  const std::size_t base = sources_.size();
  const bool merged = model.contains("sources") && model["sources"].is_array();
  if (merged) {
    for (auto row : model["sources"]) {
      row["source"] =
          static_cast<std::int64_t>(base + static_cast<std::size_t>(num(row, "source", 0)));
      sources_.push_back(std::move(row));
    }
  } else {
    json row = {{"source", static_cast<std::int64_t>(base)},
                {"report", name},
                {"job_id", str(a, "job_id")},
                {"host", str(a, "host")},
                {"git_sha", str(a, "git_sha")},
                {"scalebench_version", str(a, "scalebench_version")},
                {"start_utc", str(a, "start_utc")},
                {"end_utc", str(a, "end_utc")},
                {"status", str(a, "status")},
                {"scheduler", str(a, "scheduler")},
                {"nodes", static_cast<std::int64_t>(num(a, "nodes", 0))},
                {"cases", static_cast<std::int64_t>(model["cases"].size())},
                {"scaling_nodes", static_cast<std::int64_t>(num(a, "scaling_nodes", 0))},
                {"weak_scale", num(a, "weak_scale", 1.0)},
                {"superseded", false}};
    sources_.push_back(std::move(row));
  }
  const long long scaling_nodes = static_cast<long long>(num(a, "scaling_nodes", 0));
  for (auto& c : model["cases"]) {
    if (!c.is_object()) continue;
    if (merged) {
      c["source"] = static_cast<std::int64_t>(base + static_cast<std::size_t>(num(c, "source", 0)));
    } else {
      c["source"] = static_cast<std::int64_t>(base);
      c["source_report"] = name;
      c["source_job"] = str(a, "job_id");
      c["source_host"] = str(a, "host");
      c["source_commit"] = str(a, "git_sha");
      if (scaling_nodes > 0) c["scaling_nodes"] = scaling_nodes;
    }
    cases_.push_back(std::move(c));
  }

  // The system: every node and GPU once (the first report that describes it), every ceiling.
  const json& sys = sub(model, "system");
  for (const auto& n : sub(sys, "nodes"))
    if (hosts_.insert(str(n, "host")).second) nodes_.push_back(n);
  for (const auto& g : sub(sys, "gpus"))
    if (gpu_keys_.insert(str(g, "host") + '\n' + sub(g, "index").dump()).second) gpus_.push_back(g);
  for (const auto& c : sub(sys, "ceilings")) ceilings_.push_back(c);
  for (const auto& [k, v] : sub(sys, "versions").items())
    if (!versions_.contains(k)) versions_[k] = v;
  // Start-up: the slowest report's figure of each phase.
  for (const auto& [k, v] : sub(model, "startup").items())
    if (v.is_number() && (!startup_.contains(k) || v.get<double>() > startup_[k].get<double>()))
      startup_[k] = v;

  // Attributes over the reports.
  const auto earliest = [&](const char* key, bool first) {
    const std::string v = str(a, key);
    if (v.empty()) return;
    const std::string have = str(attrs_, key);
    if (have.empty() || (first ? v < have : v > have)) attrs_[key] = v;
  };
  earliest("start_utc", true);
  earliest("end_utc", false);
  const std::string status = str(a, "status");
  if (!status.empty() && status != "ok") attrs_["status"] = "failed";
  for (const auto& p : [&] {
         std::vector<std::string> out;
         std::string s = str(a, "preset");
         std::size_t start = 0;
         while (start <= s.size()) {
           const std::size_t comma = s.find(", ", start);
           out.push_back(s.substr(start, comma == std::string::npos ? comma : comma - start));
           if (comma == std::string::npos) break;
           start = comma + 2;
         }
         return out;
       }())
    add_unique(presets_, p);
  add_unique(schedulers_, str(a, "scheduler"));
  add_unique(sb_versions_, str(a, "scalebench_version"));
  add_unique(commits_, str(a, "git_sha"));
  add_unique(job_ids_, str(a, "job_id"));
  if (const std::string mode = str(a, "scaling_mode"); !mode.empty()) {
    const std::string have = str(attrs_, "scaling_mode");
    attrs_["scaling_mode"] = have.empty() || have == mode ? mode : std::string("mixed");
  }
  ranks_ += static_cast<std::size_t>(num(a, "ranks", 0));
  workers_ += static_cast<std::size_t>(num(a, "workers", 0));
}

std::vector<std::string> ReportMerger::keep_newest_per_host() {
  std::map<std::string, std::vector<std::size_t>> by_host;
  for (std::size_t i = 0; i < sources_.size(); ++i)
    if (!str(sources_[i], "host").empty()) by_host[str(sources_[i], "host")].push_back(i);
  std::set<std::int64_t> dropped;
  std::vector<std::string> notes;
  for (const auto& [host, idx] : by_host) {
    if (idx.size() < 2) continue;
    std::size_t newest = idx.front();
    for (const std::size_t i : idx)
      if (str(sources_[i], "start_utc") >= str(sources_[newest], "start_utc")) newest = i;
    std::string others;
    for (const std::size_t i : idx) {
      if (i == newest) continue;
      dropped.insert(static_cast<std::int64_t>(i));
      sources_[i]["superseded"] = true;
      others += (others.empty() ? "" : ", ") + str(sources_[i], "report");
    }
    notes.push_back(fmt::format("{}: {} reports, the newest kept ({}, {}); left out: {}", host,
                                idx.size(), str(sources_[newest], "report"),
                                str(sources_[newest], "start_utc"), others));
  }
  if (dropped.empty()) return notes;
  json kept = json::array();
  for (auto& c : cases_)
    if (dropped.count(static_cast<std::int64_t>(num(c, "source", -1))) == 0)
      kept.push_back(std::move(c));
  cases_ = std::move(kept);
  return notes;
}

nlohmann::json ReportMerger::finish(const ReferenceSet& references, const MergeFleet* fleet) {
  if (sources_.empty() && fleet == nullptr) throw UsageError("nothing to merge: no report given");
  tell_apart(cases_);
  json attrs = attrs_;
  attrs["schema_version"] = kSchemaVersion;
  attrs["scalebench_version"] = joined(sb_versions_, "mixed");
  attrs["git_sha"] = joined(commits_, "mixed");
  attrs["merged_by"] = std::string(version()) + " (" + git_sha() + ")";
  attrs["command_line"] = options_.command_line;
  attrs["scheduler"] = schedulers_.size() == 1 ? schedulers_.front() : joined(schedulers_, "mixed");
  attrs["job_id"] = job_ids_.size() == 1 ? job_ids_.front() : std::string();
  attrs["nodes"] = static_cast<std::int64_t>(nodes_.size());
  attrs["ranks"] = static_cast<std::int64_t>(ranks_);
  attrs["workers"] = static_cast<std::int64_t>(workers_);
  std::string presets;
  for (const auto& p : presets_) presets += (presets.empty() ? "" : ", ") + p;
  attrs["preset"] = presets;
  if (!attrs.contains("status")) attrs["status"] = "ok";
  if (fleet != nullptr && !fleet->missing.empty()) attrs["status"] = "failed";
  attrs["merged_reports"] = static_cast<std::int64_t>(sources_.size());
  attrs["merge"] = fleet != nullptr                 ? "fleet"
                   : attrs.contains("scaling_mode") ? "scaling"
                                                    : "reports";
  for (const char* k : {"start_utc", "end_utc"})
    if (!attrs.contains(k)) attrs[k] = "";

  json model = {{"attrs", std::move(attrs)},
                {"system",
                 {{"nodes", std::move(nodes_)},
                  {"gpus", std::move(gpus_)},
                  {"ceilings", std::move(ceilings_)},
                  {"versions", std::move(versions_)}}},
                {"startup", std::move(startup_)},
                {"cases", std::move(cases_)},
                {"sources", std::move(sources_)}};
  json verdicts = judge_devices(model, references);
  if (!verdicts.empty()) model["verdicts"] = std::move(verdicts);
  if (json s = scaling_table(model); !s.is_null()) model["scaling"] = std::move(s);
  if (fleet != nullptr) {
    json missing = json::array();
    for (const auto& m : fleet->missing)
      missing.push_back(
          {{"element", m.element}, {"node", m.node}, {"job_id", m.job_id}, {"reason", m.reason}});
    json dup = json::array();
    for (const auto& d : fleet->duplicates) dup.push_back(d);
    model["fleet"] = {
        {"elements", static_cast<std::int64_t>(fleet->elements)},
        {"reported", static_cast<std::int64_t>(fleet->elements -
                                               std::min(fleet->elements, fleet->missing.size()))},
        {"missing", std::move(missing)},
        {"duplicates", std::move(dup)},
        {"resubmit", fleet->resubmit}};
  }
  cases_ = json::array();
  sources_ = json::array();
  return model;
}

}  // namespace sb::results
