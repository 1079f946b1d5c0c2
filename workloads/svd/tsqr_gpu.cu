// GpuTsqr (tsqr_gpu.cuh): the tasks (generation and block QR over the streams) and the driver
// of finish(), whose steps live in tsqr_gpu_local.cu, tsqr_gpu_tree.cu, tsqr_gpu_svd_r.cu and
// tsqr_gpu_form_u.cu.
#include <cstdio>

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

void GpuTsqr::join_streams() {
  cudaStream_t main = ctx_.stream;
  const int S = static_cast<int>(streams_.size());
  for (int s = 0; s < S; ++s) {
    SB_CUDA_CHECK(cudaEventRecord(ev_stream_[static_cast<std::size_t>(s)],
                                  streams_[static_cast<std::size_t>(s)]));
    SB_CUDA_CHECK(cudaStreamWaitEvent(main, ev_stream_[static_cast<std::size_t>(s)], 0));
  }
}

void GpuTsqr::print_trace() {
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

void GpuTsqr::check_infos() {
  const int S = static_cast<int>(streams_.size());
  // cuSOLVER's info codes (outside the work, but inside the repeat: a few bytes).
  int infos[64] = {};
  SB_CUDA_CHECK(cudaMemcpy(infos, infos_, sizeof(infos), cudaMemcpyDeviceToHost));
  for (int i = 0; i < kMainInfos + S; ++i)
    if (infos[i] != 0 && i != kInfoChol)
      detail::throw_library_error(
          "cuSOLVER", i == kInfoSvd ? "SVD of R" : "geqrf/ormqr",
          "info = " + std::to_string(infos[i]) + " (gpu_svd=" + cfg_.gpu_svd + ")", __FILE__,
          __LINE__);
}

void GpuTsqr::finish(PhaseTimes& times) {
  cudaStream_t main = ctx_.stream;
  join_streams();
  ev_used_ = 0;
  const int k = used_;
  mark("tasks");
  // 1. This worker's R; sketch mode may form U at once (then no tree).
  const bool formed = local_r(k);
  // 2. Up the tree over NCCL.
  const auto steps = formed ? std::vector<TreeStep>{} : tree_steps(rank_, size_);
  std::size_t lv = 0;
  tree_up(steps, lv);
  mark("tree up");
  // 3. The root: R = U_R S V^T; U_R lands in x_.
  if (rank_ == 0 && !formed) svd_of_r(true);
  mark("svd of R");
  // 4. Down the tree: [X; X_peer] = Q_merge [X; 0].
  tree_down(steps, lv);
  mark("tree down");
  // 5. Every block's U_i (sketch_solve formed U already).
  if (!formed) form_u(k);
  join_streams();
  if (rank_ == 0)
    SB_CUDA_CHECK(cudaMemcpyAsync(sigma_.data(), sv_, sigma_.size() * sizeof(double),
                                  cudaMemcpyDeviceToHost, main));
  mark("U");
  SB_CUDA_CHECK(cudaEventRecord(ev_done_, main));
  SB_CUDA_CHECK(cudaStreamSynchronize(main));
  if (trace_ && marks_used_ > 0) print_trace();
  check_infos();
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

}  // namespace sb::svd
