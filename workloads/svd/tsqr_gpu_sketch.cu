// GpuTsqr in sketch mode (tsqr_gpu.cuh): the global sketch, R_s, the preconditioned rows and
// their Gram matrix, the root's SVD, U; the check and the Householder fallback.
#include <cmath>
#include <limits>
#include <utility>

#include <cublas_v2.h>

#include <algorithm>
#include <string>

#include "scalebench/error.hpp"
#include "scalebench/gpu_error.cuh"
#include "svd/sketch.hpp"
#include "svd/svd_gpu_kernels.cuh"
#include "svd/tsqr_gpu.cuh"
#include "svd/tsqr_gpu_detail.cuh"

namespace sb::svd {

using namespace tsqr_detail;

double GpuTsqr::cholesky_spread(const double* f, std::int64_t ldf, const int* dinfo,
                                cudaStream_t stream) {
  const std::int64_t n = cfg_.n;
  int info = 0;
  SB_CUDA_CHECK(cudaMemcpyAsync(&info, dinfo, sizeof(int), cudaMemcpyDeviceToHost, stream));
  SB_CUDA_CHECK(cudaMemcpy2DAsync(
      chol_diag_.data(), sizeof(double), f, static_cast<std::size_t>(ldf + 1) * sizeof(double),
      sizeof(double), static_cast<std::size_t>(n), cudaMemcpyDeviceToHost, stream));
  SB_CUDA_CHECK(cudaStreamSynchronize(stream));
  constexpr double kFail = std::numeric_limits<double>::infinity();
  if (info != 0) return kFail;
  double lo = kFail, hi = 0;
  for (const double d : chol_diag_) {
    if (!std::isfinite(d)) return kFail;  // a zero or NaN R1 in a merge, say
    lo = std::min(lo, std::fabs(d));
    hi = std::max(hi, std::fabs(d));
  }
  return lo > 0 ? hi / lo : kFail;
}

bool GpuTsqr::sketch_solve(int k) {
  const std::int64_t n = cfg_.n, rows = static_cast<std::int64_t>(k) * cfg_.chunk;
  const std::int64_t sk = sketch_height(n);
  const auto nn = static_cast<std::size_t>(n * n);
  const int in = as_int(n), lwork = static_cast<int>(work_main_bytes_ / sizeof(double));
  cudaStream_t main = ctx_.stream;
  cublasHandle_t h = ctx_.cublas();
  const double one = 1.0, zero = 0.0;
  // 1. Y = S A over every worker's rows: integer sums (wrapping), the same bits on every worker
  // whatever the order. Every stream's sketch is in (finish() made main wait).
  if (size_ > 1) {
    comm_begin();
    transport_->all_reduce(sketch_y_, sketch_y_, static_cast<std::size_t>(sk * n), ncclUint64,
                           ncclSum, main);
    comm_end();
  }
  mark("sketch Y");

  // 2. R_s on the root, to every worker: Cholesky of Y^T Y when Y is well conditioned (its
  // error, ~cond(Y)^2 eps, only makes the preconditioner a little less exact), else Householder
  // QR of Y (slower). rs_ holds triu(R_s).
  if (rank_ == 0) {
    gpu::sketch_to_double(sketch_y_, sketch_d_, n, scales_, main);
    SB_CUBLAS_CHECK(cublasDsyrk(h, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T, in, as_int(sk), &one,
                                sketch_d_, as_int(sk), &zero, sketch_r_, in));
    SB_CUDA_CHECK(cudaMemsetAsync(infos_ + kInfoChol, 0, sizeof(int), main));
    SB_CUSOLVER_CHECK(cusolverDnDpotrf(main_solver_, CUBLAS_FILL_MODE_UPPER, in, sketch_r_, in,
                                       work_main_, lwork, infos_ + kInfoChol));
    if (cholesky_spread(sketch_r_, n, infos_ + kInfoChol, main) < kSketchGramSpread) {
      gpu::pad_copy(rs_, n, n, n, sketch_r_, n, n, true, main);
    } else {
      SB_CUSOLVER_CHECK(cusolverDnDgeqrf(main_solver_, as_int(sk), in, sketch_d_, as_int(sk),
                                         tau_stack_, work_main_, lwork, infos_ + kInfoStack));
      gpu::pad_copy(rs_, n, n, n, sketch_d_, sk, n, true, main);
    }
  }
  if (size_ > 1) {
    comm_begin();
    transport_->broadcast(rs_, rs_, nn, ncclDouble, 0, main);
    comm_end();
  }
  mark("sketch R");

  // Row slices for the streams: one product over a few 10^5 rows leaves the GPU partly idle (a
  // Gram matrix has few output tiles). A slice has at least cfg_.slice_rows n rows (parameter
  // svd.slice_rows; bench_svd_gpu bm_case, the large preset on one and several GPUs). Each
  // stream solves its slice and forms the slice's Gram matrix at once: no stream waits for the
  // others in between.
  // 3. A_p = A R_s^-1 by recursive blocks (gemm does nearly all the flops), out of place into
  // U's rows, which are free until U is formed: the two swap roles from here on (a_ holds A_p,
  // u_ the rows where U will go). Scratch: zbuf_ for the first slice, the partial Gram buffer of
  // the slice for the others (the solve is done with it before its Gram is formed).
  // 4. G = A_p^T A_p: one recursive Gram per slice, summed in a fixed order; then over workers.
  if (k > 0) {
    const std::int64_t slices = static_cast<std::int64_t>(std::min<std::size_t>(
        blas_.size(),
        static_cast<std::size_t>(std::max<std::int64_t>(1, rows / (cfg_.slice_rows * n)))));
    SB_CUDA_CHECK(cudaEventRecord(ev_x_ready_, main));
    for (std::int64_t p = 0; p < slices; ++p) {
      const std::int64_t r0 = slice_start(rows, p, slices), r1 = slice_start(rows, p + 1, slices);
      const auto sp = static_cast<std::size_t>(p);
      double* gram = partial_grams_ + sp * nn;
      SB_CUDA_CHECK(cudaStreamWaitEvent(streams_[sp], ev_x_ready_, 0));
      gpu::trsm_right_upper(blas_[sp], r1 - r0, n, rs_, n, a_[0] + r0, lda_, u_[0] + r0, lda_,
                            p == 0 ? zbuf_ : gram);
      gpu::gram_upper(blas_[sp], r1 - r0, n, u_[0] + r0, lda_, gram, n);
      SB_CUDA_CHECK(cudaEventRecord(ev_stream_[sp], streams_[sp]));
      SB_CUDA_CHECK(cudaStreamWaitEvent(main, ev_stream_[sp], 0));
    }
    std::swap(a_, u_);
    mark("trsm+gram");
    gpu::sum_matrices(chol_, partial_grams_, static_cast<int>(slices), n, main);
  } else {
    SB_CUDA_CHECK(cudaMemsetAsync(chol_, 0, nn * sizeof(double), main));
  }
  mark("gram");
  if (size_ > 1) {
    comm_begin();
    transport_->all_reduce(chol_, chol_, nn, ncclDouble, ncclSum, main);
    comm_end();
  }
  mark("G");

  // 5. The root: the SVD, as Z with U = A_p Z, and the check's verdict; to every worker.
  if (rank_ == 0) sketch_root_svd();
  mark("svd of R");
  if (size_ > 1) {
    comm_begin();
    transport_->broadcast(cbuf_, cbuf_, nn + 1, ncclDouble, 0, main);
    comm_end();
  }
  double verdict = 0;
  SB_CUDA_CHECK(
      cudaMemcpyAsync(&verdict, cbuf_ + nn, sizeof(double), cudaMemcpyDeviceToHost, main));
  SB_CUDA_CHECK(cudaStreamSynchronize(main));
  if (verdict != 1.0) return false;

  // 6. U = A_p Z, one gemm.
  if (k > 0)
    SB_CUBLAS_CHECK(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, as_int(rows), in, in, &one, a_[0],
                                as_int(lda_), cbuf_, in, &zero, u_[0], as_int(lda_)));
  local_routine_ = "sketch";
  mark("U");
  return true;
}

