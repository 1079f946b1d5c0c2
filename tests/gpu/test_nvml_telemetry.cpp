// The NVML telemetry source on a real GPU (label gpu): every reading in a plausible range.
#include <gtest/gtest.h>

#include <cmath>

#include "scalebench/nvml_probe.hpp"
#include "scalebench/telemetry_source.hpp"

TEST(NvmlTelemetry, ReadsPlausibleValuesOfARealGpu) {
  const auto gpus = sb::probe_gpus_nvml();
  if (gpus.empty() || !gpus[0].contains("pci_bus_id")) GTEST_SKIP() << "no GPU seen by NVML";
  auto src = sb::make_gpu_telemetry(gpus[0]["pci_bus_id"].get<std::string>());
  ASSERT_TRUE(src);
  EXPECT_TRUE(src->gpu());
  EXPECT_FALSE(src->describe().value("gpu_name", std::string()).empty());
  sb::TelemetrySample s;
  src->read(s);
  EXPECT_GT(s.gpu_sm_mhz, 0);
  EXPECT_LT(s.gpu_sm_mhz, 5000);
  EXPECT_GT(s.gpu_mem_mhz, 100);
  EXPECT_LT(s.gpu_mem_mhz, 20000);
  EXPECT_GT(s.gpu_app_sm_mhz, 300);
  EXPECT_LT(s.gpu_app_sm_mhz, 5000);
  EXPECT_GT(s.gpu_power_w, 1);
  EXPECT_LT(s.gpu_power_w, 2000);
  EXPECT_GT(s.gpu_power_limit_w, 50);
  EXPECT_LT(s.gpu_power_limit_w, 2000);
  EXPECT_GT(s.gpu_temp_c, 0);
  EXPECT_LT(s.gpu_temp_c, 120);
  ASSERT_TRUE(std::isfinite(s.gpu_reasons));
  EXPECT_GE(s.gpu_reasons, 0);
  if (std::isfinite(s.gpu_ecc_uncorrected)) {
    EXPECT_GE(s.gpu_ecc_uncorrected, 0);
  }
  EXPECT_FALSE(sb::make_gpu_telemetry("ffff:ff:1f.7")) << "no such GPU";
}
