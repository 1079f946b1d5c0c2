#pragma once
/// @file tsqr_gpu.cuh
/// The GPU TSQR of one svd worker (docs/specification.md §4.2), the twin of tsqr_cpu.hpp. One step
/// per file: tsqr_gpu.cu (tasks and the finish() driver), tsqr_gpu_plan.cu (handles, buffers,
/// workspaces), tsqr_gpu_local.cu (the worker's R), tsqr_gpu_tree.cu (the tree across workers),
/// tsqr_gpu_svd_r.cu (the root's SVD of R), tsqr_gpu_form_u.cu (U), tsqr_gpu_sketch.cu (sketch
/// mode), tsqr_gpu_validate.cu (validation).
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
///
/// Sketch mode (Config::gpu_sketch(), tall stacks): the stacked rows A (M x n, all workers
/// together) are factored by sketch-preconditioned Cholesky QR, at matrix-multiply speed
/// instead of geqrf's panel speed, without squaring A's condition number, and without a tree.
/// Each task also adds its rows to a sparse sign sketch Y = S A (sketch.hpp, 2n x n, integer
/// sums). finish(): the workers' sketches are summed exactly (NCCL all-reduce of the integers:
/// the same Y, bit for bit, on any number of workers); the root takes R_s from Y (Cholesky of
/// Y^T Y, or geqrf of Y when Y is badly conditioned) and broadcasts it; every worker forms
/// A_p = A R_s^-1 for its rows (recursive trsm in gemm), which is well conditioned (cond about
/// 6, whatever cond(A), because S embeds A's column space), and its G_i = A_p^T A_p; the G_i
/// are summed (all-reduce, 8 MB at n = 1000). The root then has G = R_c^T R_c for all rows:
/// R = R_c R_s is A's R factor. With gpu_svd=auto it eigen-decomposes R^T R = R_s^T G R_s
/// (accepted when cond(R) <= 100, as svd_of_r) while a second stream factors G (potrf) for
/// the check, and Z = R_s V S^-1; otherwise Z = R_c^-1 U_R from the SVD of R (gesvdj, ...).
/// Z and the verdict go to every worker (broadcast) and U_i = A_p,i Z is one gemm. The check:
/// potrf of G must succeed and R_c's diagonal must span less than Config::sketch_diag_ratio
/// (parameter sketch_check); else every worker factors its A_p by geqrf (R_i = R_p,i R_s), the
/// R factors go up the tree below and U comes back down by ormqr: always correct, only
/// slower. The tree merges of that fallback are preconditioned by the receiver's own R1:
/// [R1; R2] = [I; W] R1 with W = R2 R1^-1 (trsm), I + W^T W = R_c^T R_c (syrk, potrf), merged
/// R = R_c R1, and on the way down Q X = [R_c^-1 X; W R_c^-1 X] (trsm, gemm), with geqrf +
/// ormqr when their own check fails. Summing Gram matrices of the *preconditioned* rows is
/// the same computation as one worker holding all rows: cond(A_p), not cond(A), is squared.

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "scalebench/gpu_context.cuh"
#include "scalebench/gpu_transport.cuh"
#include "scalebench/workload.hpp"
#include "svd/config.hpp"
#include "svd/tree.hpp"

namespace sb::svd {

class GpuTsqr {
 public:
  /// comm: the case's workers (MPI, for validation); rank/size: this worker among them. With
  /// size > 1 the NCCL communicator ctx.nccl must span exactly those workers, in rank order.
  /// trace: print the step times of every finish() to stderr (`scalebench run --trace`).
  GpuTsqr(const Config& cfg, GpuContext& ctx, MPI_Comm comm, int rank, int size, int streams,
          bool trace = false);
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
  /// Whether the stacked rows are factored by the sketch (see the file comment).
  [[nodiscard]] bool sketched() const { return sketched_; }
  /// How the last repeat factored this worker's rows: "blocks", "stack", "sketch" or
  /// "sketch+geqrf" (the sketch's check failed and Householder QR of A_p took over).
  [[nodiscard]] const char* local_routine() const { return local_routine_; }
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
  // Construction (tsqr_gpu_plan.cu).
  /// Device bytes of the data arena: the fixed part, the sketch's, and one block slot.
  struct ArenaSizes {
    std::size_t fixed = 0, sketch = 0, per_block = 0;
  };
  /// The streams with one cuSOLVER handle each, and the main stream's solver objects.
  void create_handles(int streams);
  /// Decides stack_ and sketched_ and sizes the arena for `receives` tree merges.
  [[nodiscard]] ArenaSizes arena_sizes(std::size_t receives, int streams);
  /// capacity_: the blocks the free memory holds (all of the case's when they fit); throws
  /// EnvironmentError when fewer than this worker's share.
  void plan_capacity(const ArenaSizes& sizes);
  /// One allocation for every data buffer, carved into aligned pieces; the column scales.
  void carve_arena(const ArenaSizes& sizes, std::size_t receives, int streams);
  /// The largest workspace of the main stream's cuSOLVER calls, in doubles (with the root's
  /// SVD routine: in bytes for gesvdp, *bytes).
  [[nodiscard]] std::size_t main_workspace_doubles(std::size_t* bytes);
  /// cuSOLVER workspaces, queried on the real buffers: one per stream, one for the main stream.
  void allocate_workspaces();
  /// Timing events: per block slot, per stream, around NCCL operations, and the trace's.
  void create_events(std::size_t tree_steps);

