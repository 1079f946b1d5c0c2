#include "run_report.hpp"

#include <unistd.h>

#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "scalebench/job_plan.hpp"
#include "scalebench/report.hpp"
#include "scalebench/settings.hpp"

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
  for (const auto& c : previous.value("cases", nlohmann::json::array())) {
    const std::string id = c.value("id", "");
    const auto it = index_of.find(id);
    if (it == index_of.end()) {
      unplanned_.push_back(c);
    } else if (c.value("status", "") == "ok") {
      nlohmann::json rec = c;
      rec["index"] = it->second;
      by_index_[it->second] = rec;
      kept_ids_[id] = true;
    }
  }
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
  by_index_[index] = std::move(record);
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

void RunReport::rebuild() {
  if (!dirty_) return;
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& [i, rec] : by_index_) arr.push_back(rec);
  int next = planned_;
  for (auto rec : unplanned_) {
    rec["index"] = next++;
    arr.push_back(std::move(rec));
  }
  model_["cases"] = std::move(arr);
  dirty_ = false;
}

const nlohmann::json& RunReport::model() {
  rebuild();
  return model_;
}

void RunReport::write() {
  rebuild();
  results::write_report(model_, path_, temp_dir_);
}

std::string RunReport::save_fallback() noexcept {
  try {
    rebuild();
    const std::string dir = settings::environment_variable("TMPDIR").value_or("/tmp");
    const std::string name = std::filesystem::path(path_).filename().string();
    const std::string fallback = (std::filesystem::path(dir.empty() ? "/tmp" : dir) /
                                  fmt::format("scalebench-unsaved-{}-{}", ::getpid(), name))
                                     .string();
    results::write_report(model_, fallback);
    return fallback;
  } catch (...) {
    return "";
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
