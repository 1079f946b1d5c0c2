#pragma once
/// @file tsqr_cpu.hpp
/// The CPU TSQR of one svd worker (SPEC 4.2).
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

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "scalebench/workload.hpp"
#include "svd/svd_config.hpp"
#include "svd/thread_pool.hpp"

namespace sb::svd {

class CpuTsqr {
 public:
  /// threads: the pool size (the worker's CPU threads); comm: the case's workers.
  /// expected_blocks: block buffers allocated up front (more are added when needed).
  CpuTsqr(const Config& cfg, int threads, MPI_Comm comm, std::int64_t expected_blocks);
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
  /// The routine that took the last SVD of R on rank 0: "gram" or "gesdd".
  [[nodiscard]] const char* svd_routine() const { return svd_routine_; }
  /// lambda_min / lambda_max of R^T R above which auto uses the Gram eigen-decomposition
  /// (cond(R) <= 100: U_R = R V S^-1 then loses at most ~1e4 eps of orthogonality).
  static constexpr double kGramRatio = 1e-4;

 private:
  struct Slot;
  struct Work;
  Slot& slot(int i);
  void factor(Slot& s, Work& w, double& generate_s, double& compute_s) const;
  /// Runs body(i, work) for i < count: on the pool (BLAS single-threaded) when count > 1,
  /// else on this thread with BLAS on all threads.
  void run_level(std::int64_t count, const std::function<void(std::int64_t, Work&)>& body);
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
  /// dgeqrt/dgemqrt block size: on a 1000 x 1000 block (one core, OpenBLAS 0.3.21) 41 + 60 ms
  /// against 46 + 66 ms for dgeqrf + dormqr, which rebuild their T factors in every call.
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
  ThreadPool pool_;  ///< last: joined first on destruction, while the buffers still exist
};

}  // namespace sb::svd
