// GpuTsqr, step 1 of finish() (tsqr_gpu.cuh): this worker's R from its blocks.
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

bool GpuTsqr::local_r(int k) {
  const std::int64_t n = cfg_.n, chunk = cfg_.chunk;
  const int in = as_int(n);
  const auto nn = static_cast<std::size_t>(n * n);
  cudaStream_t main = ctx_.stream;
  const std::int64_t ks = static_cast<std::int64_t>(k) * n;
  sketch_failed_ = false;
  // Sketch mode: every worker's U comes from one global sketch and one Gram matrix (no tree);
  // when the check fails, every worker takes Householder QR of its A_p and the tree below.
  const bool formed = sketched_ && sketch_solve(k);
  if (sketched_ && !formed) {
    sketch_fallback(k);
  } else if (formed) {
    // U is formed: nothing goes up or down a tree.
  } else if (k == 0) {
    SB_CUDA_CHECK(cudaMemsetAsync(own_r_, 0, nn * sizeof(double), main));
  } else if (stack_) {
    SB_CUSOLVER_CHECK(cusolverDnDgeqrf(
        main_solver_, as_int(k * chunk), in, a_[0], as_int(lda_), tau_stack_, work_main_,
        static_cast<int>(work_main_bytes_ / sizeof(double)), infos_ + kInfoStack));
    gpu::pad_copy(own_r_, n, n, n, a_[0], lda_, n, true, main);
  } else if (k == 1) {
    gpu::pad_copy(own_r_, n, n, n, a_[0], chunk, n, true, main);
  } else {
    for (int i = 0; i < k; ++i)
      gpu::pad_copy(rstack_ + static_cast<std::int64_t>(i) * n, ks, n, n,
                    a_[static_cast<std::size_t>(i)], chunk, n, true, main);
    SB_CUSOLVER_CHECK(
        cusolverDnDgeqrf(main_solver_, as_int(ks), in, rstack_, as_int(ks), tau_stack_, work_main_,
                         static_cast<int>(work_main_bytes_ / sizeof(double)), infos_ + kInfoStack));
    gpu::pad_copy(own_r_, n, n, n, rstack_, ks, n, true, main);
  }
  return formed;
}

}  // namespace sb::svd
