#pragma once
/// @file tsqr_cpu.hpp
/// The CPU TSQR of one svd worker (docs/specification.md §4.2).
///
/// Per block (a task, on a pool thread, BLAS single-threaded): generate the chunk x n block
/// column-major, QR it in place (dgeqrt: LAPACK's blocked Householder QR that also keeps the
/// compact-WY T factors, so applying them later costs no rebuild), copy its R.
/// finish(): the worker's R factors are merged pairwise as a tree with dtpqrt (QR of two
/// stacked triangles, ~2n^3/3 flops instead of ~10n^3/3 for a dense 2n x n QR), then across
/// the case's workers along a binary tree over MPI (tree.hpp). Rank 0 takes the SVD of the
/// final n x n R with dgesdd (divide and conquer): R = U_R S V^T. U_R goes back down the same
/// trees, each merge applying its Q to [X; 0] with dtpmqrt, and every block forms
/// U_i = Q_i [X_i; 0] with dgemqrt (dormqr's compact-WY twin) from its own reflectors: no
/// explicit Q is ever formed.
/// U stays on the worker; rank 0 keeps S and V^T.
///
/// Sketch mode (Config::cpu_sketch(), tall workers), the CPU twin of tsqr_gpu.cuh's: a task
/// only generates its block and adds it to the worker's sparse sign sketch Y = S A (sketch.hpp,
/// 2n x n, 64-bit fixed point, one shared Y whose column groups are taken under a lock each:
/// integer sums, so Y is the same bit for bit whatever the order). finish(): R_s = chol(Y^T Y)
/// (dsyrk + dpotrf; dgeqrf of Y when that factor's diagonal spans 1e5 or more); per block, on
/// the pool, A_p = A R_s^-1 (in place, a recursive solve that runs in dgemm) and its Gram
/// A_p^T A_p (dsyrk), summed in a fixed order; G = R_c^T R_c (dpotrf). A_p is well conditioned
/// (cond about 6 whatever cond(A): S embeds A's column space), so the worker's R = R_c R_s
/// (dtrmm) goes up the cross-worker tree with no local tree at all, and U_i = A_p,i (R_c^-1 X)
/// is one dgemm per block. About 4mn^2
/// flops, nearly all in matrix-multiply kernels, against dgeqrt + dtpqrt + dgemqrt's ~6mn^2 at
/// panel speed. The check: dpotrf must succeed and R_c's diagonal must span less than
/// Config::sketch_diag_ratio, else the preconditioned blocks take the Householder path above
/// (dgeqrt, dtpqrt tree, dgemqrt) and the worker's R is that tree's R times R_s: always
/// correct, only slower.

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "scalebench/workload.hpp"
#include "svd/config.hpp"
#include "svd/thread_pool.hpp"

namespace sb::svd {

class CpuTsqr {
 public:
  /// threads: the pool size (the worker's CPU threads); comm: the case's workers.
  /// expected_blocks: block buffers allocated up front (more are added when needed).
  /// trace: print the step times of every finish() to stderr (`scalebench run --trace`).
  CpuTsqr(const Config& cfg, int threads, MPI_Comm comm, std::int64_t expected_blocks,
          bool trace = false);
  ~CpuTsqr();
  CpuTsqr(const CpuTsqr&) = delete;
  CpuTsqr& operator=(const CpuTsqr&) = delete;

  /// Start of a repeat: forgets the previous repeat's blocks (buffers are kept).
  void begin_repeat();
  /// Generates and factors `block` on the pool; done(generate_s, compute_s) runs on the pool
  /// thread when it has finished. Main thread only.
  void submit(std::int64_t block, std::function<void(double, double)> done);
  /// The TSQR reduction, SVD of R (rank 0), and U of every owned block. Collective over comm.
  /// Adds its compute and communicate times to `times`. All submitted blocks must be done.
  void finish(PhaseTimes& times);

  [[nodiscard]] bool root() const { return rank_ == 0; }
  /// Singular values, descending (rank 0, after finish).
  [[nodiscard]] const std::vector<double>& sigma() const { return sigma_; }
  /// V^T, n x n column-major (rank 0, after finish).
  [[nodiscard]] const std::vector<double>& vt() const { return vt_; }

  /// Blocks owned in the last repeat, in submission order.
  [[nodiscard]] int blocks_owned() const { return used_; }
  [[nodiscard]] std::int64_t block_of(int i) const;
  /// U_i of the i-th owned block: chunk x n, column-major (after finish).
  [[nodiscard]] const double* u(int i) const;

  /// Untimed validation, collective over comm: broadcasts S and V^T from rank 0, then sums
  /// ||A_i - U_i S V^T||_F^2, ||A_i||_F^2 and U_i^T U_i over all blocks of all workers.
  /// Returns {residual_sq, a_sq, ||U^T U - I||_F} on rank 0 and {} elsewhere.
  std::vector<double> validate();

