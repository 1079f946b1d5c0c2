/// GPU context smoke test: device discovery, context, stream, library handles, descriptions.

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "scalebench/gpu_context.cuh"
#include "scalebench/gpu_runtime.hpp"
#include "scalebench/nvml_probe.hpp"

namespace {

TEST(GpuContext, CountWithoutVisibleDevices) {
  // Run by CountIsZeroWhenHidden in a child process with CUDA_VISIBLE_DEVICES="".
  if (std::getenv("SB_EXPECT_NO_GPU") == nullptr) GTEST_SKIP() << "run by the parent test";
  std::string why;
  EXPECT_EQ(sb::visible_gpu_count(&why), 0);
  EXPECT_FALSE(why.empty());
  std::printf("why: %s\n", why.c_str());
}

TEST(GpuContext, CountIsZeroWhenHidden) {
  const std::string cmd =
      "CUDA_VISIBLE_DEVICES= SB_EXPECT_NO_GPU=1 /proc/self/exe "
      "--gtest_filter=GpuContext.CountWithoutVisibleDevices > /dev/null 2>&1";
  // /proc/self/exe inside the shell is the shell: resolve ours first.
  char exe[4096] = {};
  const ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  ASSERT_GT(len, 0);
  const std::string run = "CUDA_VISIBLE_DEVICES= SB_EXPECT_NO_GPU=1 '" + std::string(exe) +
                          "' --gtest_filter=GpuContext.CountWithoutVisibleDevices";
  EXPECT_EQ(std::system(run.c_str()), 0) << cmd;
}

TEST(GpuContext, CreateDescribeAndHandles) {
  std::string why;
  const int n = sb::visible_gpu_count(&why);
  if (n == 0) GTEST_SKIP() << why;
  EXPECT_TRUE(sb::cuda_built());
  sb::GpuStartup t;
  auto ctx = sb::create_gpu_context(0, MPI_COMM_NULL, &t);
  ASSERT_NE(ctx, nullptr);
  EXPECT_EQ(ctx->device, 0);
  EXPECT_NE(ctx->stream, nullptr);
  EXPECT_EQ(ctx->nccl, nullptr);
  EXPECT_EQ(ctx->nccl_size, 1);
  EXPECT_GT(t.cuda_init_s, 0.0);
  unsigned flags = 0;
  SB_CUDA_CHECK(cudaStreamGetFlags(ctx->stream, &flags));
  EXPECT_EQ(flags & cudaStreamNonBlocking, static_cast<unsigned>(cudaStreamNonBlocking));
  cublasHandle_t h = ctx->cublas();
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(ctx->cublas(), h);
  cudaStream_t s = nullptr;
  SB_CUBLAS_CHECK(cublasGetStream(h, &s));
  EXPECT_EQ(s, ctx->stream);
  cusolverDnHandle_t c = ctx->cusolver();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(ctx->cusolver(), c);

  const auto d = sb::describe_gpu(*ctx);
  std::printf("%s\n", d.dump(1).c_str());
  EXPECT_FALSE(d.at("name").get<std::string>().empty());
  EXPECT_EQ(d.at("uuid").get<std::string>().rfind("GPU-", 0), 0u);
  EXPECT_GT(d.at("memory_bytes").get<std::uint64_t>(), 0u);
  EXPECT_GT(d.at("sm_count").get<int>(), 0);
  EXPECT_TRUE(d.contains("compute_capability"));
  EXPECT_TRUE(d.contains("pci_bus_id"));

  const auto v = sb::gpu_library_versions();
  std::printf("%s\n", v.dump(1).c_str());
  for (const char* key : {"cuda_runtime", "cuda_driver", "nccl", "cublas", "cusolver", "curand"})
    EXPECT_TRUE(v.contains(key)) << key;

  const auto nv = sb::probe_gpus_nvml();
  ASSERT_TRUE(nv.is_array());
  std::printf("nvml: %s\ntopology:\n%s\n", nv.dump(1).c_str(), sb::nvml_topology_matrix().c_str());
  if (!nv.empty()) {
    EXPECT_TRUE(nv[0].contains("name"));
    EXPECT_TRUE(nv[0].contains("uuid"));
    EXPECT_FALSE(sb::nvml_topology_matrix().empty());
    EXPECT_TRUE(d.contains("driver")) << "NVML entry matched to the CUDA device by PCI bus id";
    EXPECT_TRUE(d.contains("nvlink"));
    EXPECT_TRUE(v.contains("nvidia_driver"));
  }
}

TEST(GpuContext, BadOrdinalIsEnvironmentError) {
  std::string why;
  const int n = sb::visible_gpu_count(&why);
  if (n == 0) GTEST_SKIP() << why;
  EXPECT_THROW((void)sb::create_gpu_context(n, MPI_COMM_NULL, nullptr), sb::EnvironmentError);
}

}  // namespace