  // finish() steps.
  /// The main stream waits for every block stream's work.
  void join_streams();
  /// Step 1: this worker's R (own_r_) from its k blocks (tsqr_gpu_local.cu). True when sketch
  /// mode formed U instead: nothing goes up or down the tree.
  bool local_r(int k);
  /// Step 2: R factors up the tree over NCCL; lv counts the receiving merges (tsqr_gpu_tree.cu).
  void tree_up(const std::vector<TreeStep>& steps, std::size_t& lv);
  /// Step 4: U_R back down the tree (tsqr_gpu_tree.cu).
  void tree_down(const std::vector<TreeStep>& steps, std::size_t lv);
  /// Step 5: every block's U_i from U_R (tsqr_gpu_form_u.cu).
  void form_u(int k);
  /// With trace_: the step times of this finish(), one line on stderr.
  void print_trace();
  /// cuSOLVER's info codes of this finish(); throws LibraryError on a failure.
  void check_infos();

  /// The root's SVD of own_r_ into sv_, x_ (U_R) and vmat_; gram_first: with gpu_svd=auto,
  /// try the eigen-decomposition of R^T R first (else gesvdj at once).
  void svd_of_r(bool gram_first);
  /// Sketch mode (see the file comment): the global sketch, R_s, A_p, G, the root's SVD and
  /// every worker's U. Collective over the case's workers. False when the check failed: then
  /// nothing of U is formed, A_p is in a_ and R_s in rs_, and every worker falls back.
  bool sketch_solve(int k);
  /// After syevd of R^T R on the main stream (eigenvalues in rwork_): whether the eigen-
  /// decomposition is accepted, cond(R) <= 100 (kGramRatio). Synchronises the main stream.
  bool gram_accepted();
  /// sketch_solve on the root: Z (U = A_p Z) into cbuf_, the verdict (1 or 0) at cbuf_[n*n].
  void sketch_root_svd();
  /// The fallback of sketch_solve: Householder QR of this worker's A_p; own_r_ = R_p R_s.
  void sketch_fallback(int k);
  /// potrf's info and the spread max/min |diag| of its factor f (leading dimension ldf), or
  /// infinity when potrf failed; synchronises `stream`, on which potrf ran.
  double cholesky_spread(const double* f, std::int64_t ldf, const int* dinfo, cudaStream_t stream);
  /// A pair of timed events around an NCCL operation on the main stream (communication time).
  void comm_begin();
  void comm_end();
  /// Sketch mode's tree merge of R1 = own_r_ and R2 = stage_ (see the file comment); false when
  /// its check fails (the caller then merges by geqrf).
  bool merge_by_cholesky(std::size_t level);
  /// With trace_: a timed event on the main stream, printed after finish().
  void mark(const char* label);

  Config cfg_;
  GpuContext& ctx_;
  MPI_Comm comm_;
  /// The exchanges between the case's GPUs (cfg.comm: NCCL or staged through host memory);
  /// null on one GPU.
  std::unique_ptr<GpuTransport> transport_;
  int rank_;
  int size_;
  int capacity_ = 0;
  int used_ = 0;
  bool stack_ = false;
  bool sketched_ = false;       ///< sketch mode (see the file comment)
  bool sketch_failed_ = false;  ///< the last repeat's check failed (Householder took over)
  const char* local_routine_ = "";
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
  std::size_t ev_used_ = 0;           ///< events of ev_comm_ recorded in this finish()

  void* arena_ = nullptr;      ///< all data buffers
  void* workspace_ = nullptr;  ///< cuSOLVER workspaces
  double* scales_ = nullptr;
  double* inv_scales_ = nullptr;            ///< 1 / scales_ (sketch mode)
  unsigned long long* sketch_y_ = nullptr;  ///< Y = S A in fixed point, sketch_height(n) x n
  double* sketch_d_ = nullptr;              ///< Y as doubles, then its QR (R_s on top)
  double* chol_ = nullptr;                  ///< n x n: G = A_p^T A_p, then R_c (upper)
  double* zbuf_ = nullptr;                  ///< n x n: scratch of the recursive trsm
  double* rs_ = nullptr;                    ///< n x n: triu(R_s), the same on every worker
  double* sketch_r_ = nullptr;              ///< n x n: Y^T Y, then its Cholesky factor
  double* partial_grams_ = nullptr;         ///< streams x n x n: G of each slice of A_p rows
  std::vector<cublasHandle_t> blas_;        ///< sketch mode: one cuBLAS handle per stream
  std::vector<double> chol_diag_;           ///< R_c's diagonal on the host
  bool trace_ = false;
  std::vector<std::pair<const char*, cudaEvent_t>> marks_;
  std::size_t marks_used_ = 0;
  std::vector<double*> a_, u_, tau_;  ///< per slot (stack mode: row offsets into one matrix)
  double* rstack_ = nullptr;          ///< capacity*n x n
  double* xstack_ = nullptr;
  double* tau_stack_ = nullptr;
  double* own_r_ = nullptr;                   ///< n x n
  double* x_ = nullptr;                       ///< n x n: this worker's piece of U_R
  double* stage_ = nullptr;                   ///< n x n contiguous NCCL buffer
  double* cbuf_ = nullptr;                    ///< 2n x n
  std::vector<double*> level_m_, level_tau_;  ///< 2n x n merges, per receive step
  std::vector<bool> merge_cholesky_;          ///< per receive step: merged by merge_by_cholesky
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
  /// Sketch mode: R_s comes from Cholesky of Y^T Y when its diagonal spans less than this
  /// (cond(Y) around 1e5 at most: Y^T Y keeps ~1e-6 relative accuracy, plenty for a
  /// preconditioner), else from geqrf of Y.
  static constexpr double kSketchGramSpread = 1e5;
};

}  // namespace sb::svd