void GpuTsqr::sketch_root_svd() {
  const std::int64_t n = cfg_.n;
  const auto nn = static_cast<std::size_t>(n * n);
  const int in = as_int(n), lwork = static_cast<int>(work_main_bytes_ / sizeof(double));
  cudaStream_t main = ctx_.stream, side = streams_[0];
  cublasHandle_t h = ctx_.cublas();
  const double one = 1.0, zero = 0.0;
  const bool gram = cfg_.gpu_svd == "auto";
  if (gram) {
    // R^T R = R_s^T G R_s (R = R_c R_s) needs no R_c: the main stream forms it and runs the
    // eigen-solver while stream 0 factors G = R_c^T R_c for the check; the short potrf hides
    // behind the eigen-decomposition. T = G R_s lands in x_, R^T R in svd_in_. potrf is
    // enqueued first: syevd's call returns only after its host-side steps, so with syevd first
    // potrf would start after it (run --trace of the seed preset, "svd of R").
    SB_CUBLAS_CHECK(cublasDsymm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, in, in, &one, chol_,
                                in, rs_, in, &zero, x_, in));
    SB_CUDA_CHECK(cudaEventRecord(ev_x_ready_, main));
    SB_CUDA_CHECK(cudaStreamWaitEvent(side, ev_x_ready_, 0));
    SB_CUDA_CHECK(cudaMemsetAsync(infos_ + kInfoChol, 0, sizeof(int), side));
    SB_CUSOLVER_CHECK(cusolverDnDpotrf(solvers_[0], CUBLAS_FILL_MODE_UPPER, in, chol_, in, work_[0],
                                       lwork_stream_, infos_ + kInfoChol));
    SB_CUBLAS_CHECK(cublasDtrmm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T,
                                CUBLAS_DIAG_NON_UNIT, in, in, &one, rs_, in, x_, in, svd_in_, in));
    SB_CUSOLVER_CHECK(cusolverDnDsyevd(main_solver_, CUSOLVER_EIG_MODE_VECTOR,
                                       CUBLAS_FILL_MODE_UPPER, in, svd_in_, in, rwork_, work_main_,
                                       lwork, infos_ + kInfoSvd));
  } else {
    SB_CUDA_CHECK(cudaMemsetAsync(infos_ + kInfoChol, 0, sizeof(int), main));
    SB_CUSOLVER_CHECK(cusolverDnDpotrf(main_solver_, CUBLAS_FILL_MODE_UPPER, in, chol_, in,
                                       work_main_, lwork, infos_ + kInfoChol));
  }
  cudaStream_t check = gram ? side : main;
  const bool ok = cholesky_spread(chol_, n, infos_ + kInfoChol, check) < cfg_.sketch_diag_ratio;
  bool done = !ok;
  if (ok && gram) {
    // Accepted when cond(R) <= 100 (as svd_of_r): S = sqrt(L), Z = R_s V S^-1.
    if (gram_accepted()) {
      gpu::gram_to_svd(svd_in_, rwork_, vmat_, sv_, n, main);
      SB_CUBLAS_CHECK(cublasDtrmm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                                  CUBLAS_DIAG_NON_UNIT, in, in, &one, rs_, in, vmat_, in, cbuf_,
                                  in));
      gpu::divide_columns(cbuf_, sv_, n, main);
      svd_routine_ = "gram";
      done = true;
    }
  }
  if (!done) {
    // R = R_c R_s, its SVD by the configured routine (gesvdj for auto), Z = R_c^-1 U_R.
    SB_CUBLAS_CHECK(cublasDtrmm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                                CUBLAS_DIAG_NON_UNIT, in, in, &one, chol_, in, rs_, in, own_r_,
                                in));
    svd_of_r(false);
    gpu::copy_matrix(cbuf_, n, x_, n, n, n, main);
    SB_CUBLAS_CHECK(cublasDtrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                                CUBLAS_DIAG_NON_UNIT, in, in, &one, chol_, in, cbuf_, in));
  }
  // The verdict travels with Z (a pageable copy: staged before this call returns).
  const double verdict = ok ? 1.0 : 0.0;
  SB_CUDA_CHECK(
      cudaMemcpyAsync(cbuf_ + nn, &verdict, sizeof(double), cudaMemcpyHostToDevice, main));
}

