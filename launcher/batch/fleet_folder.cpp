/// @file fleet_folder.cpp
/// The run folder of a fleet sweep and its manifest (fleet_folder.hpp).

#include "batch/fleet_folder.hpp"

#include "batch/submit.hpp"
#include "scalebench/printable.hpp"

#include <scalebench/error.hpp>

#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace sb::batch {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::vector<std::string> strings(const json& j, const char* key) {
  std::vector<std::string> out;
  const auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return out;
  for (const auto& v : *it)
    if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

/// "0-3,7,9-10" of sorted, distinct indices.
std::string index_list(std::vector<int> idx) {
  std::sort(idx.begin(), idx.end());
  idx.erase(std::unique(idx.begin(), idx.end()), idx.end());
  std::string out;
  for (std::size_t i = 0; i < idx.size();) {
    std::size_t j = i;
    while (j + 1 < idx.size() && idx[j + 1] == idx[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(idx[i]) +
           (j > i ? "-" + std::to_string(idx[j]) : std::string());
    i = j + 1;
  }
  return out;
}

}  // namespace

std::string node_element(const std::string& node) {
  return "node-" + node;
}

std::string array_element(int index) {
  return "element-" + std::to_string(index);
}

int array_element_index(const std::string& element) {
  if (element.rfind("element-", 0) != 0 || element.size() == 8 || element.size() > 17) return -1;
  const std::string digits = element.substr(8);
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return -1;
  return std::stoi(digits);
}

std::string readable_word(const std::string& w) {
  const bool plain = !w.empty() && std::all_of(w.begin(), w.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
           std::string_view("_./%+,=@:-").find(c) != std::string_view::npos;
  });
  return plain ? w : shell_quote(w);
}

FleetManifest read_fleet_manifest(const std::string& dir, bool* found) {
  const fs::path path = fs::path(dir) / kFleetManifest;
  FleetManifest m;
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    if (found != nullptr) *found = false;
    return m;
  }
  if (found != nullptr) *found = true;
  std::ifstream in(path);
  json j;
  try {
    j = json::parse(in);
  } catch (const std::exception& e) {
    throw UsageError(path.string() + " is not a fleet manifest: " + printable(e.what()));
  }
  if (!j.is_object() || j.value("format", "") != "scalebench-fleet")
    throw UsageError(path.string() +
                     " is not a fleet manifest (no \"format\": " + "\"scalebench-fleet\")");
  if (j.value("version", 0) != 1)
    throw UsageError(path.string() + ": fleet manifest version " +
                     j.value("version", json()).dump() + "; this scalebench reads version 1");
  m.scheduler = j.value("scheduler", "");
  m.submit_args = strings(j, "submit");
  m.run_args = strings(j, "run");
  if (const auto it = j.find("elements"); it != j.end() && it->is_array())
    for (const auto& e : *it) {
      if (!e.is_object()) continue;
      m.elements.push_back({e.value("element", ""), e.value("node", ""), e.value("job_id", ""),
                            e.value("submitted_utc", "")});
    }
  return m;
}

void write_fleet_manifest(const std::string& dir, const FleetManifest& m) {
  json elements = json::array();
  for (const auto& e : m.elements)
    elements.push_back({{"element", e.element},
                        {"node", e.node},
                        {"job_id", e.job_id},
                        {"submitted_utc", e.submitted_utc}});
  const json j = {{"format", "scalebench-fleet"}, {"version", 1},      {"scheduler", m.scheduler},
                  {"submit", m.submit_args},      {"run", m.run_args}, {"elements", elements}};
  const fs::path path = fs::path(dir) / kFleetManifest;
  const fs::path tmp =
      fs::path(dir) / (std::string(kFleetManifest) + ".tmp-" + std::to_string(::getpid()));
  {
    std::ofstream out(tmp);
    out << j.dump(1) << "\n";
    out.flush();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw EnvironmentError("cannot write the fleet manifest " + printable(path.string()));
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw EnvironmentError("cannot write the fleet manifest " + printable(path.string()));
  }
}

void add_elements(FleetManifest& m, const std::vector<FleetElement>& elements) {
  for (const auto& e : elements) {
    const auto it = std::find_if(m.elements.begin(), m.elements.end(),
                                 [&](const FleetElement& x) { return x.element == e.element; });
    if (it != m.elements.end()) {
      *it = e;
    } else {
      m.elements.push_back(e);
    }
  }
}

std::string resubmit_command(const FleetManifest& m, const std::string& dir,
                             const std::vector<std::string>& nodes,
                             const std::vector<int>& indices) {
  if (nodes.empty() && indices.empty()) return {};
  std::vector<std::string> words{"scalebench", "submit"};
  words.insert(words.end(), m.submit_args.begin(), m.submit_args.end());
  words.insert(words.end(), {"--fleet-dir", dir});
  if (!nodes.empty()) {
    std::string list;
    for (const auto& n : nodes) list += (list.empty() ? "" : ",") + n;
    words.insert(words.end(), {"--fleet-nodes", list});
  }
  if (!indices.empty()) words.insert(words.end(), {"--fleet-elements", index_list(indices)});
  words.emplace_back("--");
  words.insert(words.end(), m.run_args.begin(), m.run_args.end());
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + readable_word(w);
  return out;
}

}  // namespace sb::batch
