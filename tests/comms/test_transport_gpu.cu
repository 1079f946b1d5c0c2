// The GPU transports (scalebench/gpu_transport.cuh) under real mpiexec, one rank per GPU (label
// gpu): every operation over nccl and over mpi-host delivers what the CPU computes from the
// same inputs, bit for bit (two ranks: every sum has one order). Exit 77 (skipped) with fewer
// than two GPUs.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <mpi.h>
#include <nccl.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "scalebench/gpu_context.cuh"
#include "scalebench/gpu_error.cuh"
#include "scalebench/gpu_transport.cuh"
#include "scalebench/philox.hpp"

namespace {

int rank_ = 0, size_ = 1;
sb::GpuContext ctx_;

/// Deterministic doubles of rank r (Philox uniforms), as the workloads' data.
std::vector<double> values(int r, std::size_t n) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = sb::data::uniform(5, i, static_cast<std::uint32_t>(r));
  return v;
}

double* upload(const std::vector<double>& h) {
  double* d = nullptr;
  SB_CUDA_CHECK(cudaMalloc(&d, std::max<std::size_t>(h.size(), 1) * sizeof(double)));
  SB_CUDA_CHECK(cudaMemcpy(d, h.data(), h.size() * sizeof(double), cudaMemcpyHostToDevice));
  // A copy from pageable memory may return before it has landed, and the transport's stream
  // (non-blocking) does not wait for the legacy stream's work.
  SB_CUDA_CHECK(cudaDeviceSynchronize());
  return d;
}

std::vector<double> download(const double* d, std::size_t n) {
  std::vector<double> h(n);
  SB_CUDA_CHECK(cudaStreamSynchronize(ctx_.stream));
  SB_CUDA_CHECK(cudaMemcpy(h.data(), d, n * sizeof(double), cudaMemcpyDeviceToHost));
  return h;
}

class Transports : public ::testing::TestWithParam<sb::GpuTransportKind> {};

TEST_P(Transports, EveryOperationDeliversTheCpuAnswer) {
  sb::GpuTransport t(GetParam(), ctx_, MPI_COMM_WORLD);
  const std::size_t n = (std::size_t{1} << 20) + 3;
  const int peer = (rank_ + 1) % size_, from = (rank_ + size_ - 1) % size_;
  // A ring of grouped sends and receives.
  const auto mine = values(rank_, n);
  double* send = upload(mine);
  double* recv = upload(std::vector<double>(n, -1.0));
  t.group_start();
  t.send(send, n, ncclFloat64, peer, ctx_.stream);
  t.recv(recv, n, ncclFloat64, from, ctx_.stream);
  t.group_end();
  EXPECT_EQ(download(recv, n), values(from, n));
  // All-reduce (sum over the ranks in rank order: exact for two ranks) and reduce to rank 0.
  std::vector<double> sum(n, 0.0);
  for (int r = 0; r < size_; ++r) {
    const auto v = values(r, n);
    for (std::size_t i = 0; i < n; ++i) sum[i] += v[i];
  }
  t.all_reduce(send, recv, n, ncclFloat64, ncclSum, ctx_.stream);
  if (size_ == 2) EXPECT_EQ(download(recv, n), sum);
  t.reduce(send, recv, n, ncclFloat64, ncclSum, 0, ctx_.stream);
  if (size_ == 2 && rank_ == 0) EXPECT_EQ(download(recv, n), sum);
  // Broadcast from the last rank, in place.
  t.broadcast(send, send, n, ncclFloat64, size_ - 1, ctx_.stream);
  EXPECT_EQ(download(send, n), values(size_ - 1, n));
  // Integer sums wrap the same way everywhere.
  std::vector<std::uint64_t> words(1000, ~std::uint64_t{0} - static_cast<std::uint64_t>(rank_));
  std::uint64_t* w = nullptr;
  SB_CUDA_CHECK(cudaMalloc(&w, words.size() * 8));
  SB_CUDA_CHECK(cudaMemcpy(w, words.data(), words.size() * 8, cudaMemcpyHostToDevice));
  SB_CUDA_CHECK(cudaDeviceSynchronize());  // as in upload()
  t.all_reduce(w, w, words.size(), ncclUint64, ncclSum, ctx_.stream);
  SB_CUDA_CHECK(cudaStreamSynchronize(ctx_.stream));
  SB_CUDA_CHECK(cudaMemcpy(words.data(), w, words.size() * 8, cudaMemcpyDeviceToHost));
  std::uint64_t want = 0;
  for (int r = 0; r < size_; ++r) want += ~std::uint64_t{0} - static_cast<std::uint64_t>(r);
  EXPECT_EQ(words[999], want);
  SB_CUDA_CHECK(cudaFree(w));
  SB_CUDA_CHECK(cudaFree(send));
  SB_CUDA_CHECK(cudaFree(recv));
}

INSTANTIATE_TEST_SUITE_P(Kinds, Transports,
                         ::testing::Values(sb::GpuTransportKind::nccl,
                                           sb::GpuTransportKind::mpi_host));

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess) gpus = 0;
  int fewest = gpus;
  MPI_Allreduce(&gpus, &fewest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (fewest < 2 || size_ < 2) {
    if (rank_ == 0) std::printf("fewer than two GPUs or ranks: skipped\n");
    MPI_Finalize();
    return 77;
  }
  ctx_.device = rank_ % gpus;
  SB_CUDA_CHECK(cudaSetDevice(ctx_.device));
  SB_CUDA_CHECK(cudaStreamCreateWithFlags(&ctx_.stream, cudaStreamNonBlocking));
  ncclUniqueId id{};
  if (rank_ == 0) SB_NCCL_CHECK(ncclGetUniqueId(&id));
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  SB_NCCL_CHECK(ncclCommInitRank(&ctx_.nccl, size_, id, rank_));
  ctx_.nccl_rank = rank_;
  ctx_.nccl_size = size_;
  ::testing::InitGoogleTest(&argc, argv);
  if (rank_ != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int rc = RUN_ALL_TESTS();
  int worst = rc;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  (void)ncclCommDestroy(ctx_.nccl);
  ctx_.nccl = nullptr;
  (void)cudaStreamDestroy(ctx_.stream);
  ctx_.stream = nullptr;
  MPI_Finalize();
  return worst;
}
