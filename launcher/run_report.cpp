#include "run_report.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "device_records.hpp"
#include "scalebench/job_plan.hpp"
#include "scalebench/report.hpp"
#include "scalebench/settings.hpp"
#include "scalebench/utc_time.hpp"
#include "scalebench/verdicts.hpp"

namespace sb {

RunReport::RunReport(std::string path, std::string temp_dir, nlohmann::json attrs)
    : path_(std::move(path)), temp_dir_(std::move(temp_dir)) {
  model_ = {{"attrs", std::move(attrs)},
            {"system", nlohmann::json::object()},
            {"startup", nlohmann::json::object()},
            {"cases", nlohmann::json::array()}};
}

void RunReport::keep_previous(const nlohmann::json& previous,
                              const std::vector<CaseSpec>& planned) {
  planned_ = static_cast<int>(planned.size());
  if (previous.is_null()) return;
  model_["system"] = previous.value("system", nlohmann::json::object());
  model_["startup"] = previous.value("startup", nlohmann::json::object());
  std::map<std::string, int> index_of;
  for (const auto& c : planned) index_of[c.id] = c.index;
  // The records of each planned case: kept when all of them finished ok.
  std::map<std::string, std::vector<nlohmann::json>> of_planned;
  for (const auto& c : previous.value("cases", nlohmann::json::array())) {
    const std::string id = planned_id_of(c);
    if (index_of.count(id) == 0) {
      unplanned_.push_back(c);
    } else {
      of_planned[id].push_back(c);
    }
  }
  for (const auto& [id, recs] : of_planned) {
    const bool ok = std::all_of(recs.begin(), recs.end(), [](const nlohmann::json& c) {
      return c.value("status", "") == "ok";
    });
    if (!ok || !case_complete(recs)) continue;
    for (auto rec : recs) {
      rec["index"] = index_of[id];
      by_index_[{index_of[id], device_id_of(rec)}] = std::move(rec);
    }
    kept_ids_[id] = true;
  }
  dirty_ = true;
}

void RunReport::set_plan(const std::vector<CaseSpec>& planned) {
  nlohmann::json plan = nlohmann::json::array();
  for (const auto& c : planned)
    plan.push_back({{"index", c.index},
                    {"id", c.id},
                    {"workload", c.workload},
                    {"path", std::string(to_string(c.path))},
                    {"preset", c.preset}});
  model_["plan"] = std::move(plan);
  dirty_ = true;
}

void RunReport::set_start(const nlohmann::json& start) {
  model_["system"] = start.at("system");
  model_["startup"] = start.at("startup");
  dirty_ = true;
}

void RunReport::add_case(nlohmann::json record) {
  record.erase("type");
  const int index = record.value("index", 0);
  const std::string device = device_id_of(record);
  if (!device.empty()) by_index_.erase({index, ""});  // the planned case's not-run record
  by_index_[{index, device}] = std::move(record);
  dirty_ = true;
}

void RunReport::add_unplanned(nlohmann::json record) {
  record.erase("type");
  unplanned_.push_back(std::move(record));
  dirty_ = true;
}

void RunReport::finish(const std::string& status, int jobs) {
  model_["attrs"]["end_utc"] = utc_now();
  model_["attrs"]["jobs"] = jobs;
  model_["attrs"]["status"] = status;
}

void RunReport::set_attr(const std::string& key, const nlohmann::json& value) {
  model_["attrs"][key] = value;
}

void RunReport::set_member(const std::string& key, nlohmann::json value) {
  model_[key] = std::move(value);
}

void RunReport::set_references(results::ReferenceSet references) {
  references_ = std::move(references);
  dirty_ = true;
}

void RunReport::rebuild() {
  if (!dirty_) return;
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& [i, rec] : by_index_) arr.push_back(rec);
  int next = planned_;
  for (auto rec : unplanned_) {
    rec["index"] = next++;
    arr.push_back(std::move(rec));
  }
  if (!scaling_ids_.empty())
    for (auto& rec : arr) {
      const auto it = scaling_ids_.find(planned_id_of(rec));
      if (it != scaling_ids_.end()) rec["scaling_id"] = it->second;
    }
  model_["cases"] = std::move(arr);
  // One verdict per device record; none in a run without one.
  nlohmann::json verdicts = results::judge_devices(model_, references_);
  if (verdicts.empty()) {
    model_.erase("verdicts");
  } else {
    model_["verdicts"] = std::move(verdicts);
  }
  dirty_ = false;
}

void RunReport::set_scaling_ids(std::map<std::string, std::string> ids) {
  scaling_ids_ = std::move(ids);
  dirty_ = true;
}

const nlohmann::json& RunReport::model() {
  rebuild();
  return model_;
}

void RunReport::write() {
  rebuild();
  results::write_report(model_, path_, temp_dir_);
  written_ = model_;
}

std::string RunReport::save_fallback(std::string* why) noexcept {
  try {
    rebuild();
    const std::string dir = settings::environment_variable("TMPDIR").value_or("/tmp");
    const std::string name = std::filesystem::path(path_).filename().string();
    const std::string fallback = (std::filesystem::path(dir.empty() ? "/tmp" : dir) /
                                  fmt::format("scalebench-unsaved-{}-{}", ::getpid(), name))
                                     .string();
    results::write_report(model_, fallback);
    return fallback;
  } catch (const std::exception& e) {
    if (why != nullptr) *why = e.what();
    return "";
  } catch (...) {
    return "";
  }
}

bool RunReport::mark_last_written(const std::string& status) noexcept {
  try {
    if (written_.is_null()) return false;
    nlohmann::json last = written_;
    last["attrs"]["status"] = status;
    last["attrs"]["end_utc"] = utc_now();
    results::rewrite_report_in_place(last, path_);
    return true;
  } catch (...) {
    return false;
  }
}

int RunReport::count(const std::string& status) {
  int n = 0;
  for (const auto& c : model()["cases"])
    if (c.value("status", "") == status) ++n;
  return n;
}

bool RunReport::any_failed() {
  return count("failed") + count("timeout") > 0;
}

}  // namespace sb
