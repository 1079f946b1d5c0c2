// GpuTsqr, step 3 of finish() (tsqr_gpu.cuh): the root's SVD of the final R.
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

void GpuTsqr::svd_of_r(bool gram_first) {
  const int n = as_int(cfg_.n);
  cudaStream_t main = ctx_.stream;
  const int lwork = static_cast<int>(work_main_bytes_ / sizeof(double));
  int* info = infos_ + kInfoSvd;
  std::string method = cfg_.gpu_svd;
  if (method == "auto" && !gram_first) method = "gesvdj";
  if (method == "auto") {
    // R^T R = V L V^T (divide and conquer); accepted when cond(R) <= 100: then S = sqrt(L),
    // U_R = R V S^-1 are accurate to ~cond(R)^2 eps. Otherwise Jacobi on R itself.
    cublasHandle_t h = ctx_.cublas();
    const double one = 1.0, zero = 0.0;
    SB_CUBLAS_CHECK(cublasDsyrk(h, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T, n, n, &one, own_r_, n,
                                &zero, svd_in_, n));
    SB_CUSOLVER_CHECK(cusolverDnDsyevd(main_solver_, CUSOLVER_EIG_MODE_VECTOR,
                                       CUBLAS_FILL_MODE_UPPER, n, svd_in_, n, rwork_, work_main_,
                                       lwork, info));
    if (gram_accepted()) {
      gpu::gram_to_svd(svd_in_, rwork_, vmat_, sv_, n, main);
      SB_CUBLAS_CHECK(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, own_r_, n, vmat_, n,
                                  &zero, x_, n));
      gpu::divide_columns(x_, sv_, n, main);
      svd_routine_ = "gram";
      return;
    }
    method = "gesvdj";
  }
  gpu::copy_matrix(svd_in_, n, own_r_, n, n, n, main);
  if (method == "gesvdj") {
    SB_CUSOLVER_CHECK(cusolverDnDgesvdj(main_solver_, CUSOLVER_EIG_MODE_VECTOR, 0, n, n, svd_in_, n,
                                        sv_, x_, n, vmat_, n, work_main_, lwork, info, gesvdj_));
    svd_routine_ = "gesvdj";
  } else if (method == "gesvd") {
    SB_CUSOLVER_CHECK(cusolverDnDgesvd(main_solver_, 'A', 'A', n, n, svd_in_, n, sv_, x_, n, vmat_,
                                       n, work_main_, lwork, rwork_, info));
    svd_routine_ = "gesvd";
  } else {
    double err_sigma = 0;
    SB_CUSOLVER_CHECK(cusolverDnXgesvdp(
        main_solver_, dn_params_, CUSOLVER_EIG_MODE_VECTOR, 0, n, n, CUDA_R_64F, svd_in_, n,
        CUDA_R_64F, sv_, CUDA_R_64F, x_, n, CUDA_R_64F, vmat_, n, CUDA_R_64F, work_main_,
        work_main_bytes_, host_work_.data(), host_work_.size(), info, &err_sigma));
    svd_routine_ = "gesvdp";
  }
}

bool GpuTsqr::gram_accepted() {
  const std::int64_t n = cfg_.n;
  cudaStream_t main = ctx_.stream;
  double ends[2] = {0, 0};  // the smallest and the largest eigenvalue (ascending order)
  SB_CUDA_CHECK(cudaMemcpyAsync(&ends[0], rwork_, sizeof(double), cudaMemcpyDeviceToHost, main));
  SB_CUDA_CHECK(
      cudaMemcpyAsync(&ends[1], rwork_ + (n - 1), sizeof(double), cudaMemcpyDeviceToHost, main));
  SB_CUDA_CHECK(cudaStreamSynchronize(main));
  return ends[1] > 0 && ends[0] >= kGramRatio * ends[1];
}

}  // namespace sb::svd
