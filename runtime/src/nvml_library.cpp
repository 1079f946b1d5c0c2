// NVML loaded at run time (nvml_library.hpp).
#include "nvml_library.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>

namespace sb::detail {
namespace {

template <typename F>
void bind(void* lib, F& fn, const char* symbol) {
  fn = reinterpret_cast<F>(dlsym(lib, symbol));
}

}  // namespace

NvmlLibrary::NvmlLibrary() {
  lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) return;
  bind(lib, init, "nvmlInit_v2");
  bind(lib, shutdown, "nvmlShutdown");
  bind(lib, device_count, "nvmlDeviceGetCount_v2");
  bind(lib, handle_by_index, "nvmlDeviceGetHandleByIndex_v2");
  bind(lib, handle_by_bus_id, "nvmlDeviceGetHandleByPciBusId_v2");
  bind(lib, index_of, "nvmlDeviceGetIndex");
  bind(lib, name, "nvmlDeviceGetName");
  bind(lib, uuid, "nvmlDeviceGetUUID");
  bind(lib, memory, "nvmlDeviceGetMemoryInfo");
  bind(lib, max_clock, "nvmlDeviceGetMaxClockInfo");
  bind(lib, driver_version, "nvmlSystemGetDriverVersion");
  bind(lib, pci_info, "nvmlDeviceGetPciInfo_v3");
  if (pci_info == nullptr) bind(lib, pci_info, "nvmlDeviceGetPciInfo_v2");
  bind(lib, power_limit, "nvmlDeviceGetEnforcedPowerLimit");
  bind(lib, nvlink_state, "nvmlDeviceGetNvLinkState");
  bind(lib, nvlink_remote_pci, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
  bind(lib, common_ancestor, "nvmlDeviceGetTopologyCommonAncestor");
  bind(lib, nvlink_remote_type, "nvmlDeviceGetNvLinkRemoteDeviceType");
  bind(lib, clock, "nvmlDeviceGetClockInfo");
  bind(lib, app_clock, "nvmlDeviceGetApplicationsClock");
  bind(lib, power_usage, "nvmlDeviceGetPowerUsage");
  bind(lib, temperature, "nvmlDeviceGetTemperature");
  bind(lib, clock_event_reasons, "nvmlDeviceGetCurrentClocksEventReasons");
  if (clock_event_reasons == nullptr)
    bind(lib, clock_event_reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
  bind(lib, ecc_errors, "nvmlDeviceGetTotalEccErrors");
  bind(lib, retired_pages, "nvmlDeviceGetRetiredPages");
  bind(lib, remapped_rows, "nvmlDeviceGetRemappedRows");
  bind(lib, event_set_create, "nvmlEventSetCreate");
  bind(lib, register_events, "nvmlDeviceRegisterEvents");
  bind(lib, event_set_wait, "nvmlEventSetWait_v2");
  bind(lib, event_set_free, "nvmlEventSetFree");
  bind(lib, compute_processes, "nvmlDeviceGetComputeRunningProcesses_v3");
  if (compute_processes == nullptr)
    bind(lib, compute_processes, "nvmlDeviceGetComputeRunningProcesses_v2");
  if (compute_processes == nullptr)
    bind(lib, compute_processes_v1, "nvmlDeviceGetComputeRunningProcesses");
  bind(lib, mps_processes, "nvmlDeviceGetMPSComputeRunningProcesses_v3");
  if (mps_processes == nullptr)
    bind(lib, mps_processes, "nvmlDeviceGetMPSComputeRunningProcesses_v2");
  bind(lib, process_name, "nvmlSystemGetProcessName");
  bind(lib, process_utilization, "nvmlDeviceGetProcessUtilization");
  bind(lib, utilization, "nvmlDeviceGetUtilizationRates");
  bind(lib, total_energy, "nvmlDeviceGetTotalEnergyConsumption");
  bind(lib, pcie_gen, "nvmlDeviceGetCurrPcieLinkGeneration");
  bind(lib, pcie_width, "nvmlDeviceGetCurrPcieLinkWidth");
  bind(lib, pcie_gen_max, "nvmlDeviceGetMaxPcieLinkGeneration");
  bind(lib, pcie_gen_gpu_max, "nvmlDeviceGetGpuMaxPcieLinkGeneration");
  bind(lib, pcie_width_max, "nvmlDeviceGetMaxPcieLinkWidth");
  bind(lib, nvlink_error_counter, "nvmlDeviceGetNvLinkErrorCounter");
  bind(lib, field_values, "nvmlDeviceGetFieldValues");
  bind(lib, persistence_mode, "nvmlDeviceGetPersistenceMode");
  bind(lib, compute_mode, "nvmlDeviceGetComputeMode");
  bind(lib, ecc_mode, "nvmlDeviceGetEccMode");
  bind(lib, clock_by_id, "nvmlDeviceGetClock");
  bind(lib, default_app_clock, "nvmlDeviceGetDefaultApplicationsClock");
  bind(lib, vbios_version, "nvmlDeviceGetVbiosVersion");
  bind(lib, validate_inforom, "nvmlDeviceValidateInforom");
  bind(lib, default_power_limit, "nvmlDeviceGetPowerManagementDefaultLimit");
  bind(lib, numa_node, "nvmlDeviceGetNumaNodeId");
  bind(lib, error_string, "nvmlErrorString");
  initialized = init != nullptr && shutdown != nullptr && device_count != nullptr &&
                handle_by_index != nullptr && init() == kNvmlSuccess;
}

NvmlLibrary::~NvmlLibrary() {
  if (initialized) shutdown();
  if (lib != nullptr) dlclose(lib);
}

std::vector<nvmlDevice_t> NvmlLibrary::devices() const {
  std::vector<nvmlDevice_t> out;
  unsigned int n = 0;
  if (!initialized || device_count(&n) != kNvmlSuccess) return out;
  for (unsigned int i = 0; i < n; ++i) {
    nvmlDevice_t d = nullptr;
    out.push_back(handle_by_index(i, &d) == kNvmlSuccess ? d : nullptr);
  }
  return out;
}

nvmlDevice_t NvmlLibrary::by_bus_id(const std::string& bus) const {
  nvmlDevice_t d = nullptr;
  if (!initialized || handle_by_bus_id == nullptr || bus.empty() ||
      handle_by_bus_id(bus.c_str(), &d) != kNvmlSuccess)
    return nullptr;
  return d;
}

std::string NvmlLibrary::bus_id(nvmlDevice_t d) const {
  NvmlPciInfo pci{};
  if (pci_info == nullptr || d == nullptr || pci_info(d, &pci) != kNvmlSuccess) return {};
  return normalize(pci.bus_id);
}

std::string NvmlLibrary::device_name(nvmlDevice_t d) const {
  std::array<char, kNameSize> buf{};
  if (name == nullptr || d == nullptr || name(d, buf.data(), buf.size()) != kNvmlSuccess) return {};
  return {buf.data(), strnlen(buf.data(), buf.size())};
}

std::vector<std::pair<unsigned, std::string>> NvmlLibrary::nvlinks(nvmlDevice_t d,
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

std::string NvmlLibrary::why(nvmlReturn_t r) const {
  const char* text = error_string != nullptr ? error_string(r) : nullptr;
  return text != nullptr ? "NVML: " + std::string(text, strnlen(text, 200))
                         : "NVML error " + std::to_string(r);
}

std::string NvmlLibrary::normalize(const char* text) {
  std::string s(text, strnlen(text, 32));
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace sb::detail
