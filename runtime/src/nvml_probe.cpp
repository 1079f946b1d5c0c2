/// @file nvml_probe.cpp
/// NVML loaded with dlopen at run time (see nvml_probe.hpp). The few NVML types and entry
/// points used here are declared below from the NVML API documentation (stable C ABI), so this
/// file needs neither nvml.h nor the CUDA toolkit.

#include "scalebench/nvml_probe.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace sb {
namespace {

// ---- the NVML ABI subset (values from the NVML API reference) -----------------------------
using nvmlReturn_t = int;    // NVML_SUCCESS = 0
using nvmlDevice_t = void*;  // opaque handle
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr unsigned kClockSm = 1;          // NVML_CLOCK_SM
constexpr unsigned kClockMem = 2;         // NVML_CLOCK_MEM
constexpr unsigned kNvlinkMaxLinks = 18;  // NVML_NVLINK_MAX_LINKS
constexpr unsigned kNameSize = 96;        // NVML_DEVICE_NAME_V2_BUFFER_SIZE
constexpr unsigned kUuidSize = 96;        // >= NVML_DEVICE_UUID_V2_BUFFER_SIZE (96)
constexpr unsigned kDriverSize = 80;      // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE

struct NvmlMemory {  // nvmlMemory_t (v1)
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

struct NvmlPciInfo {  // nvmlPciInfo_t as filled by the _v3 / _v2 entry points
  char bus_id_legacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pci_device_id;
  unsigned int pci_subsystem_id;
  char bus_id[32];
};

// nvmlGpuTopologyLevel_t
constexpr int kTopoInternal = 0;
constexpr int kTopoSingle = 10;
constexpr int kTopoMultiple = 20;
constexpr int kTopoHostBridge = 30;
constexpr int kTopoNode = 40;

/// The loaded library and its entry points; each pointer may be null (older drivers).
struct Nvml {
  void* lib = nullptr;
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  nvmlReturn_t (*device_count)(unsigned int*) = nullptr;
  nvmlReturn_t (*handle_by_index)(unsigned int, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*handle_by_bus_id)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*index_of)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned int) = nullptr;
  nvmlReturn_t (*uuid)(nvmlDevice_t, char*, unsigned int) = nullptr;
  nvmlReturn_t (*memory)(nvmlDevice_t, NvmlMemory*) = nullptr;
  nvmlReturn_t (*max_clock)(nvmlDevice_t, unsigned int, unsigned int*) = nullptr;
  nvmlReturn_t (*driver_version)(char*, unsigned int) = nullptr;
  nvmlReturn_t (*pci_info)(nvmlDevice_t, NvmlPciInfo*) = nullptr;
  nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*nvlink_state)(nvmlDevice_t, unsigned int, int*) = nullptr;
  nvmlReturn_t (*nvlink_remote_pci)(nvmlDevice_t, unsigned int, NvmlPciInfo*) = nullptr;
  nvmlReturn_t (*common_ancestor)(nvmlDevice_t, nvmlDevice_t, int*) = nullptr;
  /// nvmlDeviceGetNvLinkRemoteDeviceType: 0 GPU, 1 IBMNPU, 2 NVSwitch (newer drivers).
  nvmlReturn_t (*nvlink_remote_type)(nvmlDevice_t, unsigned int, int*) = nullptr;
  bool initialized = false;

  Nvml() {
    lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return;
    bind(init, "nvmlInit_v2");
    bind(shutdown, "nvmlShutdown");
    bind(device_count, "nvmlDeviceGetCount_v2");
    bind(handle_by_index, "nvmlDeviceGetHandleByIndex_v2");
    bind(handle_by_bus_id, "nvmlDeviceGetHandleByPciBusId_v2");
    bind(index_of, "nvmlDeviceGetIndex");
    bind(name, "nvmlDeviceGetName");
    bind(uuid, "nvmlDeviceGetUUID");
    bind(memory, "nvmlDeviceGetMemoryInfo");
    bind(max_clock, "nvmlDeviceGetMaxClockInfo");
    bind(driver_version, "nvmlSystemGetDriverVersion");
    bind(pci_info, "nvmlDeviceGetPciInfo_v3");
    if (pci_info == nullptr) bind(pci_info, "nvmlDeviceGetPciInfo_v2");
    bind(power_limit, "nvmlDeviceGetEnforcedPowerLimit");
    bind(nvlink_state, "nvmlDeviceGetNvLinkState");
    bind(nvlink_remote_pci, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
    bind(common_ancestor, "nvmlDeviceGetTopologyCommonAncestor");
    bind(nvlink_remote_type, "nvmlDeviceGetNvLinkRemoteDeviceType");
    initialized = init != nullptr && shutdown != nullptr && device_count != nullptr &&
                  handle_by_index != nullptr && init() == kNvmlSuccess;
  }
  ~Nvml() {
    if (initialized) shutdown();
    if (lib != nullptr) dlclose(lib);
  }
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  template <typename F>
  void bind(F& fn, const char* symbol) {
    fn = reinterpret_cast<F>(dlsym(lib, symbol));
  }

  [[nodiscard]] std::vector<nvmlDevice_t> devices() const {
    std::vector<nvmlDevice_t> out;
    unsigned int n = 0;
    if (!initialized || device_count(&n) != kNvmlSuccess) return out;
    for (unsigned int i = 0; i < n; ++i) {
      nvmlDevice_t d = nullptr;
      out.push_back(handle_by_index(i, &d) == kNvmlSuccess ? d : nullptr);
    }
    return out;
  }

  [[nodiscard]] std::string bus_id(nvmlDevice_t d) const {
    NvmlPciInfo pci{};
    if (pci_info == nullptr || d == nullptr || pci_info(d, &pci) != kNvmlSuccess) return {};
    return normalize(pci.bus_id);
  }

  /// NVLink peers of `d`: remote PCI bus id per active link.
  [[nodiscard]] std::vector<std::pair<unsigned, std::string>> nvlinks(nvmlDevice_t d,
                                                                      bool active_only) const {
    std::vector<std::pair<unsigned, std::string>> out;
    if (nvlink_state == nullptr || d == nullptr) return out;
    for (unsigned link = 0; link < kNvlinkMaxLinks; ++link) {
      int state = 0;
      if (nvlink_state(d, link, &state) != kNvmlSuccess) continue;
      if (active_only && state != 1) continue;
      NvmlPciInfo pci{};
      std::string remote;
      if (nvlink_remote_pci != nullptr && nvlink_remote_pci(d, link, &pci) == kNvmlSuccess)
        remote = normalize(pci.bus_id);
      out.emplace_back(state == 1 ? link : link | 0x80000000u, remote);
    }
    return out;
  }

  /// NVML writes "00000000:19:00.0"; lower-case and bounded, so ids compare as strings.
  static std::string normalize(const char* text) {
    std::string s(text, strnlen(text, 32));
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
  }
};

std::string cstr(const char* buf, std::size_t cap) {
  return {buf, strnlen(buf, cap)};
}

}  // namespace

namespace {

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
