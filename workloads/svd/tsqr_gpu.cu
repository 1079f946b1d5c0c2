#include "svd/tsqr_gpu.cuh"

#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "scalebench/error.hpp"
#include "scalebench/gpu_error.cuh"
#include "svd/sketch.hpp"
#include "svd/svd_gpu_kernels.cuh"
#include "svd/tree.hpp"

namespace sb::svd {

namespace {

constexpr std::size_t kAlign = 256;
std::size_t aligned(std::size_t bytes) {
  return (bytes + kAlign - 1) / kAlign * kAlign;
}

/// Hands out aligned pieces of one allocation.
class Carver {
 public:
  explicit Carver(void* base) : base_(static_cast<char*>(base)) {}
  template <typename T>
  T* take(std::size_t count) {
    T* p = reinterpret_cast<T*>(base_ + offset_);
    offset_ += aligned(count * sizeof(T));
    return p;
  }

 private:
  char* base_;
  std::size_t offset_ = 0;
};

constexpr int kInfoStack = 0, kInfoLevel = 1, kInfoSvd = 2, kInfoDown = 3, kInfoLocal = 4;
constexpr int kInfoChol = 5;  // read by the sketch's checks themselves: not a failure
constexpr int kMainInfos = 6;

float elapsed_ms(cudaEvent_t a, cudaEvent_t b) {
  float ms = 0;
  SB_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
  return ms;
}

int as_int(std::int64_t v) {
  return static_cast<int>(v);
}

}  // namespace

GpuTsqr::GpuTsqr(const Config& cfg, GpuContext& ctx, MPI_Comm comm, int rank, int size, int streams)
    : cfg_(cfg), ctx_(ctx), comm_(comm), rank_(rank), size_(size) {
  if (ctx_.device >= 0) SB_CUDA_CHECK(cudaSetDevice(ctx_.device));
  if (size_ > 1 && (ctx_.nccl == nullptr || ctx_.nccl_size != size_ || ctx_.nccl_rank != rank_))
    throw EnvironmentError("svd: a multi-GPU case needs the NCCL communicator over exactly its " +
                           std::to_string(size_) + " workers in case-rank order (have " +
                           std::to_string(ctx_.nccl == nullptr ? 0 : ctx_.nccl_size) + " ranks)");
  const std::int64_t n = cfg_.n, chunk = cfg_.chunk, blocks = cfg_.blocks();
  const auto nn = static_cast<std::size_t>(n * n);
  const auto steps = tree_steps(rank_, size_);
  const auto receives = static_cast<std::size_t>(
      std::count_if(steps.begin(), steps.end(), [](const TreeStep& s) { return s.receive; }));

  streams = std::max(1, streams);
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
  std::size_t free_b = 0, total_b = 0;
  SB_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  const double budget = 0.85 * static_cast<double>(free_b) - static_cast<double>(fixed) -
                        static_cast<double>(sketched_ ? 2 * sketch_height(n) * n * 8 : 0) -
                        static_cast<double>(std::size_t{1} << 30);  // room for workspaces
  const std::int64_t fit =
      budget > 0 ? static_cast<std::int64_t>(budget / static_cast<double>(per_block)) : 0;
  const std::int64_t share = (blocks + size_ - 1) / size_;
  capacity_ = static_cast<int>(std::min(blocks, fit));
  if (capacity_ < share)
    throw EnvironmentError("svd: GPU memory holds " + std::to_string(capacity_) + " of the " +
                           std::to_string(share) + " row blocks (" + std::to_string(chunk) + " x " +
                           std::to_string(n) +
                           ") this worker needs; use more GPUs, a smaller m or a smaller chunk");
  const auto cap = static_cast<std::size_t>(capacity_);
  SB_CUDA_CHECK(cudaMalloc(&arena_, fixed + sketch_bytes + per_block * cap + 16 * kAlign));
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

  // cuSOLVER workspaces, queried on the real buffers: one per stream, one for the main stream.
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
  std::size_t main_bytes = 0;
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
  work_main_bytes_ = std::max(main_doubles * sizeof(double), main_bytes);
  const std::size_t stream_bytes =
      aligned(static_cast<std::size_t>(lwork_stream_) * sizeof(double));
  SB_CUDA_CHECK(
      cudaMalloc(&workspace_, stream_bytes * streams_.size() + aligned(work_main_bytes_)));
  Carver w(workspace_);
  for (std::size_t s = 0; s < streams_.size(); ++s)
    work_.push_back(w.take<double>(static_cast<std::size_t>(lwork_stream_)));
  work_main_ = w.take<double>(work_main_bytes_ / sizeof(double) + 1);

  // Events.
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
  for (std::size_t i = 0; i < 4 * (steps.size() + 1) + 8; ++i)
    ev_comm_.push_back(make(cudaEventDefault));
  if (const char* rows = std::getenv("SCALEBENCH_SVD_SLICE_ROWS")) {
    char* end = nullptr;
    const long v = std::strtol(rows, &end, 10);
    SB_EXPECTS(end != rows && *end == '\0' && v >= 1 && v <= 1000000,
               "SCALEBENCH_SVD_SLICE_ROWS must be an integer in [1, 10^6]");
    slice_rows_ = v;
  }
  const char* trace = std::getenv("SCALEBENCH_SVD_TRACE");
  trace_ = trace != nullptr && std::strcmp(trace, "1") == 0;
  if (trace_)
    for (int i = 0; i < 16; ++i) marks_.emplace_back("", make(cudaEventDefault));
  sigma_.assign(rank_ == 0 ? static_cast<std::size_t>(n) : 0, 0.0);
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

void GpuTsqr::begin_repeat() {
  used_ = 0;
  blocks_.clear();
  marks_used_ = 0;
  if (sketched_)
    SB_CUDA_CHECK(cudaMemsetAsync(
        sketch_y_, 0,
        static_cast<std::size_t>(sketch_height(cfg_.n) * cfg_.n) * sizeof(unsigned long long),
        ctx_.stream));
  SB_CUDA_CHECK(cudaEventRecord(ev_t0_, ctx_.stream));
}

void GpuTsqr::mark(const char* label) {
  if (!trace_ || marks_used_ >= marks_.size()) return;
  marks_[marks_used_].first = label;
  SB_CUDA_CHECK(cudaEventRecord(marks_[marks_used_].second, ctx_.stream));
  ++marks_used_;
}

int GpuTsqr::submit(std::int64_t block) {
  if (used_ >= capacity_)
    throw Error("svd: this GPU worker was handed more row blocks than its memory holds (" +
                std::to_string(capacity_) + ")");
  const int slot = used_++;
  blocks_.push_back(block);
  const auto s = static_cast<std::size_t>(slot) % streams_.size();
  cudaStream_t st = streams_[s];
  const auto i = static_cast<std::size_t>(slot);
  const auto n = cfg_.n, chunk = cfg_.chunk;
  SB_CUDA_CHECK(cudaEventRecord(ev_start_[i], st));
  gpu::generate_rows(a_[i], lda_, block * chunk, chunk, n, cfg_.seed, scales_, st);
  SB_CUDA_CHECK(cudaEventRecord(ev_gen_[i], st));
  if (sketched_) {
    SB_CUDA_CHECK(cudaStreamWaitEvent(st, ev_t0_, 0));  // the sketch was zeroed before ev_t0_
    gpu::sketch_rows(a_[i], lda_, block * chunk, chunk, n, sketch_key(cfg_.seed), inv_scales_,
                     sketch_y_, st);
  }
  if (!stack_)
    SB_CUSOLVER_CHECK(cusolverDnDgeqrf(solvers_[s], as_int(chunk), as_int(n), a_[i], as_int(chunk),
                                       tau_[i], work_[s], lwork_stream_,
                                       infos_ + kMainInfos + static_cast<int>(s)));
  SB_CUDA_CHECK(cudaEventRecord(ev_end_[i], st));
  return slot;
}

bool GpuTsqr::ready(int slot) const {
  const cudaError_t rc = cudaEventQuery(ev_end_[static_cast<std::size_t>(slot)]);
  if (rc == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  SB_CUDA_CHECK(rc);
  return true;
}

void GpuTsqr::wait(int slot) const {
  SB_CUDA_CHECK(cudaEventSynchronize(ev_end_[static_cast<std::size_t>(slot)]));
}

GpuTsqr::TaskTimes GpuTsqr::task_times(int slot) const {
  const auto i = static_cast<std::size_t>(slot);
  TaskTimes t;
  t.start = 1e-3 * elapsed_ms(ev_t0_, ev_start_[i]);
  t.end = 1e-3 * elapsed_ms(ev_t0_, ev_end_[i]);
  t.generate = 1e-3 * elapsed_ms(ev_start_[i], ev_gen_[i]);
  return t;
}

void GpuTsqr::comm_begin() {
  SB_CUDA_CHECK(cudaEventRecord(ev_comm_.at(ev_used_), ctx_.stream));
}

void GpuTsqr::comm_end() {
  SB_CUDA_CHECK(cudaEventRecord(ev_comm_.at(ev_used_ + 1), ctx_.stream));
  ev_used_ += 2;
}

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

void GpuTsqr::finish(PhaseTimes& times) {
  const std::int64_t n = cfg_.n, chunk = cfg_.chunk;
  const int in = as_int(n);
  const auto nn = static_cast<std::size_t>(n * n);
  cudaStream_t main = ctx_.stream;
  const int S = static_cast<int>(streams_.size());
  for (int s = 0; s < S; ++s) {
    SB_CUDA_CHECK(cudaEventRecord(ev_stream_[static_cast<std::size_t>(s)],
                                  streams_[static_cast<std::size_t>(s)]));
    SB_CUDA_CHECK(cudaStreamWaitEvent(main, ev_stream_[static_cast<std::size_t>(s)], 0));
  }
  ev_used_ = 0;

  // 1. This worker's R: [R_1; ...; R_k] factored once.
  const int k = used_;
  const std::int64_t ks = static_cast<std::int64_t>(k) * n;
  mark("tasks");
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
  const int lwork_main = static_cast<int>(work_main_bytes_ / sizeof(double));

  // 2. Up the tree over NCCL.
  const auto steps = formed ? std::vector<TreeStep>{} : tree_steps(rank_, size_);
  std::size_t lv = 0;
  for (const auto& step : steps) {
    if (step.receive) {
      comm_begin();
      SB_NCCL_CHECK(ncclRecv(stage_, nn, ncclDouble, step.partner, ctx_.nccl, main));
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
      SB_NCCL_CHECK(ncclSend(own_r_, nn, ncclDouble, step.partner, ctx_.nccl, main));
      SB_NCCL_CHECK(ncclRecv(x_, nn, ncclDouble, step.partner, ctx_.nccl, main));
      comm_end();
    }
  }

  mark("tree up");
  // 3. The root: R = U_R S V^T; U_R lands in x_.
  if (rank_ == 0 && !formed) svd_of_r(true);
  mark("svd of R");

  // 4. Down the tree: [X; X_peer] = Q_merge [X; 0].
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
    SB_NCCL_CHECK(ncclSend(stage_, nn, ncclDouble, steps[s].partner, ctx_.nccl, main));
    comm_end();
  }

  mark("tree down");
  // 5. Every block's X_i, then U_i = Q_i [X_i; 0] over the streams (stack mode: U = Q [X; 0]
  // for the whole stack at once).
  if (formed) {
    // sketch_solve formed U.
  } else if (stack_ && !sketched_) {
    if (k > 0) {
      gpu::pad_copy(u_[0], lda_, k * chunk, n, x_, n, n, false, main);
      SB_CUSOLVER_CHECK(cusolverDnDormqr(main_solver_, CUBLAS_SIDE_LEFT, CUBLAS_OP_N,
                                         as_int(k * chunk), in, in, a_[0], as_int(lda_), tau_stack_,
                                         u_[0], as_int(lda_), work_main_, lwork_main,
                                         infos_ + kInfoLocal));
    }
  } else {
    const double* xs = x_;
    std::int64_t ldx = n;
    if (k >= 2) {
      gpu::pad_copy(xstack_, ks, ks, n, x_, n, n, false, main);
      SB_CUSOLVER_CHECK(cusolverDnDormqr(main_solver_, CUBLAS_SIDE_LEFT, CUBLAS_OP_N, as_int(ks),
                                         in, in, rstack_, as_int(ks), tau_stack_, xstack_,
                                         as_int(ks), work_main_, lwork_main, infos_ + kInfoLocal));
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
                                         in, in, a_[bi], as_int(lda_), tau_[bi], u_[bi],
                                         as_int(lda_), work_[s], lwork_stream_,
                                         infos_ + kMainInfos + static_cast<int>(s)));
    }
  }
  for (int s = 0; s < S; ++s) {
    SB_CUDA_CHECK(cudaEventRecord(ev_stream_[static_cast<std::size_t>(s)],
                                  streams_[static_cast<std::size_t>(s)]));
    SB_CUDA_CHECK(cudaStreamWaitEvent(main, ev_stream_[static_cast<std::size_t>(s)], 0));
  }
  if (rank_ == 0)
    SB_CUDA_CHECK(cudaMemcpyAsync(sigma_.data(), sv_, sigma_.size() * sizeof(double),
                                  cudaMemcpyDeviceToHost, main));
  mark("U");
  SB_CUDA_CHECK(cudaEventRecord(ev_done_, main));
  SB_CUDA_CHECK(cudaStreamSynchronize(main));
  if (trace_ && marks_used_ > 0) {
    std::string line = "svd trace rank " + std::to_string(rank_) + " (" + local_routine_ + "):";
    cudaEvent_t prev = ev_t0_;
    for (std::size_t i = 0; i < marks_used_; ++i) {
      char buf[64];
      std::snprintf(buf, sizeof(buf), " %s %.2f ms", marks_[i].first,
                    static_cast<double>(elapsed_ms(prev, marks_[i].second)));
      line += buf;
      prev = marks_[i].second;
    }
    std::fprintf(stderr, "%s\n", line.c_str());
  }

