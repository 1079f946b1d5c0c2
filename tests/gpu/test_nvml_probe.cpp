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
