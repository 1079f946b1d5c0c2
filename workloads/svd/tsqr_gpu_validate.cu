// GpuTsqr's validation (tsqr_gpu.cuh), untimed: residual, orthogonality of U.
#include <mpi.h>

#include <cmath>

#include <cublas_v2.h>

#include <algorithm>
#include <string>

#include "scalebench/error.hpp"
#include "scalebench/gpu_error.cuh"
#include "svd/svd_gpu_kernels.cuh"
#include "svd/tsqr_gpu.cuh"
#include "svd/tsqr_gpu_detail.cuh"

namespace sb::svd {

using namespace tsqr_detail;

std::vector<double> GpuTsqr::u_host(int i) const {
  SB_CUDA_CHECK(cudaStreamSynchronize(ctx_.stream));
  std::vector<double> h(static_cast<std::size_t>(cfg_.chunk * cfg_.n));
  const auto row_bytes = static_cast<std::size_t>(cfg_.chunk) * sizeof(double);
  SB_CUDA_CHECK(cudaMemcpy2D(h.data(), row_bytes, u_.at(static_cast<std::size_t>(i)),
                             static_cast<std::size_t>(lda_) * sizeof(double), row_bytes,
                             static_cast<std::size_t>(cfg_.n), cudaMemcpyDeviceToHost));
  return h;
}

std::vector<double> GpuTsqr::validate() {
  if (ctx_.device >= 0) SB_CUDA_CHECK(cudaSetDevice(ctx_.device));
  const std::int64_t n = cfg_.n, chunk = cfg_.chunk;
  const auto nn = static_cast<std::size_t>(n * n);
  cudaStream_t main = ctx_.stream;
  SB_CUDA_CHECK(cudaStreamSynchronize(main));
  // S and V^T from the root to every worker.
  std::vector<double> sigma(static_cast<std::size_t>(n), 0.0), vt(nn, 0.0);
  if (rank_ == 0) {
    std::vector<double> v(nn);
    SB_CUDA_CHECK(
        cudaMemcpy(sigma.data(), sv_, sigma.size() * sizeof(double), cudaMemcpyDeviceToHost));
    SB_CUDA_CHECK(cudaMemcpy(v.data(), vmat_, nn * sizeof(double), cudaMemcpyDeviceToHost));
    if (std::string(svd_routine_) == "gesvd") {
      vt = v;
    } else {
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < n; ++i)
          vt[static_cast<std::size_t>(i + j * n)] = v[static_cast<std::size_t>(j + i * n)];
    }
  }
  SB_MPI_CHECK(MPI_Bcast(sigma.data(), static_cast<int>(n), MPI_DOUBLE, 0, comm_));
  SB_MPI_CHECK(MPI_Bcast(vt.data(), static_cast<int>(nn), MPI_DOUBLE, 0, comm_));
  // S V^T on the device (in svd_in_), G = sum U_i^T U_i (in stage_).
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < n; ++i)
      vt[static_cast<std::size_t>(i + j * n)] *= sigma[static_cast<std::size_t>(i)];
  // On `main`, which the products below run on (it does not wait for the legacy stream).
  SB_CUDA_CHECK(
      cudaMemcpyAsync(svd_in_, vt.data(), nn * sizeof(double), cudaMemcpyHostToDevice, main));
  SB_CUDA_CHECK(cudaMemsetAsync(stage_, 0, nn * sizeof(double), main));
  cublasHandle_t h = nullptr;
  SB_CUBLAS_CHECK(cublasCreate(&h));
  SB_CUBLAS_CHECK(cublasSetStream(h, main));
  double resid = 0, a_sq = 0;
  const double one = 1.0, minus_one = -1.0;
  const int in = as_int(n), ic = as_int(chunk), elems = as_int(chunk * n), lu = as_int(lda_);
  // Blocks are regenerated contiguously (stack mode overwrote its matrix with reflectors).
  double* scratch = nullptr;
  if (stack_ && used_ > 0)
    SB_CUDA_CHECK(cudaMalloc(&scratch, static_cast<std::size_t>(chunk * n) * sizeof(double)));
  try {
    for (int i = 0; i < used_; ++i) {
      const auto bi = static_cast<std::size_t>(i);
      double* a = stack_ ? scratch : a_[bi];
      gpu::generate_rows(a, chunk, blocks_[bi] * chunk, chunk, n, cfg_.seed, scales_, main);
      double nrm = 0;
      SB_CUBLAS_CHECK(cublasDnrm2(h, elems, a, 1, &nrm));
      a_sq += nrm * nrm;
      SB_CUBLAS_CHECK(cublasDgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, in, in, ic, &one, u_[bi], lu, u_[bi],
                                  lu, &one, stage_, in));
      SB_CUBLAS_CHECK(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, ic, in, in, &minus_one, u_[bi], lu,
                                  svd_in_, in, &one, a, ic));
      SB_CUBLAS_CHECK(cublasDnrm2(h, elems, a, 1, &nrm));
      resid += nrm * nrm;
    }
  } catch (...) {
    (void)cublasDestroy(h);
    if (scratch != nullptr) (void)cudaFree(scratch);
    throw;
  }
  if (scratch != nullptr) {
    SB_CUDA_CHECK(cudaStreamSynchronize(main));
    SB_CUDA_CHECK(cudaFree(scratch));
  }
  std::vector<double> sums(2 + nn, 0.0);
  SB_CUDA_CHECK(cudaStreamSynchronize(main));
  SB_CUDA_CHECK(cudaMemcpy(sums.data() + 2, stage_, nn * sizeof(double), cudaMemcpyDeviceToHost));
  (void)cublasDestroy(h);
  sums[0] = resid;
  sums[1] = a_sq;
  std::vector<double> total(sums.size(), 0.0);
  SB_MPI_CHECK(MPI_Reduce(sums.data(), total.data(), static_cast<int>(sums.size()), MPI_DOUBLE,
                          MPI_SUM, 0, comm_));
  if (rank_ != 0) return {};
  double orth_sq = 0;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < n; ++i) {
      const double d = total[2 + static_cast<std::size_t>(i + j * n)] - (i == j ? 1.0 : 0.0);
      orth_sq += d * d;
    }
  return {total[0], total[1], std::sqrt(orth_sq)};
}

}  // namespace sb::svd
