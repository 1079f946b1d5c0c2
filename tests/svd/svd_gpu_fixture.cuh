#pragma once
/// @file svd_gpu_fixture.cuh
/// The GoogleTest fixture of the svd GPU tests: MPI initialised, skipped without a GPU, a
/// context on device 0 (no NCCL).

#include <gtest/gtest.h>

#include "scalebench/gpu_context.cuh"
#include "scalebench/gpu_runtime.hpp"
#include "svd_driver.hpp"

namespace sb::svd::test {

class GpuFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    ensure_mpi();
    if (visible_gpu_count() == 0) GTEST_SKIP() << "no GPU";
    ctx_ = create_gpu_context(0, MPI_COMM_NULL, nullptr);
  }
  GpuContextPtr ctx_;
};

}  // namespace sb::svd::test