void GpuTsqr::sketch_fallback(int k) {
  const std::int64_t n = cfg_.n, chunk = cfg_.chunk;
  const auto nn = static_cast<std::size_t>(n * n);
  const int in = as_int(n), lwork = static_cast<int>(work_main_bytes_ / sizeof(double));
  cudaStream_t main = ctx_.stream;
  sketch_failed_ = true;
  local_routine_ = "sketch+geqrf";
  if (k == 0) {
    SB_CUDA_CHECK(cudaMemsetAsync(own_r_, 0, nn * sizeof(double), main));
    return;
  }
  // Householder QR of A_p block by block, as blocks mode: A_p = Q_p R_p, R = R_p R_s; U comes
  // from Q_p by ormqr (finish(), step 5).
  for (int i = 0; i < k; ++i)
    SB_CUSOLVER_CHECK(cusolverDnDgeqrf(
        main_solver_, as_int(chunk), in, a_[static_cast<std::size_t>(i)], as_int(lda_),
        tau_[static_cast<std::size_t>(i)], work_main_, lwork, infos_ + kInfoStack));
  if (k == 1) {
    gpu::pad_copy(own_r_, n, n, n, a_[0], lda_, n, true, main);
  } else {
    const std::int64_t ks = static_cast<std::int64_t>(k) * n;
    for (int i = 0; i < k; ++i)
      gpu::pad_copy(rstack_ + static_cast<std::int64_t>(i) * n, ks, n, n,
                    a_[static_cast<std::size_t>(i)], lda_, n, true, main);
    SB_CUSOLVER_CHECK(cusolverDnDgeqrf(main_solver_, as_int(ks), in, rstack_, as_int(ks),
                                       tau_stack_, work_main_, lwork, infos_ + kInfoStack));
    gpu::pad_copy(own_r_, n, n, n, rstack_, ks, n, true, main);
  }
  const double one = 1.0;
  SB_CUBLAS_CHECK(cublasDtrmm(ctx_.cublas(), CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                              CUBLAS_DIAG_NON_UNIT, in, in, &one, rs_, in, own_r_, in, own_r_, in));
  mark("R");
}

}  // namespace sb::svd
