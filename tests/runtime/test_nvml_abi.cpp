// The NVML ABI subset scalebench declares itself (runtime/src/nvml_library.hpp, so that it needs
// no nvml.h to build) checked against the real nvml.h where the toolkit ships one: every struct's
// size and member offsets, and every constant. Compiles to nothing to check without nvml.h.
#include <gtest/gtest.h>

#include <cstddef>

#include "nvml_library.hpp"

#if __has_include(<nvml.h>)
#include <nvml.h>

namespace d = sb::detail;

#define SB_SAME_LAYOUT(ours, theirs, a, b) \
  static_assert(offsetof(ours, a) == offsetof(theirs, b), #ours "." #a " is misplaced")

static_assert(sizeof(d::NvmlMemory) == sizeof(nvmlMemory_t));
static_assert(sizeof(d::NvmlPciInfo) == sizeof(nvmlPciInfo_t));
SB_SAME_LAYOUT(d::NvmlPciInfo, nvmlPciInfo_t, bus_id, busId);
SB_SAME_LAYOUT(d::NvmlPciInfo, nvmlPciInfo_t, domain, domain);
static_assert(sizeof(d::NvmlEventData) == sizeof(nvmlEventData_t));
SB_SAME_LAYOUT(d::NvmlEventData, nvmlEventData_t, event_data, eventData);

static_assert(sizeof(d::NvmlProcessInfo) == sizeof(nvmlProcessInfo_v2_t));
SB_SAME_LAYOUT(d::NvmlProcessInfo, nvmlProcessInfo_v2_t, pid, pid);
SB_SAME_LAYOUT(d::NvmlProcessInfo, nvmlProcessInfo_v2_t, used_gpu_memory, usedGpuMemory);
SB_SAME_LAYOUT(d::NvmlProcessInfo, nvmlProcessInfo_v2_t, compute_instance_id, computeInstanceId);
static_assert(sizeof(d::NvmlProcessInfo) == sizeof(nvmlProcessInfo_t));
static_assert(sizeof(d::NvmlProcessInfoV1) == sizeof(nvmlProcessInfo_v1_t));
SB_SAME_LAYOUT(d::NvmlProcessInfoV1, nvmlProcessInfo_v1_t, used_gpu_memory, usedGpuMemory);

static_assert(sizeof(d::NvmlProcessUtilizationSample) == sizeof(nvmlProcessUtilizationSample_t));
SB_SAME_LAYOUT(d::NvmlProcessUtilizationSample, nvmlProcessUtilizationSample_t, timestamp,
               timeStamp);
SB_SAME_LAYOUT(d::NvmlProcessUtilizationSample, nvmlProcessUtilizationSample_t, sm_util, smUtil);
SB_SAME_LAYOUT(d::NvmlProcessUtilizationSample, nvmlProcessUtilizationSample_t, dec_util, decUtil);
static_assert(sizeof(d::NvmlUtilization) == sizeof(nvmlUtilization_t));
SB_SAME_LAYOUT(d::NvmlUtilization, nvmlUtilization_t, memory, memory);

static_assert(sizeof(d::NvmlValue) == sizeof(nvmlValue_t));
static_assert(sizeof(d::NvmlFieldValue) == sizeof(nvmlFieldValue_t));
SB_SAME_LAYOUT(d::NvmlFieldValue, nvmlFieldValue_t, field_id, fieldId);
SB_SAME_LAYOUT(d::NvmlFieldValue, nvmlFieldValue_t, scope_id, scopeId);
SB_SAME_LAYOUT(d::NvmlFieldValue, nvmlFieldValue_t, value_type, valueType);
SB_SAME_LAYOUT(d::NvmlFieldValue, nvmlFieldValue_t, nvml_return, nvmlReturn);
SB_SAME_LAYOUT(d::NvmlFieldValue, nvmlFieldValue_t, value, value);
static_assert(sizeof(nvmlReturn_t) == sizeof(d::nvmlReturn_t));
static_assert(sizeof(nvmlValueType_t) == sizeof(int));
static_assert(sizeof(nvmlEnableState_t) == sizeof(int));
static_assert(sizeof(nvmlComputeMode_t) == sizeof(int));
static_assert(sizeof(nvmlNvLinkErrorCounter_t) == sizeof(int));

static_assert(d::kNvmlSuccess == NVML_SUCCESS);
static_assert(d::kNvmlNotSupported == NVML_ERROR_NOT_SUPPORTED);
static_assert(d::kNvmlNoPermission == NVML_ERROR_NO_PERMISSION);
static_assert(d::kNvmlNotFound == NVML_ERROR_NOT_FOUND);
static_assert(d::kNvmlInsufficientSize == NVML_ERROR_INSUFFICIENT_SIZE);
static_assert(d::kNvmlCorruptedInforom == NVML_ERROR_CORRUPTED_INFOROM);
static_assert(d::kClockSm == NVML_CLOCK_SM);
static_assert(d::kClockMem == NVML_CLOCK_MEM);
static_assert(d::kClockIdAppTarget == NVML_CLOCK_ID_APP_CLOCK_TARGET);
static_assert(d::kClockIdAppDefault == NVML_CLOCK_ID_APP_CLOCK_DEFAULT);
static_assert(d::kComputeModeProhibited == NVML_COMPUTEMODE_PROHIBITED);
// Links 0-17: every GPU so far has at most 18 (NVML 13 reserves 36).
static_assert(d::kNvlinkMaxLinks <= NVML_NVLINK_MAX_LINKS);
static_assert(d::kVbiosSize == NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE);
static_assert(d::kDriverSize == NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE);
static_assert(d::kNvlinkErrorReplay == NVML_NVLINK_ERROR_DL_REPLAY);
static_assert(d::kNvlinkErrorRecovery == NVML_NVLINK_ERROR_DL_RECOVERY);
static_assert(d::kNvlinkErrorCrcFlit == NVML_NVLINK_ERROR_DL_CRC_FLIT);
static_assert(d::kNvlinkErrorCrcData == NVML_NVLINK_ERROR_DL_CRC_DATA);
static_assert(d::kFieldNvlinkCrcFlitTotal == NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL);
static_assert(d::kFieldNvlinkCrcDataTotal == NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL);
static_assert(d::kFieldNvlinkReplayTotal == NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL);
static_assert(d::kFieldNvlinkRecoveryTotal == NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL);
static_assert(d::kValueDouble == NVML_VALUE_TYPE_DOUBLE);
static_assert(d::kValueUnsignedInt == NVML_VALUE_TYPE_UNSIGNED_INT);
static_assert(d::kValueUnsignedLong == NVML_VALUE_TYPE_UNSIGNED_LONG);
static_assert(d::kValueUnsignedLongLong == NVML_VALUE_TYPE_UNSIGNED_LONG_LONG);
static_assert(d::kValueSignedLongLong == NVML_VALUE_TYPE_SIGNED_LONG_LONG);
static_assert(d::kValueSignedInt == NVML_VALUE_TYPE_SIGNED_INT);
static_assert(d::kValueUnsignedShort == NVML_VALUE_TYPE_UNSIGNED_SHORT);
static_assert(d::kEventXidCritical == nvmlEventTypeXidCriticalError);
#if defined(NVML_FI_DEV_NVLINK_COUNT_LINK_RECOVERY_EVENTS)
static_assert(d::kFieldNvlinkRecoveryEvents == NVML_FI_DEV_NVLINK_COUNT_LINK_RECOVERY_EVENTS);
static_assert(d::kFieldNvlinkEffectiveErrors == NVML_FI_DEV_NVLINK_COUNT_EFFECTIVE_ERRORS);
#endif

TEST(NvmlAbi, MatchesTheToolkitHeader) {
  SUCCEED() << "checked at compile time against nvml.h";
}
#else
TEST(NvmlAbi, MatchesTheToolkitHeader) {
  GTEST_SKIP() << "no nvml.h in this toolkit: nothing to check against";
}
#endif
