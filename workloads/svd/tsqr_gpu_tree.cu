// GpuTsqr, steps 2 and 4 of finish() (tsqr_gpu.cuh): R factors up the tree across the case's
// GPU workers (NCCL, or staged through host memory: svd.comm), U_R back down.
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

void GpuTsqr::tree_up(const std::vector<TreeStep>& steps, std::size_t& lv) {
  const std::int64_t n = cfg_.n;
  const int in = as_int(n);
  const auto nn = static_cast<std::size_t>(n * n);
  cudaStream_t main = ctx_.stream;
  const int lwork_main = static_cast<int>(work_main_bytes_ / sizeof(double));
  for (const auto& step : steps) {
    if (step.receive) {
      comm_begin();
      transport_->recv(stage_, nn, ncclDouble, step.partner, main);
      comm_end();
      merge_cholesky_[lv] = sketched_ && merge_by_cholesky(lv);
      if (!merge_cholesky_[lv]) {
        double* m = level_m_[lv];
        gpu::copy_matrix(m, 2 * n, own_r_, n, n, n, main);
        gpu::copy_matrix(m + n, 2 * n, stage_, n, n, n, main);
        SB_CUSOLVER_CHECK(cusolverDnDgeqrf(main_solver_, 2 * in, in, m, 2 * in, level_tau_[lv],
                                           work_main_, lwork_main, infos_ + kInfoLevel));
        gpu::pad_copy(own_r_, n, n, n, m, 2 * n, n, true, main);
      }
      ++lv;
    } else {
      comm_begin();
      transport_->send(own_r_, nn, ncclDouble, step.partner, main);
      transport_->recv(x_, nn, ncclDouble, step.partner, main);
      comm_end();
    }
  }
}

void GpuTsqr::tree_down(const std::vector<TreeStep>& steps, std::size_t lv) {
  const std::int64_t n = cfg_.n;
  const int in = as_int(n);
  const auto nn = static_cast<std::size_t>(n * n);
  cudaStream_t main = ctx_.stream;
  const int lwork_main = static_cast<int>(work_main_bytes_ / sizeof(double));
  for (std::size_t s = steps.size(); s-- > 0;) {
    if (!steps[s].receive) continue;
    --lv;
    if (merge_cholesky_[lv]) {
      // Q X = [R_c^-1 X; W R_c^-1 X].
      const double one = 1.0, zero = 0.0;
      cublasHandle_t h = ctx_.cublas();
      SB_CUBLAS_CHECK(cublasDtrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                                  CUBLAS_DIAG_NON_UNIT, in, in, &one, level_m_[lv] + n, 2 * in, x_,
                                  in));
      SB_CUBLAS_CHECK(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, in, in, in, &one, level_m_[lv],
                                  2 * in, x_, in, &zero, stage_, in));
    } else {
      gpu::pad_copy(cbuf_, 2 * n, 2 * n, n, x_, n, n, false, main);
      SB_CUSOLVER_CHECK(cusolverDnDormqr(main_solver_, CUBLAS_SIDE_LEFT, CUBLAS_OP_N, 2 * in, in,
                                         in, level_m_[lv], 2 * in, level_tau_[lv], cbuf_, 2 * in,
                                         work_main_, lwork_main, infos_ + kInfoDown));
      gpu::copy_matrix(x_, n, cbuf_, 2 * n, n, n, main);
      gpu::copy_matrix(stage_, n, cbuf_ + n, 2 * n, n, n, main);
    }
    comm_begin();
    transport_->send(stage_, nn, ncclDouble, steps[s].partner, main);
    comm_end();
  }
}

bool GpuTsqr::merge_by_cholesky(std::size_t lv) {
  const std::int64_t n = cfg_.n;
  const int in = as_int(n), lwork = static_cast<int>(work_main_bytes_ / sizeof(double));
  cudaStream_t main = ctx_.stream;
  cublasHandle_t h = ctx_.cublas();
  const double one = 1.0;
  // level_m_[lv] rows [0, n): W = R2 R1^-1; rows [n, 2n): G = I + W^T W, then R_c.
  double* w = level_m_[lv];
  double* rc = level_m_[lv] + n;
  gpu::copy_matrix(w, 2 * n, stage_, n, n, n, main);
  SB_CUBLAS_CHECK(cublasDtrsm(h, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                              CUBLAS_DIAG_NON_UNIT, in, in, &one, own_r_, in, w, 2 * in));
  gpu::set_identity(rc, 2 * n, n, main);
  SB_CUBLAS_CHECK(cublasDsyrk(h, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T, in, in, &one, w, 2 * in, &one,
                              rc, 2 * in));
  SB_CUDA_CHECK(cudaMemsetAsync(infos_ + kInfoChol, 0, sizeof(int), main));
  SB_CUSOLVER_CHECK(cusolverDnDpotrf(main_solver_, CUBLAS_FILL_MODE_UPPER, in, rc, 2 * in,
                                     work_main_, lwork, infos_ + kInfoChol));
  if (!(cholesky_spread(rc, 2 * n, infos_ + kInfoChol, main) < cfg_.sketch_diag_ratio))
    return false;
  // R = R_c R1 (R1 = own_r_ is exactly upper triangular).
  SB_CUBLAS_CHECK(cublasDtrmm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                              CUBLAS_DIAG_NON_UNIT, in, in, &one, rc, 2 * in, own_r_, in, own_r_,
                              in));
  return true;
}

}  // namespace sb::svd
