#pragma once
/// @file nvml_library.hpp
/// (runtime internals) NVML loaded with dlopen at run time, shared by the GPU descriptions
/// (nvml_probe.cpp) and the GPU telemetry (nvml_telemetry.cpp). The few NVML types and entry
/// points used are declared here from the NVML API documentation (stable C ABI), so neither
/// nvml.h nor the CUDA toolkit is needed; a machine without the driver gets an uninitialized
/// library whose users report nothing.

#include <string>
#include <utility>
#include <vector>

namespace sb::detail {

// ---- the NVML ABI subset (values from the NVML API reference) -----------------------------
using nvmlReturn_t = int;    // NVML_SUCCESS = 0
using nvmlDevice_t = void*;  // opaque handle
using nvmlEventSet_t = void*;
inline constexpr nvmlReturn_t kNvmlSuccess = 0;
inline constexpr nvmlReturn_t kNvmlNotSupported = 3;       // NVML_ERROR_NOT_SUPPORTED
inline constexpr nvmlReturn_t kNvmlNoPermission = 4;       // NVML_ERROR_NO_PERMISSION
inline constexpr nvmlReturn_t kNvmlNotFound = 6;           // NVML_ERROR_NOT_FOUND
inline constexpr nvmlReturn_t kNvmlInsufficientSize = 7;   // NVML_ERROR_INSUFFICIENT_SIZE
inline constexpr nvmlReturn_t kNvmlCorruptedInforom = 14;  // NVML_ERROR_CORRUPTED_INFOROM
inline constexpr unsigned kClockSm = 1;                    // NVML_CLOCK_SM
inline constexpr unsigned kClockMem = 2;                   // NVML_CLOCK_MEM
inline constexpr unsigned kNvlinkMaxLinks = 18;            // NVML_NVLINK_MAX_LINKS
inline constexpr unsigned kNameSize = 96;                  // NVML_DEVICE_NAME_V2_BUFFER_SIZE
inline constexpr unsigned kUuidSize = 96;          // >= NVML_DEVICE_UUID_V2_BUFFER_SIZE (96)
inline constexpr unsigned kDriverSize = 80;        // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE
inline constexpr unsigned kTemperatureGpu = 0;     // NVML_TEMPERATURE_GPU
inline constexpr int kMemoryErrorCorrected = 0;    // NVML_MEMORY_ERROR_TYPE_CORRECTED
inline constexpr int kMemoryErrorUncorrected = 1;  // ..._UNCORRECTED
inline constexpr int kVolatileEcc = 0;             // NVML_VOLATILE_ECC
inline constexpr int kRetiredMultipleSbe =
    0;                                 // NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS
inline constexpr int kRetiredDbe = 1;  // ..._DOUBLE_BIT_ECC_ERROR
inline constexpr unsigned long long kEventXidCritical = 0x8;  // nvmlEventTypeXidCriticalError
inline constexpr unsigned kVbiosSize = 32;         // NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE
inline constexpr unsigned kClockIdAppTarget = 1;   // NVML_CLOCK_ID_APP_CLOCK_TARGET
inline constexpr unsigned kClockIdAppDefault = 2;  // NVML_CLOCK_ID_APP_CLOCK_DEFAULT
inline constexpr int kComputeModeProhibited = 2;   // NVML_COMPUTEMODE_PROHIBITED
// nvmlNvLinkErrorCounter_t
inline constexpr int kNvlinkErrorReplay = 0;    // NVML_NVLINK_ERROR_DL_REPLAY
inline constexpr int kNvlinkErrorRecovery = 1;  // NVML_NVLINK_ERROR_DL_RECOVERY
inline constexpr int kNvlinkErrorCrcFlit = 2;   // NVML_NVLINK_ERROR_DL_CRC_FLIT
inline constexpr int kNvlinkErrorCrcData = 3;   // NVML_NVLINK_ERROR_DL_CRC_DATA
// Field ids (NVML_FI_DEV_*) of the per-link NVLink error totals (scopeId = the link).
inline constexpr unsigned kFieldNvlinkCrcFlitTotal = 38;
inline constexpr unsigned kFieldNvlinkCrcDataTotal = 45;
inline constexpr unsigned kFieldNvlinkReplayTotal = 52;
inline constexpr unsigned kFieldNvlinkRecoveryTotal = 59;
inline constexpr unsigned kFieldNvlinkRecoveryEvents = 215;   // NVLink5 (Blackwell) and later
inline constexpr unsigned kFieldNvlinkEffectiveErrors = 219;  // NVLink5 (Blackwell) and later
// nvmlValueType_t
inline constexpr int kValueDouble = 0;
inline constexpr int kValueUnsignedInt = 1;
inline constexpr int kValueUnsignedLong = 2;
inline constexpr int kValueUnsignedLongLong = 3;
inline constexpr int kValueSignedLongLong = 4;
inline constexpr int kValueSignedInt = 5;
inline constexpr int kValueUnsignedShort = 6;

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

struct NvmlProcessInfo {  // nvmlProcessInfo_v2_t (= nvmlProcessInfo_t of the _v2 and _v3 calls)
  unsigned int pid;
  unsigned long long used_gpu_memory;  ///< bytes; ~0ULL (NVML_VALUE_NOT_AVAILABLE): unknown
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};

struct NvmlProcessInfoV1 {  // nvmlProcessInfo_v1_t (the unversioned call of older drivers)
  unsigned int pid;
  unsigned long long used_gpu_memory;
};

struct NvmlProcessUtilizationSample {  // nvmlProcessUtilizationSample_t
  unsigned int pid;
  unsigned long long timestamp;  ///< CPU time stamp, microseconds
  unsigned int sm_util;          ///< percent
  unsigned int mem_util;
  unsigned int enc_util;
  unsigned int dec_util;
};

struct NvmlUtilization {  // nvmlUtilization_t
  unsigned int gpu;       ///< percent of the last sample period a kernel ran
  unsigned int memory;    ///< percent of it device memory was read or written
};

union NvmlValue {  // nvmlValue_t
  double d;
  int si;
  unsigned int ui;
  unsigned long ul;
  unsigned long long ull;
  long long sll;
  unsigned short us;
};

struct NvmlFieldValue {  // nvmlFieldValue_t
  unsigned int field_id;
  unsigned int scope_id;
  long long timestamp;
  long long latency_us;
  int value_type;  ///< nvmlValueType_t
  nvmlReturn_t nvml_return;
  NvmlValue value;
};

struct NvmlEventData {  // nvmlEventData_t
  nvmlDevice_t device;
  unsigned long long event_type;
  unsigned long long event_data;  ///< the XID for XID events
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};

/// The loaded library and its entry points; each pointer may be null (older drivers). Every
/// instance calls nvmlInit and nvmlShutdown once (NVML counts them).
struct NvmlLibrary {
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
  // Telemetry (nvml_telemetry.cpp).
  nvmlReturn_t (*clock)(nvmlDevice_t, unsigned int, unsigned int*) = nullptr;
  nvmlReturn_t (*app_clock)(nvmlDevice_t, unsigned int, unsigned int*) = nullptr;
  nvmlReturn_t (*power_usage)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*temperature)(nvmlDevice_t, unsigned int, unsigned int*) = nullptr;
  /// nvmlDeviceGetCurrentClocksEventReasons (newer name) or ...ThrottleReasons (older drivers).
  nvmlReturn_t (*clock_event_reasons)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*ecc_errors)(nvmlDevice_t, int, int, unsigned long long*) = nullptr;
  nvmlReturn_t (*retired_pages)(nvmlDevice_t, int, unsigned int*, unsigned long long*) = nullptr;
  nvmlReturn_t (*remapped_rows)(nvmlDevice_t, unsigned int*, unsigned int*, unsigned int*,
                                unsigned int*) = nullptr;
  nvmlReturn_t (*event_set_create)(nvmlEventSet_t*) = nullptr;
  nvmlReturn_t (*register_events)(nvmlDevice_t, unsigned long long, nvmlEventSet_t) = nullptr;
  nvmlReturn_t (*event_set_wait)(nvmlEventSet_t, NvmlEventData*, unsigned int) = nullptr;
  nvmlReturn_t (*event_set_free)(nvmlEventSet_t) = nullptr;
  // Node acceptance: who else is on the GPU, its energy counter, its health (gpu_health.hpp).
  /// nvmlDeviceGetComputeRunningProcesses_v3, else _v2 (both fill NvmlProcessInfo).
  nvmlReturn_t (*compute_processes)(nvmlDevice_t, unsigned int*, NvmlProcessInfo*) = nullptr;
  /// The unversioned call of drivers older than both (NvmlProcessInfoV1).
  nvmlReturn_t (*compute_processes_v1)(nvmlDevice_t, unsigned int*, NvmlProcessInfoV1*) = nullptr;
  /// nvmlDeviceGetMPSComputeRunningProcesses_v3, else _v2.
  nvmlReturn_t (*mps_processes)(nvmlDevice_t, unsigned int*, NvmlProcessInfo*) = nullptr;
  nvmlReturn_t (*process_name)(unsigned int, char*, unsigned int) = nullptr;
  nvmlReturn_t (*process_utilization)(nvmlDevice_t, NvmlProcessUtilizationSample*, unsigned int*,
                                      unsigned long long) = nullptr;
  nvmlReturn_t (*utilization)(nvmlDevice_t, NvmlUtilization*) = nullptr;
  /// nvmlDeviceGetTotalEnergyConsumption: millijoules since the driver was loaded (Volta on).
  nvmlReturn_t (*total_energy)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*pcie_gen)(nvmlDevice_t, unsigned int*) = nullptr;          // current
  nvmlReturn_t (*pcie_width)(nvmlDevice_t, unsigned int*) = nullptr;        // current
  nvmlReturn_t (*pcie_gen_max)(nvmlDevice_t, unsigned int*) = nullptr;      // GPU and slot
  nvmlReturn_t (*pcie_gen_gpu_max)(nvmlDevice_t, unsigned int*) = nullptr;  // the GPU's own
  nvmlReturn_t (*pcie_width_max)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*nvlink_error_counter)(nvmlDevice_t, unsigned int, int,
                                       unsigned long long*) = nullptr;
  nvmlReturn_t (*field_values)(nvmlDevice_t, int, NvmlFieldValue*) = nullptr;
  nvmlReturn_t (*persistence_mode)(nvmlDevice_t, int*) = nullptr;  // nvmlEnableState_t
  nvmlReturn_t (*compute_mode)(nvmlDevice_t, int*) = nullptr;      // nvmlComputeMode_t
  nvmlReturn_t (*ecc_mode)(nvmlDevice_t, int*, int*) = nullptr;    // current, pending
  /// nvmlDeviceGetClock(device, clock type, clock id, MHz).
  nvmlReturn_t (*clock_by_id)(nvmlDevice_t, unsigned int, unsigned int, unsigned int*) = nullptr;
  nvmlReturn_t (*default_app_clock)(nvmlDevice_t, unsigned int, unsigned int*) = nullptr;
  nvmlReturn_t (*vbios_version)(nvmlDevice_t, char*, unsigned int) = nullptr;
  nvmlReturn_t (*validate_inforom)(nvmlDevice_t) = nullptr;
  nvmlReturn_t (*default_power_limit)(nvmlDevice_t, unsigned int*) = nullptr;  // mW
  nvmlReturn_t (*numa_node)(nvmlDevice_t, unsigned int*) = nullptr;
  /// nvmlErrorString: "Not Supported", ... (never null when it exists).
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  bool initialized = false;

  NvmlLibrary();
  ~NvmlLibrary();
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  /// Every device NVML sees (NVML order; null where a handle could not be had).
  [[nodiscard]] std::vector<nvmlDevice_t> devices() const;
  /// The device at PCI bus id `bus` (any case), opening that GPU alone; null when missing.
  [[nodiscard]] nvmlDevice_t by_bus_id(const std::string& bus) const;
  /// "0000:19:00.0" (lower case); empty when unknown.
  [[nodiscard]] std::string bus_id(nvmlDevice_t d) const;
  /// The device's name ("NVIDIA H200"); empty when unknown.
  [[nodiscard]] std::string device_name(nvmlDevice_t d) const;
  /// NVLink peers of `d`: remote PCI bus id per link (inactive links with bit 31 set unless
  /// `active_only`).
  [[nodiscard]] std::vector<std::pair<unsigned, std::string>> nvlinks(nvmlDevice_t d,
                                                                      bool active_only) const;
  /// NVML writes "00000000:19:00.0"; lower-case and bounded, so ids compare as strings.
  static std::string normalize(const char* text);
  /// "NVML: Not Supported" for a failed call's code (the number when NVML cannot name it).
  [[nodiscard]] std::string why(nvmlReturn_t r) const;
};

}  // namespace sb::detail
