// GpuTsqr's construction (tsqr_gpu.cuh): streams and library handles, one data arena sized to
// the free memory, the cuSOLVER workspaces, the timing events.
#include <cublas_v2.h>

#include <algorithm>
#include <limits>
#include <string>

#include "scalebench/error.hpp"
#include "scalebench/gpu_error.cuh"
#include "svd/sketch.hpp"
#include "svd/svd_gpu_kernels.cuh"
#include "svd/tsqr_gpu.cuh"
#include "svd/tsqr_gpu_detail.cuh"

namespace sb::svd {

using namespace tsqr_detail;

GpuTsqr::GpuTsqr(const Config& cfg, GpuContext& ctx, MPI_Comm comm, int rank, int size, int streams,
                 bool trace)
    : cfg_(cfg), ctx_(ctx), comm_(comm), rank_(rank), size_(size), trace_(trace) {
  if (ctx_.device >= 0) SB_CUDA_CHECK(cudaSetDevice(ctx_.device));
  if (size_ > 1 && (ctx_.nccl == nullptr || ctx_.nccl_size != size_ || ctx_.nccl_rank != rank_))
    throw EnvironmentError("svd: a multi-GPU case needs the NCCL communicator over exactly its " +
                           std::to_string(size_) + " workers in case-rank order (have " +
                           std::to_string(ctx_.nccl == nullptr ? 0 : ctx_.nccl_size) + " ranks)");
  if (size_ > 1) transport_ = std::make_unique<GpuTransport>(cfg_.comm, ctx_, comm_);
  const auto steps = tree_steps(rank_, size_);
  const auto receives = static_cast<std::size_t>(
      std::count_if(steps.begin(), steps.end(), [](const TreeStep& s) { return s.receive; }));
  streams = std::max(1, streams);
  create_handles(streams);
  const ArenaSizes sizes = arena_sizes(receives, streams);
  plan_capacity(sizes);
  carve_arena(sizes, receives, streams);
  allocate_workspaces();
  create_events(steps.size());
  sigma_.assign(rank_ == 0 ? static_cast<std::size_t>(cfg_.n) : 0, 0.0);
  SB_CUDA_CHECK(cudaDeviceSynchronize());
}

GpuTsqr::~GpuTsqr() {
  if (ctx_.device >= 0) (void)cudaSetDevice(ctx_.device);
  (void)cudaDeviceSynchronize();
  for (auto e : ev_start_) (void)cudaEventDestroy(e);
  for (auto e : ev_gen_) (void)cudaEventDestroy(e);
  for (auto e : ev_end_) (void)cudaEventDestroy(e);
  for (auto e : ev_stream_) (void)cudaEventDestroy(e);
  for (auto e : ev_comm_) (void)cudaEventDestroy(e);
  for (auto& m : marks_) (void)cudaEventDestroy(m.second);
  for (auto e : {ev_t0_, ev_done_, ev_x_ready_})
    if (e != nullptr) (void)cudaEventDestroy(e);
  for (auto h : solvers_) (void)cusolverDnDestroy(h);
  for (auto h : blas_) (void)cublasDestroy(h);
  for (auto s : streams_) (void)cudaStreamDestroy(s);
  if (gesvdj_ != nullptr) (void)cusolverDnDestroyGesvdjInfo(gesvdj_);
  if (dn_params_ != nullptr) (void)cusolverDnDestroyParams(dn_params_);
  if (arena_ != nullptr) (void)cudaFree(arena_);
  if (workspace_ != nullptr) (void)cudaFree(workspace_);
  (void)cudaGetLastError();
}

void GpuTsqr::create_handles(int streams) {
  for (int s = 0; s < streams; ++s) {
    cudaStream_t st = nullptr;
    SB_CUDA_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    streams_.push_back(st);
    cusolverDnHandle_t h = nullptr;
    SB_CUSOLVER_CHECK(cusolverDnCreate(&h));
    SB_CUSOLVER_CHECK(cusolverDnSetStream(h, st));
    solvers_.push_back(h);
  }
  main_solver_ = ctx_.cusolver();
  SB_CUSOLVER_CHECK(cusolverDnCreateGesvdjInfo(&gesvdj_));
  SB_CUSOLVER_CHECK(cusolverDnCreateParams(&dn_params_));
}

GpuTsqr::ArenaSizes GpuTsqr::arena_sizes(std::size_t receives, int streams) {
  const std::int64_t n = cfg_.n, chunk = cfg_.chunk;
  const auto nn = static_cast<std::size_t>(n * n);
  ArenaSizes a;
  // Data arena: fixed part plus as many block slots as fit (all blocks when they do).
  const std::size_t fixed = aligned(n * sizeof(double)) * 4 + aligned(nn * sizeof(double)) * 6 +
                            aligned(2 * nn * sizeof(double)) * (1 + receives) +
                            aligned(n * sizeof(double)) * receives + aligned(64 * sizeof(int));
  stack_ = cfg_.gpu_stack() && cfg_.m <= std::int64_t{std::numeric_limits<int>::max()};
  sketched_ = stack_ && cfg_.gpu_sketch() && n <= gpu::kSketchMaxColumns;
  local_routine_ = sketched_ ? "sketch" : stack_ ? "stack" : "blocks";
  const std::int64_t sk = sketch_height(n);
  const std::size_t sketch_bytes =
      sketched_ ? 2 * aligned(static_cast<std::size_t>(sk * n) * sizeof(double)) +
                      (3 + static_cast<std::size_t>(streams)) * aligned(nn * sizeof(double)) +
                      aligned(n * sizeof(double))
                : 0;
  const std::size_t per_block =
      stack_ ? 2 * static_cast<std::size_t>(chunk * n) * sizeof(double) +
                   (sketched_ ? aligned(n * sizeof(double)) + 2 * nn * sizeof(double) : 0)
             : 2 * aligned(static_cast<std::size_t>(chunk * n) * sizeof(double)) +
                   aligned(n * sizeof(double)) + 2 * nn * sizeof(double);
  a.fixed = fixed;
  a.sketch = sketch_bytes;
  a.per_block = per_block;
  return a;
}

void GpuTsqr::plan_capacity(const ArenaSizes& sizes) {
  const std::int64_t n = cfg_.n, chunk = cfg_.chunk, blocks = cfg_.blocks();
  std::size_t free_b = 0, total_b = 0;
  SB_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  const double budget = 0.85 * static_cast<double>(free_b) - static_cast<double>(sizes.fixed) -
                        static_cast<double>(sketched_ ? 2 * sketch_height(n) * n * 8 : 0) -
                        static_cast<double>(std::size_t{1} << 30);  // room for workspaces
  const std::int64_t fit =
      budget > 0 ? static_cast<std::int64_t>(budget / static_cast<double>(sizes.per_block)) : 0;
  const std::int64_t share = (blocks + size_ - 1) / size_;
  capacity_ = static_cast<int>(std::min(blocks, fit));
  if (capacity_ < share)
    throw EnvironmentError("svd: GPU memory holds " + std::to_string(capacity_) + " of the " +
                           std::to_string(share) + " row blocks (" + std::to_string(chunk) + " x " +
                           std::to_string(n) +
                           ") this worker needs; use more GPUs, a smaller m or a smaller chunk");
}

void GpuTsqr::carve_arena(const ArenaSizes& sizes, std::size_t receives, int streams) {
  const std::int64_t n = cfg_.n, chunk = cfg_.chunk;
  const auto nn = static_cast<std::size_t>(n * n);
  const std::int64_t sk = sketch_height(n);
  const auto cap = static_cast<std::size_t>(capacity_);
  SB_CUDA_CHECK(
      cudaMalloc(&arena_, sizes.fixed + sizes.sketch + sizes.per_block * cap + 16 * kAlign));
  Carver c(arena_);
  scales_ = c.take<double>(static_cast<std::size_t>(n));
  if (sketched_) {
    inv_scales_ = c.take<double>(static_cast<std::size_t>(n));
    sketch_y_ = c.take<unsigned long long>(static_cast<std::size_t>(sk * n));
    sketch_d_ = c.take<double>(static_cast<std::size_t>(sk * n));
    chol_ = c.take<double>(nn);
    zbuf_ = c.take<double>(nn);
    sketch_r_ = c.take<double>(nn);
    chol_diag_.assign(static_cast<std::size_t>(n), 0.0);
  }
  if (stack_) {
    // One tall matrix for the blocks and one for U; block i is rows [i chunk, (i+1) chunk).
    lda_ = static_cast<std::int64_t>(cap) * chunk;
    double* a = c.take<double>(cap * static_cast<std::size_t>(chunk * n));
    double* u = c.take<double>(cap * static_cast<std::size_t>(chunk * n));
    for (std::size_t i = 0; i < cap; ++i) {
      a_.push_back(a + i * static_cast<std::size_t>(chunk));
      u_.push_back(u + i * static_cast<std::size_t>(chunk));
      // The sketch's fallback factors the rows block by block, as blocks mode does.
      tau_.push_back(sketched_ ? c.take<double>(static_cast<std::size_t>(n)) : nullptr);
    }
    if (sketched_) {
      rstack_ = c.take<double>(cap * nn);
      xstack_ = c.take<double>(cap * nn);
      partial_grams_ = c.take<double>(static_cast<std::size_t>(streams) * nn);
    }
  } else {
    lda_ = chunk;
    for (std::size_t i = 0; i < cap; ++i) {
      a_.push_back(c.take<double>(static_cast<std::size_t>(chunk * n)));
      u_.push_back(c.take<double>(static_cast<std::size_t>(chunk * n)));
      tau_.push_back(c.take<double>(static_cast<std::size_t>(n)));
    }
    rstack_ = c.take<double>(cap * nn);
    xstack_ = c.take<double>(cap * nn);
  }
  tau_stack_ = c.take<double>(static_cast<std::size_t>(n));
  own_r_ = c.take<double>(nn);
  x_ = c.take<double>(nn);
  stage_ = c.take<double>(nn);
  svd_in_ = c.take<double>(nn);
  vmat_ = c.take<double>(nn);
  rs_ = c.take<double>(nn);
  cbuf_ = c.take<double>(2 * nn);
  merge_cholesky_.assign(receives, false);
  for (std::size_t l = 0; l < receives; ++l) {
    level_m_.push_back(c.take<double>(2 * nn));
    level_tau_.push_back(c.take<double>(static_cast<std::size_t>(n)));
  }
  sv_ = c.take<double>(static_cast<std::size_t>(n));
  rwork_ = c.take<double>(static_cast<std::size_t>(n));
  infos_ = c.take<int>(64);
  const auto scales = column_scales(cfg_);
  SB_CUDA_CHECK(
      cudaMemcpy(scales_, scales.data(), scales.size() * sizeof(double), cudaMemcpyHostToDevice));
  if (sketched_) {
    std::vector<double> inv(scales.size());
    for (std::size_t j = 0; j < inv.size(); ++j) inv[j] = 1.0 / scales[j];
    SB_CUDA_CHECK(
        cudaMemcpy(inv_scales_, inv.data(), inv.size() * sizeof(double), cudaMemcpyHostToDevice));
  }
  SB_CUDA_CHECK(cudaMemset(infos_, 0, 64 * sizeof(int)));
}

void GpuTsqr::allocate_workspaces() {
  const std::int64_t n = cfg_.n, chunk = cfg_.chunk;
  int lw = 0;
  SB_CUSOLVER_CHECK(
      cusolverDnDgeqrf_bufferSize(solvers_[0], as_int(chunk), as_int(n), a_[0], as_int(lda_), &lw));
  lwork_stream_ = lw;
  SB_CUSOLVER_CHECK(cusolverDnDormqr_bufferSize(solvers_[0], CUBLAS_SIDE_LEFT, CUBLAS_OP_N,
                                                as_int(chunk), as_int(n), as_int(n), a_[0],
                                                as_int(lda_), tau_[0], u_[0], as_int(lda_), &lw));
  lwork_stream_ = std::max(lwork_stream_, lw);
  if (sketched_) {  // the root's check of G factors it on stream 0 beside the eigen-solver
    SB_CUSOLVER_CHECK(cusolverDnDpotrf_bufferSize(solvers_[0], CUBLAS_FILL_MODE_UPPER, as_int(n),
                                                  chol_, as_int(n), &lw));
    lwork_stream_ = std::max(lwork_stream_, lw);
  }
  std::size_t main_bytes = 0;
  const std::size_t main_doubles = main_workspace_doubles(&main_bytes);
  work_main_bytes_ = std::max(main_doubles * sizeof(double), main_bytes);
  const std::size_t stream_bytes =
      aligned(static_cast<std::size_t>(lwork_stream_) * sizeof(double));
  SB_CUDA_CHECK(
      cudaMalloc(&workspace_, stream_bytes * streams_.size() + aligned(work_main_bytes_)));
  Carver w(workspace_);
  for (std::size_t s = 0; s < streams_.size(); ++s)
    work_.push_back(w.take<double>(static_cast<std::size_t>(lwork_stream_)));
  work_main_ = w.take<double>(work_main_bytes_ / sizeof(double) + 1);
}

std::size_t GpuTsqr::main_workspace_doubles(std::size_t* bytes) {
  const std::int64_t n = cfg_.n, chunk = cfg_.chunk;
  const std::int64_t sk = sketch_height(n);
  const auto cap = static_cast<std::size_t>(capacity_);
  int lw = 0;
  std::size_t main_doubles = 1;
  struct Shape {
    std::int64_t rows, ld;
    double *m, *x;
  };
  // Stack mode factors the whole stack; blocks mode (and the sketch's fallback) the stacked R
  // factors of the blocks, and the fallback each block on the main stream too.
  const bool whole = stack_ && !sketched_;
  const std::int64_t stack_rows = whole ? lda_ : static_cast<std::int64_t>(cap) * n;
  for (const Shape& sh : {Shape{2 * n, 2 * n, cbuf_, cbuf_},
                          whole ? Shape{stack_rows, lda_, a_[0], u_[0]}
                                : Shape{stack_rows, stack_rows, rstack_, xstack_},
                          Shape{sketched_ ? chunk : 2 * n, sketched_ ? lda_ : 2 * n,
                                sketched_ ? a_[0] : cbuf_, sketched_ ? u_[0] : cbuf_}}) {
    SB_CUSOLVER_CHECK(cusolverDnDgeqrf_bufferSize(main_solver_, as_int(sh.rows), as_int(n), sh.m,
                                                  as_int(sh.ld), &lw));
    main_doubles = std::max(main_doubles, static_cast<std::size_t>(lw));
    SB_CUSOLVER_CHECK(cusolverDnDormqr_bufferSize(
        main_solver_, CUBLAS_SIDE_LEFT, CUBLAS_OP_N, as_int(sh.rows), as_int(n), as_int(n), sh.m,
        as_int(sh.ld), tau_stack_, sh.x, as_int(sh.ld), &lw));
    main_doubles = std::max(main_doubles, static_cast<std::size_t>(lw));
  }
  if (sketched_) {
    SB_CUSOLVER_CHECK(cusolverDnDgeqrf_bufferSize(main_solver_, as_int(sk), as_int(n), sketch_d_,
                                                  as_int(sk), &lw));
    main_doubles = std::max(main_doubles, static_cast<std::size_t>(lw));
    SB_CUSOLVER_CHECK(cusolverDnDpotrf_bufferSize(main_solver_, CUBLAS_FILL_MODE_UPPER, as_int(n),
                                                  chol_, as_int(n), &lw));
    main_doubles = std::max(main_doubles, static_cast<std::size_t>(lw));
    SB_CUSOLVER_CHECK(cusolverDnDpotrf_bufferSize(main_solver_, CUBLAS_FILL_MODE_UPPER, as_int(n),
                                                  cbuf_, as_int(2 * n), &lw));
    main_doubles = std::max(main_doubles, static_cast<std::size_t>(lw));
    (void)ctx_.cublas();  // created here, outside the timed region
    for (cudaStream_t st : streams_) {
      cublasHandle_t hb = nullptr;
      SB_CUBLAS_CHECK(cublasCreate(&hb));
      SB_CUBLAS_CHECK(cublasSetStream(hb, st));
      blas_.push_back(hb);
    }
  }
  std::size_t& main_bytes = *bytes;
  if (rank_ == 0) {
    const std::string& method = cfg_.gpu_svd;
    if (method == "gesvdj" || method == "auto") {
      SB_CUSOLVER_CHECK(cusolverDnDgesvdj_bufferSize(
          main_solver_, CUSOLVER_EIG_MODE_VECTOR, 0, as_int(n), as_int(n), svd_in_, as_int(n), sv_,
          x_, as_int(n), vmat_, as_int(n), &lw, gesvdj_));
      main_doubles = std::max(main_doubles, static_cast<std::size_t>(lw));
    }
    if (method == "auto") {
      SB_CUSOLVER_CHECK(cusolverDnDsyevd_bufferSize(main_solver_, CUSOLVER_EIG_MODE_VECTOR,
                                                    CUBLAS_FILL_MODE_UPPER, as_int(n), svd_in_,
                                                    as_int(n), rwork_, &lw));
      main_doubles = std::max(main_doubles, static_cast<std::size_t>(lw));
      (void)ctx_.cublas();  // created here, outside the timed region
    }
    if (method == "gesvd") {
      SB_CUSOLVER_CHECK(cusolverDnDgesvd_bufferSize(main_solver_, as_int(n), as_int(n), &lw));
      main_doubles = std::max(main_doubles, static_cast<std::size_t>(lw));
    }
    if (method == "gesvdp") {
      std::size_t host_bytes = 0;
      SB_CUSOLVER_CHECK(
          cusolverDnXgesvdp_bufferSize(main_solver_, dn_params_, CUSOLVER_EIG_MODE_VECTOR, 0, n, n,
                                       CUDA_R_64F, svd_in_, n, CUDA_R_64F, sv_, CUDA_R_64F, x_, n,
                                       CUDA_R_64F, vmat_, n, CUDA_R_64F, &main_bytes, &host_bytes));
      host_work_.resize(std::max<std::size_t>(host_bytes, 1));
    }
  }
  return main_doubles;
}

void GpuTsqr::create_events(std::size_t tree_steps) {
  const auto cap = static_cast<std::size_t>(capacity_);
  auto make = [](unsigned flags) {
    cudaEvent_t e = nullptr;
    SB_CUDA_CHECK(cudaEventCreateWithFlags(&e, flags));
    return e;
  };
  for (std::size_t i = 0; i < cap; ++i) {
    ev_start_.push_back(make(cudaEventDefault));
    ev_gen_.push_back(make(cudaEventDefault));
    ev_end_.push_back(make(cudaEventDefault));
  }
  for (std::size_t s = 0; s < streams_.size(); ++s)
    ev_stream_.push_back(make(cudaEventDisableTiming));
  ev_t0_ = make(cudaEventDefault);
  ev_done_ = make(cudaEventDefault);
  ev_x_ready_ = make(cudaEventDisableTiming);
  for (std::size_t i = 0; i < 4 * (tree_steps + 1) + 8; ++i)
    ev_comm_.push_back(make(cudaEventDefault));
  if (trace_)
    for (int i = 0; i < 16; ++i) marks_.emplace_back("", make(cudaEventDefault));
}

}  // namespace sb::svd
