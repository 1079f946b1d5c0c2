// The records of a planned case, one or one per device (device_records.hpp).
#include "device_records.hpp"

#include <set>

#include <fmt/format.h>

namespace sb {

std::string planned_id_of(const nlohmann::json& r) {
  const auto it = r.find("planned_id");
  if (it != r.end() && it->is_string() && !it->get<std::string>().empty())
    return it->get<std::string>();
  return r.value("id", std::string());
}

std::string device_id_of(const nlohmann::json& r) {
  const auto it = r.find("device_id");
  return it != r.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool case_complete(const std::vector<nlohmann::json>& records) {
  if (records.empty()) return false;
  for (const auto& r : records)
    if (device_id_of(r).empty()) return true;
  const int devices = records.front().value("devices", 0);
  std::set<std::string> ids;
  for (const auto& r : records) ids.insert(device_id_of(r));
  return static_cast<int>(ids.size()) >= devices;
}

std::vector<PlannedDevice> devices_of(const CaseSpec& spec, const nlohmann::json& start) {
  std::vector<PlannedDevice> out;
  if (!is_each_device(spec.path) || !start.is_object()) return out;
  const nlohmann::json system = start.value("system", nlohmann::json::object());
  if (spec.path == ExecPath::each_gpu) {
    for (const auto& g : system.value("gpus", nlohmann::json::array())) {
      const std::string host = g.value("host", std::string());
      const int k = g.value("node_gpu", g.value("index", -1));
      out.push_back({fmt::format("{}:gpu{}", host, k), host, k, g.value("name", std::string())});
    }
  } else {
    for (const auto& n : system.value("nodes", nlohmann::json::array())) {
      const std::string host = n.value("host", std::string());
      out.push_back({host, host, -1, n.value("cpu_model", std::string())});
    }
  }
  return out;
}

std::vector<nlohmann::json> unfinished_records(const CaseSpec& spec, const nlohmann::json& whole,
                                               const nlohmann::json& start,
                                               const std::vector<nlohmann::json>& have) {
  const std::vector<PlannedDevice> devices = devices_of(spec, start);
  if (devices.empty()) return {whole};
  std::set<std::string> reported;
  for (const auto& r : have) reported.insert(device_id_of(r));
  std::vector<nlohmann::json> out;
  for (const auto& d : devices) {
    if (reported.count(d.id) != 0) continue;
    nlohmann::json r = whole;
    r["id"] = spec.id + "/" + d.id;
    r["planned_id"] = spec.id;
    r["device_id"] = d.id;
    r["host"] = d.host;
    r["gpu"] = d.gpu;
    r["device_model"] = d.model;
    r["devices"] = static_cast<int>(devices.size());
    r["hosts"] = nlohmann::json::array({d.host});
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace sb