  [[nodiscard]] ThreadPool& pool() { return pool_; }
  /// Whether this worker factors its blocks by the sketch (see the file comment).
  [[nodiscard]] bool sketched() const { return sketch_; }
  /// How the last finish() factored this worker's blocks: "householder", "sketch",
  /// "sketch+householder" (the sketch's check failed) or "none" (no blocks).
  [[nodiscard]] const char* local_routine() const { return local_routine_; }
  /// Sketch mode: Y = S A of the last repeat's blocks (sketch_height(n) x n, column-major,
  /// fixed point as sketch_rows_cpu's); for tests.
  [[nodiscard]] const std::vector<std::int64_t>& sketch_y() const { return sketch_y_; }
  /// The routine that took the last SVD of R on rank 0: "gram" or "gesdd".
  [[nodiscard]] const char* svd_routine() const { return svd_routine_; }
  /// lambda_min / lambda_max of R^T R above which auto uses the Gram eigen-decomposition
  /// (cond(R) <= 100: U_R = R V S^-1 then loses at most ~1e4 eps of orthogonality).
  static constexpr double kGramRatio = 1e-4;

 private:
  struct Slot;
  struct Work;
  Slot& slot(int i);
  void factor(Slot& s, Work& w, int thread, double& generate_s, double& compute_s);
  /// dgeqrt of the block in s.a (in place) and its R into s.r.
  void householder_leaf(Slot& s, Work& w) const;
  /// Sketch mode: adds block s.a to Y (column groups under their locks).
  void sketch_block(const Slot& s, Work& w, int thread);
  /// Sketch mode, first step of finish(): R_s, A_p, R_c and the check. True: slot(0).r holds
  /// R_c R_s. False: every block holds dgeqrt of its A_p (the Householder path goes on).
  bool sketch_factor();
  /// max/min |diag| of the upper factor f, or infinity when info != 0 or a diagonal entry is
  /// zero or not finite.
  [[nodiscard]] double cholesky_spread(const double* f, std::int64_t ldf, int info) const;
  /// Runs body(i, work) for i < count: on the pool (BLAS single-threaded) when count > 1,
  /// else on this thread with BLAS on all threads.
  void run_level(std::int64_t count, const std::function<void(std::int64_t, Work&)>& body);
  /// With trace: a timed point of finish(), printed at its end.
  void mark(const char* label);
  /// Rank 0: SVD of the final R (upper triangle of r): sigma_, vt_, and U_R into x_top_.
  void svd_of_r(const double* r);

  Config cfg_;
  std::vector<double> scales_;
  int threads_;
  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
  int nb_ = 32;   ///< block size of the tree merges (dtpqrt)
  int qnb_ = 64;  ///< block size of the block QRs (dgeqrt)
  /// dgeqrt/dgemqrt block size: faster than dgeqrf + dormqr, which rebuild their T factors in
  /// every call (bench_svd_cpu bm_geqrf, bm_ormqr).
  static constexpr int kBlockNb = 64;
  std::vector<std::unique_ptr<Slot>> slots_;  ///< one per block of the case, allocated lazily
  int used_ = 0;
  std::vector<std::unique_ptr<Work>> work_;  ///< one per pool thread, plus the main thread's
  std::vector<double> zero_r_;               ///< this worker's R when it owns no block
  std::vector<std::vector<double>> level_v_, level_t_, level_x_;  ///< cross-worker merges
  std::vector<double> x_top_;  ///< U_R piece of this worker's local root
  std::vector<double> svd_in_, sigma_, vt_, gesdd_work_;
  std::vector<int> gesdd_iwork_;
  std::vector<double> syevd_work_, eig_;
  std::vector<int> syevd_iwork_;
  const char* svd_routine_ = "";
  bool trace_ = false;
  std::vector<std::pair<const char*, double>> marks_;
  // Sketch mode (see the file comment).
  bool sketch_ = false;
  const char* local_routine_ = "";
  std::vector<double> inv_scales_;      ///< 1 / scales_
  std::vector<std::int64_t> sketch_y_;  ///< Y = S A, fixed point, sketch_height(n) x n
  int y_groups_ = 1;                    ///< column groups of Y, one lock each
  std::unique_ptr<std::mutex[]> y_locks_;
  std::vector<double> sketch_d_;  ///< Y as doubles, then its QR (dgeqrf fallback)
  std::vector<double> sketch_tau_;
  std::vector<double> rs_;    ///< n x n: Y^T Y, then R_s (upper, zeros below)
  std::vector<double> chol_;  ///< n x n: G = A_p^T A_p, then R_c (upper)
  /// Sketch mode: R_s comes from Cholesky of Y^T Y when its diagonal spans less than this
  /// (cond(Y) around 1e5 at most: Y^T Y keeps ~1e-6 relative accuracy, plenty for a
  /// preconditioner), else from dgeqrf of Y.
  static constexpr double kSketchGramSpread = 1e5;
  ThreadPool pool_;  ///< last: joined first on destruction, while the buffers still exist
};

}  // namespace sb::svd
