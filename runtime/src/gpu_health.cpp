// A GPU's health fields as rows of /system/gpu_health (gpu_health.hpp).
#include "gpu_health.hpp"

#include <cmath>

#include <fmt/format.h>

namespace sb::detail {
namespace {

using json = nlohmann::json;

json row(const char* field, std::string value, json number = nullptr, json expected = nullptr,
         std::string detail = {}) {
  return {{"field", field},
          {"value", std::move(value)},
          {"number", std::move(number)},
          {"expected", std::move(expected)},
          {"detail", std::move(detail)}};
}

json unavailable(const char* field, const std::string& why) {
  return row(field, "unavailable", nullptr, nullptr, why.empty() ? "not read" : why);
}

const char* on_off(bool on) {
  return on ? "on" : "off";
}

std::string compute_mode_name(int m) {
  switch (m) {
    case 0:
      return "default";
    case 1:
      return "exclusive thread";
    case 2:
      return "prohibited";
    case 3:
      return "exclusive process";
    default:
      return fmt::format("mode {}", m);
  }
}

json clock_row(const char* field, const Reading<unsigned>& now, const Reading<unsigned>& def) {
  if (!now.value) return unavailable(field, now.why);
  if (!def.value)
    return row(field, fmt::format("{} MHz", *now.value), *now.value, nullptr,
               "the default application clock is unavailable (" + def.why + ")");
  return row(field, fmt::format("{} MHz", *now.value), *now.value, *def.value,
             fmt::format("the default is {} MHz", *def.value));
}

}  // namespace

const std::vector<std::string>& health_field_names() {
  static const std::vector<std::string> names{
      "pcie_generation", "pcie_width",    "row_remap_pending", "row_remap_failed", "rows_remapped",
      "nvlink_links",    "nvlink_errors", "persistence_mode",  "compute_mode",     "ecc_mode",
      "app_sm_clock",    "app_mem_clock", "power_limit",       "inforom",          "driver",
      "vbios",           "numa_node"};
  return names;
}

json health_rows(const GpuHealthRaw& h) {
  json rows = json::array();
  // PCIe: the current link against the most the GPU and its slot allow. A link idles at a lower
  // generation, so the generation is judged only when read under load.
  if (h.pcie_gen.value) {
    std::string detail = h.pcie_under_load ? "read during a host copy" : "read while idle";
    if (h.pcie_gen_gpu_max.value)
      detail += fmt::format("; the GPU's own maximum Gen{}", *h.pcie_gen_gpu_max.value);
    json expected =
        h.pcie_gen_max.value && h.pcie_under_load ? json(*h.pcie_gen_max.value) : json(nullptr);
    if (!h.pcie_gen_max.value) detail += "; maximum unavailable (" + h.pcie_gen_max.why + ")";
    rows.push_back(row("pcie_generation", fmt::format("Gen{}", *h.pcie_gen.value),
                       *h.pcie_gen.value, std::move(expected), detail));
  } else {
    rows.push_back(unavailable("pcie_generation", h.pcie_gen.why));
  }
  if (h.pcie_width.value) {
    rows.push_back(row("pcie_width", fmt::format("x{}", *h.pcie_width.value), *h.pcie_width.value,
                       h.pcie_width_max.value ? json(*h.pcie_width_max.value) : json(nullptr),
                       h.pcie_width_max.value
                           ? fmt::format("the maximum is x{}", *h.pcie_width_max.value)
                           : "maximum unavailable (" + h.pcie_width_max.why + ")"));
  } else {
    rows.push_back(unavailable("pcie_width", h.pcie_width.why));
  }
  // Row remapping (Ampere and later): one NVML call gives all four.
  if (h.remap_pending.value) {
    rows.push_back(row("row_remap_pending", *h.remap_pending.value ? "yes" : "no",
                       *h.remap_pending.value ? 1 : 0, 0,
                       "rows wait for a GPU reset to be remapped when yes"));
  } else {
    rows.push_back(unavailable("row_remap_pending", h.remap_pending.why));
  }
  if (h.remap_failed.value) {
    rows.push_back(row("row_remap_failed", *h.remap_failed.value ? "yes" : "no",
                       *h.remap_failed.value ? 1 : 0, 0,
                       "a remapping failed: no spare row was left"));
  } else {
    rows.push_back(unavailable("row_remap_failed", h.remap_failed.why));
  }
  if (h.remapped_correctable.value && h.remapped_uncorrectable.value) {
    const unsigned c = *h.remapped_correctable.value, u = *h.remapped_uncorrectable.value;
    rows.push_back(row("rows_remapped",
                       fmt::format("{} ({} correctable, {} uncorrectable)", c + u, c, u), c + u,
                       nullptr, "rows remapped since the GPU was made"));
  } else {
    rows.push_back(unavailable("rows_remapped", h.remapped_correctable.why));
  }
  // NVLink: which links are up; judged against the GPU's peers (a GPU alone is not judged).
  if (!h.nvlinks.empty()) {
    unsigned up = 0;
    std::string down;
    for (const auto& [link, is_up] : h.nvlinks) {
      up += is_up ? 1 : 0;
      if (!is_up) down += (down.empty() ? "" : ",") + std::to_string(link);
    }
    const auto n = static_cast<unsigned>(h.nvlinks.size());
    rows.push_back(row("nvlink_links",
                       down.empty() ? fmt::format("{} up of {}", up, n)
                                    : fmt::format("{} up of {}: {} down", up, n, down),
                       up, n, down.empty() ? std::string() : "down: " + down));
  } else {
    rows.push_back(unavailable("nvlink_links", h.nvlink_why));
  }
  if (h.nvlink_errors.value) {
    const NvlinkErrors& e = *h.nvlink_errors.value;
    rows.push_back(
        row("nvlink_errors",
            fmt::format("CRC {:.0f}, replay {:.0f}, recovery {:.0f}", e.crc, e.replay, e.recovery),
            e.crc + e.replay + e.recovery, nullptr,
            "since the driver loaded, over every link (growth while cases run is "
            "judged per case)"));
  } else {
    rows.push_back(unavailable("nvlink_errors", h.nvlink_errors.why));
  }
  if (h.persistence.value) {
    rows.push_back(
        row("persistence_mode", on_off(*h.persistence.value), *h.persistence.value ? 1 : 0));
  } else {
    rows.push_back(unavailable("persistence_mode", h.persistence.why));
  }
  if (h.compute_mode.value) {
    rows.push_back(
        row("compute_mode", compute_mode_name(*h.compute_mode.value), *h.compute_mode.value));
  } else {
    rows.push_back(unavailable("compute_mode", h.compute_mode.why));
  }
  if (h.ecc_current.value) {
    std::string value = on_off(*h.ecc_current.value);
    if (h.ecc_pending.value && *h.ecc_pending.value != *h.ecc_current.value)
      value += fmt::format(" ({} after the next reset)", on_off(*h.ecc_pending.value));
    rows.push_back(row("ecc_mode", value, *h.ecc_current.value ? 1 : 0,
                       h.ecc_pending.value ? json(*h.ecc_pending.value ? 1 : 0) : json(nullptr),
                       "expected: the mode pending for the next reset"));
  } else {
    rows.push_back(unavailable("ecc_mode", h.ecc_current.why));
  }
  rows.push_back(clock_row("app_sm_clock", h.app_sm_mhz, h.app_sm_default_mhz));
  rows.push_back(clock_row("app_mem_clock", h.app_mem_mhz, h.app_mem_default_mhz));
  if (h.power_limit_w.value) {
    rows.push_back(row(
        "power_limit", fmt::format("{:.0f} W", *h.power_limit_w.value), *h.power_limit_w.value,
        h.power_default_w.value ? json(*h.power_default_w.value) : json(nullptr),
        h.power_default_w.value
            ? fmt::format("the enforced limit; the default is {:.0f} W", *h.power_default_w.value)
            : "the enforced limit; the default is unavailable (" + h.power_default_w.why + ")"));
  } else {
    rows.push_back(unavailable("power_limit", h.power_limit_w.why));
  }
  if (h.inforom_valid.value) {
    rows.push_back(row("inforom", *h.inforom_valid.value ? "valid" : "corrupted",
                       *h.inforom_valid.value ? 1 : 0, 1));
  } else {
    rows.push_back(unavailable("inforom", h.inforom_valid.why));
  }
  rows.push_back(h.driver.value ? row("driver", *h.driver.value)
                                : unavailable("driver", h.driver.why));
  rows.push_back(h.vbios.value ? row("vbios", *h.vbios.value) : unavailable("vbios", h.vbios.why));
  if (h.numa_node.value) {
    rows.push_back(
        row("numa_node",
            *h.numa_node.value < 0 ? std::string("none") : std::to_string(*h.numa_node.value),
            *h.numa_node.value, nullptr, "the NUMA node of the GPU's PCIe root (-1: none)"));
  } else {
    rows.push_back(unavailable("numa_node", h.numa_node.why));
  }
  return rows;
}

}  // namespace sb::detail
