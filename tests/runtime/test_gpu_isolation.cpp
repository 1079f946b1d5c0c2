/// One visible GPU per worker (gpu_isolation.hpp): the CUDA_VISIBLE_DEVICES value a worker
/// placed on GPU k narrows its environment to, and when it must leave the variable alone.
#include <gtest/gtest.h>

#include <cstdlib>

#include "gpu_isolation.hpp"

using sb::detail::gpu_isolation_enabled;
using sb::detail::isolated_visible_devices;

TEST(GpuIsolation, UnsetVariableMeansEveryGpuAndTheOrdinalItself) {
  EXPECT_EQ(isolated_visible_devices(nullptr, 0), "0");
  EXPECT_EQ(isolated_visible_devices(nullptr, 7), "7");
}

TEST(GpuIsolation, PicksTheEntryOfTheOrdinalFromTheSchedulersList) {
  EXPECT_EQ(isolated_visible_devices("2,3", 0), "2");
  EXPECT_EQ(isolated_visible_devices("2,3", 1), "3");
  EXPECT_EQ(isolated_visible_devices(" 4 , 6,7", 1), "6");
  EXPECT_EQ(isolated_visible_devices("GPU-8f2c1d7e-0000-1111-2222-333344445555,MIG-abc", 1),
            "MIG-abc");
}

TEST(GpuIsolation, LeavesTheVariableAloneWhenTheOrdinalIsNotInTheList) {
  EXPECT_FALSE(isolated_visible_devices("2,3", 2));
  EXPECT_FALSE(isolated_visible_devices("2,3", -1));
  EXPECT_FALSE(isolated_visible_devices(nullptr, -1));
  EXPECT_FALSE(isolated_visible_devices("", 0));        // no GPU visible at all
  EXPECT_FALSE(isolated_visible_devices("-1", 0));      // hides every GPU
  EXPECT_FALSE(isolated_visible_devices("0,-1,2", 2));  // CUDA stops at "-1": no third GPU
  EXPECT_FALSE(isolated_visible_devices("0,,2", 2));
  EXPECT_EQ(isolated_visible_devices("0,-1,2", 0), "0");
}

TEST(GpuIsolation, OnUnlessTurnedOffByZero) {
  unsetenv("SCALEBENCH_GPU_ISOLATION");
  EXPECT_TRUE(gpu_isolation_enabled());
  setenv("SCALEBENCH_GPU_ISOLATION", "1", 1);
  EXPECT_TRUE(gpu_isolation_enabled());
  setenv("SCALEBENCH_GPU_ISOLATION", "0", 1);
  EXPECT_FALSE(gpu_isolation_enabled());
  unsetenv("SCALEBENCH_GPU_ISOLATION");
}