  // cuSOLVER's info codes (outside the work, but inside the repeat: a few bytes).
  int infos[64] = {};
  SB_CUDA_CHECK(cudaMemcpy(infos, infos_, sizeof(infos), cudaMemcpyDeviceToHost));
  for (int i = 0; i < kMainInfos + S; ++i)
    if (infos[i] != 0 && i != kInfoChol)
      detail::throw_library_error(
          "cuSOLVER", i == kInfoSvd ? "SVD of R" : "geqrf/ormqr",
          "info = " + std::to_string(infos[i]) + " (gpu_svd=" + cfg_.gpu_svd + ")", __FILE__,
          __LINE__);

  double gen = 0;
  for (int i = 0; i < k; ++i) gen += task_times(i).generate;
  double comm = 0;
  for (std::size_t e = 0; e < ev_used_; e += 2)
    comm += 1e-3 * elapsed_ms(ev_comm_[e], ev_comm_[e + 1]);
  const double wall = 1e-3 * elapsed_ms(ev_t0_, ev_done_);
  times.generate += gen;
  times.communicate += comm;
  times.compute += std::max(0.0, wall - gen - comm);
}

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
    SB_NCCL_CHECK(ncclAllReduce(sketch_y_, sketch_y_, static_cast<std::size_t>(sk * n), ncclUint64,
                                ncclSum, ctx_.nccl, main));
    comm_end();
  }
  mark("sketch Y");

  // 2. R_s on the root, to every worker: Cholesky of Y^T Y when Y is well conditioned (its
  // error, ~cond(Y)^2 eps, only makes the preconditioner a little less exact), else Householder
  // QR of Y (~5 ms). rs_ holds triu(R_s).
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
    SB_NCCL_CHECK(ncclBroadcast(rs_, rs_, nn, ncclDouble, 0, ctx_.nccl, main));
    comm_end();
  }
  mark("sketch R");

  // Row slices for the streams: one product over a few 10^5 rows leaves the GPU partly idle
  // (a Gram matrix has few output tiles; a worker of eight held 3 slices of 83 000 rows and ran
  // its Gram at 14 TFLOP/s against 37 on one GPU with 2 10^6 rows in 8 slices). A slice has at
  // least slice_rows_ n rows (32 by default; a worker of four: 8 slices of 62 500 rows solved in
  // 13.8-14.7 ms, 7 slices of 71 400 rows in 17.9-18.5 ms). Each stream solves its slice and
  // forms the slice's Gram matrix at once: no stream waits for the others in between.
  // 3. A_p = A R_s^-1 by recursive blocks (gemm does nearly all the flops), out of place into
  // U's rows, which are free until U is formed: the two swap roles from here on (a_ holds A_p,
  // u_ the rows where U will go). Scratch: zbuf_ for the first slice, the partial Gram buffer of
  // the slice for the others (the solve is done with it before its Gram is formed).
  // 4. G = A_p^T A_p: one recursive Gram per slice, summed in a fixed order; then over workers.
  if (k > 0) {
    const std::int64_t slices = static_cast<std::int64_t>(std::min<std::size_t>(
        blas_.size(),
        static_cast<std::size_t>(std::max<std::int64_t>(1, rows / (slice_rows_ * n)))));
    SB_CUDA_CHECK(cudaEventRecord(ev_x_ready_, main));
    for (std::int64_t p = 0; p < slices; ++p) {
      const std::int64_t r0 = rows * p / slices, r1 = rows * (p + 1) / slices;
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
    SB_NCCL_CHECK(ncclAllReduce(chol_, chol_, nn, ncclDouble, ncclSum, ctx_.nccl, main));
    comm_end();
  }
  mark("G");

  // 5. The root: the SVD, as Z with U = A_p Z, and the check's verdict; to every worker.
  if (rank_ == 0) sketch_root_svd();
  mark("svd of R");
  if (size_ > 1) {
    comm_begin();
    SB_NCCL_CHECK(ncclBroadcast(cbuf_, cbuf_, nn + 1, ncclDouble, 0, ctx_.nccl, main));
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
    // eigen-solver while stream 0 factors G = R_c^T R_c for the check; that 1 ms of potrf
    // hides behind the ~10 ms eigen-decomposition. T = G R_s lands in x_, R^T R in svd_in_.
    // potrf is enqueued first: syevd's call returns only after its host-side steps (with it
    // first, potrf started after it and the pair took 12.1 ms on one H200).
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
  SB_CUDA_CHECK(cudaMemcpy(svd_in_, vt.data(), nn * sizeof(double), cudaMemcpyHostToDevice));
  SB_CUDA_CHECK(cudaMemset(stage_, 0, nn * sizeof(double)));
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
