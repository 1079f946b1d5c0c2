/// @file nvml_probe.cpp
/// GPU descriptions and the topology matrix through NVML, loaded with dlopen at run time
/// (nvml_library.hpp), so this file needs neither nvml.h nor the CUDA toolkit.

#include "scalebench/nvml_probe.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "nvml_library.hpp"

namespace sb {
namespace {

using detail::kClockMem;
using detail::kClockSm;
using detail::kDriverSize;
using detail::kNameSize;
using detail::kNvmlSuccess;
using detail::kUuidSize;
using detail::nvmlDevice_t;
using detail::NvmlMemory;
using Nvml = detail::NvmlLibrary;

// nvmlGpuTopologyLevel_t
constexpr int kTopoInternal = 0;
constexpr int kTopoSingle = 10;
constexpr int kTopoMultiple = 20;
constexpr int kTopoHostBridge = 30;
constexpr int kTopoNode = 40;

std::string cstr(const char* buf, std::size_t cap) {
  return {buf, strnlen(buf, cap)};
}

std::string driver_version(const Nvml& nvml) {
  std::array<char, kDriverSize> buf{};
  if (nvml.driver_version == nullptr || nvml.driver_version(buf.data(), buf.size()) != kNvmlSuccess)
    return {};
  return cstr(buf.data(), buf.size());
}

/// One GPU's entry of probe_gpus_nvml (`d` non-null).
nlohmann::json describe_device(const Nvml& nvml, nvmlDevice_t d, unsigned index,
                               const std::string& driver) {
  nlohmann::json g;
  g["index"] = index;
  std::array<char, kNameSize> name{};
  if (nvml.name != nullptr && nvml.name(d, name.data(), name.size()) == kNvmlSuccess)
    g["name"] = cstr(name.data(), name.size());
  std::array<char, kUuidSize> uuid{};
  if (nvml.uuid != nullptr && nvml.uuid(d, uuid.data(), uuid.size()) == kNvmlSuccess)
    g["uuid"] = cstr(uuid.data(), uuid.size());
  NvmlMemory mem{};
  if (nvml.memory != nullptr && nvml.memory(d, &mem) == kNvmlSuccess) g["memory_bytes"] = mem.total;
  unsigned int mhz = 0;
  if (nvml.max_clock != nullptr && nvml.max_clock(d, kClockSm, &mhz) == kNvmlSuccess)
    g["sm_clock_max_mhz"] = mhz;
  if (nvml.max_clock != nullptr && nvml.max_clock(d, kClockMem, &mhz) == kNvmlSuccess)
    g["mem_clock_max_mhz"] = mhz;
  if (!driver.empty()) g["driver"] = driver;
  if (const std::string bus = nvml.bus_id(d); !bus.empty()) g["pci_bus_id"] = bus;
  unsigned int mw = 0;
  if (nvml.power_limit != nullptr && nvml.power_limit(d, &mw) == kNvmlSuccess)
    g["power_limit_w"] = mw / 1000.0;
  auto links = nlohmann::json::array();
  for (const auto& [link, remote] : nvml.nvlinks(d, false)) {
    nlohmann::json l;
    l["link"] = link & 0x7fffffffu;
    l["active"] = (link & 0x80000000u) == 0;
    if (!remote.empty()) l["remote_pci_bus_id"] = remote;
    links.push_back(std::move(l));
  }
  g["nvlink"] = std::move(links);
  return g;
}

}  // namespace

nlohmann::json probe_gpus_nvml() {
  auto out = nlohmann::json::array();
  try {
    const Nvml nvml;
    if (!nvml.initialized) return out;
    const std::string driver = driver_version(nvml);
    const auto devs = nvml.devices();
    for (std::size_t i = 0; i < devs.size(); ++i) {
      if (devs[i] == nullptr) {
        out.push_back({{"index", i}, {"error", "NVML could not open this GPU"}});
        continue;
      }
      out.push_back(describe_device(nvml, devs[i], static_cast<unsigned>(i), driver));
    }
  } catch (...) {
    return nlohmann::json::array();
  }
  return out;
}

std::string nvml_driver_version() {
  try {
    const Nvml nvml;
    return nvml.initialized ? driver_version(nvml) : std::string{};
  } catch (...) {
    return {};
  }
}

nlohmann::json probe_gpu_nvml(const std::string& pci_bus_id) {
  try {
    const Nvml nvml;
    nvmlDevice_t d = nullptr;
    if (!nvml.initialized || nvml.handle_by_bus_id == nullptr || pci_bus_id.empty() ||
        nvml.handle_by_bus_id(pci_bus_id.c_str(), &d) != kNvmlSuccess || d == nullptr)
      return nlohmann::json::object();
    unsigned index = 0;
    if (nvml.index_of == nullptr || nvml.index_of(d, &index) != kNvmlSuccess)
      return nlohmann::json::object();
    return describe_device(nvml, d, index, driver_version(nvml));
  } catch (...) {
    return nlohmann::json::object();
  }
}

std::string nvml_topology_matrix() {
  try {
    const Nvml nvml;
    if (!nvml.initialized) return {};
    const auto devs = nvml.devices();
    const std::size_t n = devs.size();
    if (n == 0) return {};
    std::vector<std::string> bus(n);
    for (std::size_t i = 0; i < n; ++i) bus[i] = nvml.bus_id(devs[i]);
    // NVLink counts per ordered pair, from each GPU's active links' remote bus ids. On NVSwitch
    // systems (HGX) a link's far end is a switch, not the peer: every two GPUs with switch
    // links are joined through the switches by as many links as the smaller side has (what
    // nvidia-smi topo -m prints as NV18 on an H100/H200 HGX board).
    std::vector<std::vector<int>> nv(n, std::vector<int>(n, 0));
    std::vector<int> via_switch(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      for (const auto& [link, remote] : nvml.nvlinks(devs[i], true)) {
        bool to_gpu = false;
        for (std::size_t j = 0; j < n; ++j)
          if (j != i && !remote.empty() && remote == bus[j]) {
            ++nv[i][j];
            to_gpu = true;
          }
        if (to_gpu) continue;
        int type = -1;
        if (nvml.nvlink_remote_type != nullptr &&
            nvml.nvlink_remote_type(devs[i], link, &type) == kNvmlSuccess) {
          if (type == 2) ++via_switch[i];
        } else if (!remote.empty()) {
          ++via_switch[i];  // an older driver: a far end that is no GPU here is a switch
        }
      }
    }
    auto cell = [&](std::size_t i, std::size_t j) -> std::string {
      if (i == j) return "X";
      if (nv[i][j] > 0) return "NV" + std::to_string(nv[i][j]);
      if (via_switch[i] > 0 && via_switch[j] > 0)
        return "NV" + std::to_string(std::min(via_switch[i], via_switch[j]));
      int level = -1;
      if (nvml.common_ancestor == nullptr || devs[i] == nullptr || devs[j] == nullptr ||
          nvml.common_ancestor(devs[i], devs[j], &level) != kNvmlSuccess)
        return "?";
      if (level <= kTopoInternal) return "X";
      if (level <= kTopoSingle) return "PIX";
      if (level <= kTopoMultiple) return "PXB";
      if (level <= kTopoHostBridge) return "PHB";
      if (level <= kTopoNode) return "NODE";
      return "SYS";
    };
    std::string text = "      ";
    for (std::size_t j = 0; j < n; ++j) {
      std::string h = "GPU" + std::to_string(j);
      h.resize(std::max<std::size_t>(h.size() + 1, 6), ' ');
      text += h;
    }
    text += "\n";
    for (std::size_t i = 0; i < n; ++i) {
      std::string row = "GPU" + std::to_string(i);
      row.resize(std::max<std::size_t>(row.size() + 1, 6), ' ');
      for (std::size_t j = 0; j < n; ++j) {
        std::string c = cell(i, j);
        c.resize(std::max<std::size_t>(c.size() + 1, 6), ' ');
        row += c;
      }
      while (!row.empty() && row.back() == ' ') row.pop_back();
      text += row + "\n";
    }
    return text;
  } catch (...) {
    return {};
  }
}

}  // namespace sb
