// GpuTsqr, step 5 of finish() (tsqr_gpu.cuh): every block's X_i from U_R, then
// U_i = Q_i [X_i; 0] over the streams (stack mode: U = Q [X; 0] for the whole stack at once).
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

void GpuTsqr::form_u(int k) {
  const std::int64_t n = cfg_.n, chunk = cfg_.chunk;
  const int in = as_int(n);
  cudaStream_t main = ctx_.stream;
  const int S = static_cast<int>(streams_.size());
  const std::int64_t ks = static_cast<std::int64_t>(k) * n;
  const int lwork_main = static_cast<int>(work_main_bytes_ / sizeof(double));
  if (stack_ && !sketched_) {
    if (k > 0) {
      gpu::pad_copy(u_[0], lda_, k * chunk, n, x_, n, n, false, main);
      SB_CUSOLVER_CHECK(cusolverDnDormqr(main_solver_, CUBLAS_SIDE_LEFT, CUBLAS_OP_N,
                                         as_int(k * chunk), in, in, a_[0], as_int(lda_), tau_stack_,
                                         u_[0], as_int(lda_), work_main_, lwork_main,
                                         infos_ + kInfoLocal));
    }
    return;
  }
  const double* xs = x_;
  std::int64_t ldx = n;
  if (k >= 2) {
    gpu::pad_copy(xstack_, ks, ks, n, x_, n, n, false, main);
    SB_CUSOLVER_CHECK(cusolverDnDormqr(main_solver_, CUBLAS_SIDE_LEFT, CUBLAS_OP_N, as_int(ks), in,
                                       in, rstack_, as_int(ks), tau_stack_, xstack_, as_int(ks),
                                       work_main_, lwork_main, infos_ + kInfoLocal));
    xs = xstack_;
    ldx = ks;
  }
  SB_CUDA_CHECK(cudaEventRecord(ev_x_ready_, main));
  for (int s = 0; s < std::min(S, k); ++s)
    SB_CUDA_CHECK(cudaStreamWaitEvent(streams_[static_cast<std::size_t>(s)], ev_x_ready_, 0));
  for (int i = 0; i < k; ++i) {
    const auto s = static_cast<std::size_t>(i % S);
    const auto bi = static_cast<std::size_t>(i);
    gpu::pad_copy(u_[bi], lda_, chunk, n, xs + static_cast<std::int64_t>(i) * n, ldx, n, false,
                  streams_[s]);
    SB_CUSOLVER_CHECK(cusolverDnDormqr(solvers_[s], CUBLAS_SIDE_LEFT, CUBLAS_OP_N, as_int(chunk),
                                       in, in, a_[bi], as_int(lda_), tau_[bi], u_[bi], as_int(lda_),
                                       work_[s], lwork_stream_,
                                       infos_ + kMainInfos + static_cast<int>(s)));
  }
}

}  // namespace sb::svd
