/// GPU start-up pieces (issue #3): a context started early on its own thread is adopted by
/// create_gpu_device_context, refused for another device, released when unused, and a failed
/// early attempt still surfaces the typed error; the NCCL start is skipped for a lone worker.

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "scalebench/gpu_context.cuh"
#include "scalebench/gpu_runtime.hpp"

namespace {

int gpus_or_skip_reason(std::string& why) {
  return sb::visible_gpu_count(&why);
}

/// The context works: a memset on its stream completes.
void expect_usable(const sb::GpuContext& ctx) {
  void* p = nullptr;
  SB_CUDA_CHECK(cudaSetDevice(ctx.device));
  SB_CUDA_CHECK(cudaMalloc(&p, 256));
  SB_CUDA_CHECK(cudaMemsetAsync(p, 0, 256, ctx.stream));
  SB_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
  SB_CUDA_CHECK(cudaFree(p));
}

TEST(StartupGpu, EarlyContextIsAdopted) {
  std::string why;
  if (gpus_or_skip_reason(why) == 0) GTEST_SKIP() << why;
  auto early = sb::start_gpu_context_early(0);
  ASSERT_NE(early, nullptr);
  sb::GpuStartup t;
  auto ctx = sb::create_gpu_device_context(0, std::move(early), &t);
  ASSERT_NE(ctx, nullptr);
  EXPECT_TRUE(t.cuda_early);
  EXPECT_GT(t.cuda_init_s, 0.0);
  EXPECT_GT(t.cuda_wait_s, 0.0);
  EXPECT_GT(t.gpu_libraries_s, 0.0) << "cuBLAS and cuSOLVER load beside the context";
  EXPECT_NE(ctx->cublas(), nullptr);
  EXPECT_NE(ctx->cusolver(), nullptr);
  EXPECT_EQ(ctx->device, 0);
  cudaDeviceProp prop{};
  SB_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  EXPECT_STREQ(ctx->prop.name, prop.name);
  EXPECT_EQ(ctx->prop.multiProcessorCount, prop.multiProcessorCount);
  EXPECT_EQ(ctx->nccl, nullptr);
  expect_usable(*ctx);
}

TEST(StartupGpu, EarlyContextOfABadOrdinalFallsBackToTheTypedError) {
  std::string why;
  const int n = gpus_or_skip_reason(why);
  if (n == 0) GTEST_SKIP() << why;
  auto early = sb::start_gpu_context_early(n);  // the thread fails quietly
  ASSERT_NE(early, nullptr);
  EXPECT_THROW((void)sb::create_gpu_device_context(n, std::move(early), nullptr),
               sb::EnvironmentError);
}

TEST(StartupGpu, EarlyContextOfAnotherDeviceIsNotAdopted) {
  std::string why;
  const int n = gpus_or_skip_reason(why);
  if (n < 2) GTEST_SKIP() << "needs two GPUs";
  sb::GpuStartup t;
  auto ctx = sb::create_gpu_device_context(0, sb::start_gpu_context_early(1), &t);
  EXPECT_FALSE(t.cuda_early);
  EXPECT_EQ(ctx->device, 0);
  expect_usable(*ctx);
}

TEST(StartupGpu, UnusedEarlyContextIsReleasedAndTheDeviceStillWorks) {
  std::string why;
  if (gpus_or_skip_reason(why) == 0) GTEST_SKIP() << why;
  sb::start_gpu_context_early(0).reset();  // joined, then its context released
  sb::GpuStartup t;
  auto ctx = sb::create_gpu_context(0, MPI_COMM_NULL, &t);
  EXPECT_FALSE(t.cuda_early);
  EXPECT_GT(t.cuda_init_s, 0.0);
  expect_usable(*ctx);
}

TEST(StartupGpu, NoEarlyContextWithoutADevice) {
  EXPECT_EQ(sb::start_gpu_context_early(-1), nullptr);
}

TEST(StartupGpu, LoneWorkerStartsNoCommunicator) {
  std::string why;
  if (gpus_or_skip_reason(why) == 0) GTEST_SKIP() << why;
  sb::GpuStartup t;
  auto ctx = sb::create_gpu_device_context(0, nullptr, &t);
  auto start = sb::start_gpu_communicator(*ctx, MPI_COMM_NULL);
  EXPECT_EQ(start, nullptr);
  sb::finish_gpu_communicator(*ctx, std::move(start), &t);
  EXPECT_EQ(ctx->nccl, nullptr);
  EXPECT_EQ(ctx->nccl_size, 1);
  EXPECT_EQ(t.nccl_init_s, 0.0);
  EXPECT_EQ(t.nccl_wait_s, 0.0);
}

}  // namespace
