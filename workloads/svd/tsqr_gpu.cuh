#pragma once
/// @file tsqr_gpu.cuh
/// The GPU TSQR of one svd worker (SPEC 4.2), the twin of tsqr_cpu.hpp.
///
/// One device allocation per worker (constructor) holds every buffer of every block it may
/// own, reused across tasks and repeats; cuSOLVER workspaces come in a second allocation.
/// Per block (a task): the generation kernel and cusolverDnDgeqrf run on one of several
/// streams (one cuSOLVER handle each), so block QRs overlap. finish(): the worker's R factors
/// are stacked ([R_1; ...; R_k], kn x n) and factored once (geqrf); then R factors travel up a
/// binary tree across the case's GPU workers over NCCL, each receiver factoring [R_own; R_peer];
/// case rank 0 takes the SVD of the final R (gesvdj, gesvd or gesvdp). U_R comes back down:
/// each merge applies its Q to [X; 0] (ormqr) and sends the lower half on, the stacked
/// reflectors give every block its X_i, and U_i = Q_i [X_i; 0] by ormqr with the block's own
/// reflectors, again overlapped over the streams. U stays on the device.
///
/// Stack mode (Config::gpu_stack(), short blocks): blocks are only generated per task, into
/// rows of one tall column-major matrix (leading dimension capacity * chunk); finish() factors
/// the worker's stacked rows with one geqrf (its R goes up the same tree) and forms the
/// worker's U with one ormqr. With square blocks this halves the QR work: factoring every
/// block and then the stack of their R factors, which is as large as the blocks, is gone.

#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "scalebench/gpu_context.cuh"
#include "scalebench/workload.hpp"
#include "svd/svd_config.hpp"

namespace sb::svd {

class GpuTsqr {
 public:
  /// comm: the case's workers (MPI, for validation); rank/size: this worker among them. With
  /// size > 1 the NCCL communicator ctx.nccl must span exactly those workers, in rank order.
  GpuTsqr(const Config& cfg, GpuContext& ctx, MPI_Comm comm, int rank, int size, int streams);
  ~GpuTsqr();
  GpuTsqr(const GpuTsqr&) = delete;
  GpuTsqr& operator=(const GpuTsqr&) = delete;

  void begin_repeat();
  /// Enqueues generation + QR of `block`; returns its slot (0, 1, ... in submission order).
  int submit(std::int64_t block);
  [[nodiscard]] bool ready(int slot) const;
  void wait(int slot) const;
  struct TaskTimes {
    double start = 0;  ///< seconds since begin_repeat
    double end = 0;
    double generate = 0;  ///< seconds spent in the generation kernel
  };
  [[nodiscard]] TaskTimes task_times(int slot) const;
  /// Reduction, SVD of R on rank 0, U of every owned block; synchronous. Adds phase times.
  void finish(PhaseTimes& times);

  [[nodiscard]] bool root() const { return rank_ == 0; }
  [[nodiscard]] const std::vector<double>& sigma() const { return sigma_; }
  [[nodiscard]] int streams() const { return static_cast<int>(streams_.size()); }
  [[nodiscard]] int blocks_owned() const { return used_; }
  [[nodiscard]] int capacity() const { return capacity_; }
  /// Whether the blocks are factored as one stacked matrix (see the file comment).
  [[nodiscard]] bool stacked() const { return stack_; }
  /// The routine that took the last SVD of R on rank 0 ("gram", "gesvdj", "gesvd", "gesvdp").
  [[nodiscard]] const char* svd_routine() const { return svd_routine_; }
  [[nodiscard]] std::int64_t block_of(int i) const {
    return blocks_.at(static_cast<std::size_t>(i));
  }
  /// U_i copied to the host (chunk x n, column-major); for tests.
  [[nodiscard]] std::vector<double> u_host(int i) const;
  /// Untimed validation, collective over comm (see CpuTsqr::validate).
  std::vector<double> validate();

 private:
  void svd_of_r();

  Config cfg_;
  GpuContext& ctx_;
  MPI_Comm comm_;
  int rank_;
  int size_;
  int capacity_ = 0;
  int used_ = 0;
  bool stack_ = false;
  std::int64_t lda_ = 0;  ///< leading dimension of a_[i] and u_[i]: chunk, or capacity * chunk
  std::vector<std::int64_t> blocks_;
  std::vector<cudaStream_t> streams_;
  std::vector<cusolverDnHandle_t> solvers_;   ///< one per stream
  cusolverDnHandle_t main_solver_ = nullptr;  ///< on ctx.stream
  gesvdjInfo_t gesvdj_ = nullptr;
  cusolverDnParams_t dn_params_ = nullptr;
  std::vector<cudaEvent_t> ev_start_, ev_gen_, ev_end_;  ///< per slot
  std::vector<cudaEvent_t> ev_stream_;                   ///< per stream
  cudaEvent_t ev_t0_ = nullptr, ev_x_ready_ = nullptr, ev_done_ = nullptr;
  std::vector<cudaEvent_t> ev_comm_;  ///< pairs around NCCL operations

  void* arena_ = nullptr;      ///< all data buffers
  void* workspace_ = nullptr;  ///< cuSOLVER workspaces
  double* scales_ = nullptr;
  std::vector<double*> a_, u_, tau_;  ///< per slot (stack mode: row offsets into one matrix)
  double* rstack_ = nullptr;          ///< capacity*n x n
  double* xstack_ = nullptr;
  double* tau_stack_ = nullptr;
  double* own_r_ = nullptr;                   ///< n x n
  double* x_ = nullptr;                       ///< n x n: this worker's piece of U_R
  double* stage_ = nullptr;                   ///< n x n contiguous NCCL buffer
  double* cbuf_ = nullptr;                    ///< 2n x n
  std::vector<double*> level_m_, level_tau_;  ///< 2n x n merges, per receive step
  double* svd_in_ = nullptr;
  double* sv_ = nullptr;    ///< n singular values
  double* vmat_ = nullptr;  ///< V (gesvdj, gesvdp) or V^T (gesvd)
  double* rwork_ = nullptr;
  int* infos_ = nullptr;       ///< streams + 1
  std::vector<double*> work_;  ///< per stream
  int lwork_stream_ = 0;
  double* work_main_ = nullptr;
  std::size_t work_main_bytes_ = 0;
  std::vector<char> host_work_;  ///< gesvdp
  std::vector<double> sigma_;
  const char* svd_routine_ = "";
  /// Ratio lambda_min / lambda_max of R^T R above which auto uses the Gram eigen-decomposition
  /// (cond(R) <= 100: U_R = R V S^-1 then loses at most ~1e4 eps of orthogonality).
  static constexpr double kGramRatio = 1e-4;
};

}  // namespace sb::svd
