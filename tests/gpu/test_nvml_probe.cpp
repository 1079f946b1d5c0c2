/// NVML probe on any machine: no throw; an array (empty without a driver) and a matrix string.

#include <gtest/gtest.h>

#include "scalebench/nvml_probe.hpp"

TEST(NvmlProbe, NeverThrowsAndReturnsAnArray) {
  nlohmann::json gpus;
  ASSERT_NO_THROW(gpus = sb::probe_gpus_nvml());
  ASSERT_TRUE(gpus.is_array());
  std::string topo;
  ASSERT_NO_THROW(topo = sb::nvml_topology_matrix());
  if (gpus.empty()) {
    EXPECT_TRUE(topo.empty());
  } else {
    for (const auto& g : gpus) {
      EXPECT_TRUE(g.contains("index"));
      EXPECT_TRUE(g.contains("nvlink"));
    }
    EXPECT_NE(topo.find("GPU0"), std::string::npos);
  }
}

TEST(NvmlProbe, OneGpuByBusIdIsItsEntryOfTheWholeProbe) {
  nlohmann::json none;
  ASSERT_NO_THROW(none = sb::probe_gpu_nvml(""));
  EXPECT_TRUE(none.is_object() && none.empty());
  EXPECT_TRUE(sb::probe_gpu_nvml("ffff:ff:1f.7").empty());  // no such GPU
  std::string driver;
  ASSERT_NO_THROW(driver = sb::nvml_driver_version());
  const auto all = sb::probe_gpus_nvml();
  EXPECT_EQ(driver.empty(), all.empty());
  for (const auto& g : all) {
    if (!g.contains("pci_bus_id")) continue;
    const auto one = sb::probe_gpu_nvml(g["pci_bus_id"].get<std::string>());
    EXPECT_EQ(one, g) << "the single-GPU probe must describe it exactly as the whole probe";
  }
}
