// The verdict table's health rows (health_verdicts.hpp).
#include "health_verdicts.hpp"

#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "summary_util.hpp"

namespace sb::results::detail {
namespace {

/// The power limit lowered by more than this share of its default is a finding.
constexpr double kPowerLimitShare = 0.95;

using Fields = std::map<std::string, const json*>;  // field -> its row

struct Gpu {
  std::string host, model;
  int gpu = -1;
  Fields fields;
};

bool available(const json* r) {
  return r != nullptr && str(*r, "value") != "unavailable";
}

std::string value(const Gpu& g, const char* field) {
  const auto it = g.fields.find(field);
  return available(it == g.fields.end() ? nullptr : it->second) ? str(*it->second, "value")
                                                                : std::string();
}

double number(const Gpu& g, const char* field, const char* key = "number") {
  const auto it = g.fields.find(field);
  return it == g.fields.end() ? kNaN : num(*it->second, key);
}

/// The most common value among `values` and how many have it; ties go to the smaller value.
std::pair<std::string, std::size_t> mode_of(const std::vector<std::string>& values) {
  std::map<std::string, std::size_t> n;
  for (const auto& v : values)
    if (!v.empty()) ++n[v];
  std::pair<std::string, std::size_t> best;
  for (const auto& [v, k] : n)
    if (k > best.second) best = {v, k};
  return best;
}

/// `field` differs from what most of `peers` have: "driver 550.54 differs from its 15 peers'
/// 560.35" ("" when it does not, or when no value is held by more GPUs than its own).
std::string differs(const Gpu& g, const std::vector<const Gpu*>& peers, const char* field,
                    const char* label) {
  const std::string mine = value(g, field);
  if (mine.empty()) return {};
  std::vector<std::string> values;
  std::size_t same = 0;
  for (const Gpu* p : peers) {
    if (p == &g) continue;
    const std::string v = value(*p, field);
    values.push_back(v);
    same += v == mine;
  }
  const auto [common, count] = mode_of(values);
  if (common.empty() || common == mine || count <= same) return {};
  return fmt::format("{} {} differs from {} of its {} peer{}' {}", label, mine, count,
                     values.size(), values.size() == 1 ? "" : "s", common);
}

}  // namespace

void add_health_verdicts(const json& model, json& rows) {
  const json& health = sub(sub(model, "system"), "gpu_health");
  if (!health.is_array() || health.empty()) return;
  std::map<std::pair<std::string, int>, Gpu> gpus;
  for (const auto& r : health) {
    Gpu& g = gpus[{str(r, "host"), static_cast<int>(num(r, "node_gpu", -1))}];
    g.host = str(r, "host");
    g.gpu = static_cast<int>(num(r, "node_gpu", -1));
    g.model = str(r, "model");
    g.fields[str(r, "field")] = &r;
  }
  std::vector<const Gpu*> all;
  std::map<std::string, std::vector<const Gpu*>> by_model, by_host;
  for (const auto& [key, g] : gpus) {
    all.push_back(&g);
    by_model[g.model].push_back(&g);
    by_host[g.host].push_back(&g);
  }
  for (const auto& [key, g] : gpus) {
    std::vector<std::string> findings, notes, missing;
    std::size_t judged = 0;
    auto field = [&](const char* name) -> const json* {
      const auto it = g.fields.find(name);
      const json* r = it == g.fields.end() ? nullptr : it->second;
      if (!available(r)) {
        missing.emplace_back(name);
        return nullptr;
      }
      ++judged;
      return r;
    };
    // PCIe: the link under load against the most the GPU and its slot allow.
    if (const json* r = field("pcie_generation")) {
      const double now = num(*r, "number"), max = num(*r, "expected");
      if (std::isfinite(max) && now < max)
        findings.push_back(fmt::format("PCIe Gen{:.0f} of Gen{:.0f}", now, max));
    }
    if (const json* r = field("pcie_width")) {
      const double now = num(*r, "number"), max = num(*r, "expected");
      if (std::isfinite(max) && now < max)
        findings.push_back(fmt::format("PCIe x{:.0f} of x{:.0f}", now, max));
    }
    if (const json* r = field("row_remap_pending"); r != nullptr && num(*r, "number") > 0)
      findings.push_back("row remapping pending (a GPU reset remaps the rows)");
    if (const json* r = field("row_remap_failed"); r != nullptr && num(*r, "number") > 0)
      findings.push_back("row remapping failed (no spare row left)");
    (void)field("rows_remapped");
    // NVLink: links its peers of the model have up; a GPU alone is not judged.
    if (const json* r = field("nvlink_links")) {
      std::vector<std::string> peer_up;
      for (const Gpu* p : by_model[g.model])
        if (p != &g && std::isfinite(number(*p, "nvlink_links")))
          peer_up.push_back(fmt::format("{:.0f}", number(*p, "nvlink_links")));
      const auto [common, count] = mode_of(peer_up);
      const double up = num(*r, "number");
      if (!common.empty() && up < std::stod(common)) {
        const std::string down = str(*r, "detail");
        findings.push_back(fmt::format(
            "NVLink {} ({:.0f} up; {} of its {} peers have {} up)",
            down.rfind("down: ", 0) == 0 ? down.substr(6) + " down" : std::string("links down"), up,
            count, peer_up.size(), common));
      }
    }
    (void)field("nvlink_errors");  // since the driver loaded: growth is judged per case
    if (const json* r = field("persistence_mode"); r != nullptr && num(*r, "number") == 0) {
      // Off where the node's other GPUs have it on: set up unlike them.
      const std::string odd = differs(g, by_host[g.host], "persistence_mode", "persistence mode");
      if (!odd.empty()) {
        findings.push_back(odd);
      } else {
        notes.emplace_back("persistence mode off");
      }
    }
    if (const json* r = field("compute_mode")) {
      if (num(*r, "number") == 2) {
        findings.emplace_back("compute mode prohibited");
      } else if (const std::string odd =
                     differs(g, by_host[g.host], "compute_mode", "compute mode");
                 !odd.empty()) {
        findings.push_back(odd);
      }
    }
    if (const json* r = field("ecc_mode")) {
      const double now = num(*r, "number"), pending = num(*r, "expected");
      if (std::isfinite(pending) && pending != now)
        findings.push_back(
            fmt::format("ECC mode turns {} at the next reset", pending > 0 ? "on" : "off"));
      if (const std::string odd = differs(g, by_model[g.model], "ecc_mode", "ECC mode");
          !odd.empty())
        findings.push_back(odd);
    }
    for (const auto& [name, what] : {std::pair{"app_sm_clock", "SM"}, {"app_mem_clock", "memory"}})
      if (const json* r = field(name)) {
        const double now = num(*r, "number"), def = num(*r, "expected");
        if (std::isfinite(def) && now < def)
          findings.push_back(fmt::format(
              "application {} clock lowered: {:.0f} MHz of the default {:.0f}", what, now, def));
      }
    if (const json* r = field("power_limit")) {
      const double now = num(*r, "number"), def = num(*r, "expected");
      if (std::isfinite(def) && now < kPowerLimitShare * def)
        findings.push_back(
            fmt::format("power limit lowered: {:.0f} W of the default {:.0f} W", now, def));
    }
    if (const json* r = field("inforom"); r != nullptr && num(*r, "number") == 0)
      findings.emplace_back("InfoROM corrupted");
    if (field("driver") != nullptr)
      if (const std::string odd = differs(g, all, "driver", "driver"); !odd.empty())
        findings.push_back(odd);
    if (field("vbios") != nullptr)
      if (const std::string odd = differs(g, by_model[g.model], "vbios", "VBIOS"); !odd.empty())
        findings.push_back(odd);
    (void)field("numa_node");

    std::string reason;
    for (const auto& f : findings) reason += (reason.empty() ? "" : "; ") + f;
    std::string verdict = findings.empty() ? "ok" : "unhealthy";
    if (findings.empty()) {
      reason = judged == 0 ? "every health field unavailable: not judged"
                           : fmt::format("{} health field{} ok", judged, judged == 1 ? "" : "s");
      if (judged == 0) verdict = "not judged";
    }
    if (!missing.empty()) {
      std::string list;
      for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
      reason += fmt::format("; {} unavailable ({})", missing.size(), list);
    }
    for (const auto& n : notes) reason += "; " + n;
    json row;
    row["host"] = g.host;
    row["device"] = g.gpu;
    row["case"] = "health";
    row["verdict"] = verdict;
    row["value"] = static_cast<double>(findings.size());
    row["expected"] = 0.0;
    row["reason"] = fmt::format("GPU {} on {}: {}", g.gpu, g.host, reason);
    row["model"] = g.model;
    row["path"] = "each-gpu";
    row["workload"] = "health";
    row["record"] = "";
    row["peers"] = static_cast<std::int64_t>(by_model[g.model].size() - 1);
    row["reference_s"] = kNaN;
    row["throttled_repeats"] = 0;
    row["link"] = "";
    row["unit"] = "findings";
    rows.push_back(std::move(row));
  }
}

}  // namespace sb::results::detail
