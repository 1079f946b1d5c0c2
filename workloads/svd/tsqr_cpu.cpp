#include "svd/tsqr_cpu.hpp"

#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>

#include "scalebench/clock.hpp"
#include "scalebench/error.hpp"
#include "svd/blas_threads.hpp"
#include "svd/lapack_check.hpp"
#include "svd/sketch.hpp"
#include "svd/svd_data.hpp"
#include "svd/tree.hpp"

namespace sb::svd {

namespace {
constexpr int kTagUp = 4201;
constexpr int kTagDown = 4202;

/// Size of a LAPACK workspace query result.
std::size_t lwork_of(double query) {
  return static_cast<std::size_t>(query) + 1;
}

/// Columns below which the recursive triangular solves call dtrsm itself.
constexpr int kTrsmBase = 64;

/// Where a triangular solve of n columns (or rows) splits: about half, a multiple of 32.
int trsm_split(int n) {
  return std::min(n - 1, (n / 2 + 31) / 32 * 32);
}

/// A := A R^-1 (A m x n, R n x n upper triangular) by recursive halves, so that dgemm does
/// nearly all the flops: OpenBLAS's dtrsm runs well below its dgemm speed (bench_svd_cpu
/// bm_case, the sketch's solve).
void trsm_right_upper(int m, int n, const double* r, int ldr, double* a, int lda) {
  if (n <= kTrsmBase) {
    cblas_dtrsm(CblasColMajor, CblasRight, CblasUpper, CblasNoTrans, CblasNonUnit, m, n, 1.0, r,
                ldr, a, lda);
    return;
  }
  const int n1 = trsm_split(n), n2 = n - n1;
  const auto off = static_cast<std::ptrdiff_t>(n1);
  trsm_right_upper(m, n1, r, ldr, a, lda);
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n2, n1, -1.0, a, lda, r + off * ldr,
              ldr, 1.0, a + off * lda, lda);
  trsm_right_upper(m, n2, r + off + off * ldr, ldr, a + off * lda, lda);
}

/// B := R^-1 B (R n x n upper triangular, B n x k), recursive as trsm_right_upper.
void trsm_left_upper(int n, int k, const double* r, int ldr, double* b, int ldb) {
  if (n <= kTrsmBase) {
    cblas_dtrsm(CblasColMajor, CblasLeft, CblasUpper, CblasNoTrans, CblasNonUnit, n, k, 1.0, r, ldr,
                b, ldb);
    return;
  }
  const int n1 = trsm_split(n), n2 = n - n1;
  const auto off = static_cast<std::ptrdiff_t>(n1);
  trsm_left_upper(n2, k, r + off + off * ldr, ldr, b + off, ldb);
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n1, k, n2, -1.0, r + off * ldr, ldr,
              b + off, ldb, 1.0, b, ldb);
  trsm_left_upper(n1, k, r, ldr, b, ldb);
}
}  // namespace

struct CpuTsqr::Slot {
  std::int64_t block = -1;
  std::vector<double> a;   ///< chunk x n: the block, then R + reflectors (dgeqrt)
  std::vector<double> tq;  ///< qnb x n: the block reflectors' triangular factors T
  std::vector<double> u;   ///< chunk x n: U_i
  std::vector<double> r;   ///< n x n: the leaf's R; after merging under another node, its V
  std::vector<double> t;   ///< nb x n: T of the merge that absorbed this node
  std::vector<double> x;   ///< n x n: this node's piece of U_R on the way down
};

struct CpuTsqr::Work {
  std::vector<double> geqrt;   ///< qnb x n
  std::vector<double> gemqrt;  ///< n x qnb
  std::vector<double> tp;
  std::vector<std::uint32_t> hits;  ///< sketch mode: chunk x kSketchLayers rows of Y, signed
  std::vector<char> pending;        ///< sketch mode: Y's column groups a task has yet to add
};

CpuTsqr::CpuTsqr(const Config& cfg, int threads, MPI_Comm comm, std::int64_t expected_blocks,
                 bool trace)
    : cfg_(cfg),
      scales_(column_scales(cfg)),
      threads_(std::max(1, threads)),
      comm_(comm),
      sketch_(cfg.cpu_sketch()),
      pool_(std::max(1, threads)) {
  SB_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  SB_MPI_CHECK(MPI_Comm_size(comm_, &size_));
  trace_ = trace;
  const auto n = static_cast<lapack_int>(cfg_.n);
  nb_ = static_cast<int>(std::min<std::int64_t>(32, cfg_.n));

  // Workspaces, one per pool thread plus the main thread's.
  qnb_ = static_cast<int>(std::min<std::int64_t>(kBlockNb, cfg_.n));
  const auto qn = static_cast<std::size_t>(qnb_) * static_cast<std::size_t>(n);
  for (int i = 0; i <= pool_.size(); ++i) {
    auto w = std::make_unique<Work>();
    w->geqrt.resize(qn);
    w->gemqrt.resize(qn);
    w->tp.resize(static_cast<std::size_t>(nb_) * static_cast<std::size_t>(n));
    if (sketch_) w->hits.resize(static_cast<std::size_t>(cfg_.chunk * kSketchLayers));
    work_.push_back(std::move(w));
  }
  if (sketch_) {
    const auto skn = static_cast<std::size_t>(sketch_height(cfg_.n) * cfg_.n);
    inv_scales_.resize(scales_.size());
    for (std::size_t j = 0; j < scales_.size(); ++j) inv_scales_[j] = 1.0 / scales_[j];
    sketch_y_.assign(skn, 0);
    sketch_d_.assign(skn, 0.0);
    sketch_tau_.assign(static_cast<std::size_t>(n), 0.0);
    rs_.assign(static_cast<std::size_t>(n) * static_cast<std::size_t>(n), 0.0);
    chol_.assign(rs_.size(), 0.0);
    // A few column groups per thread: tasks start at different groups and rarely meet.
    y_groups_ = static_cast<int>(std::min<std::int64_t>(cfg_.n, 4 * pool_.size()));
    y_locks_ = std::make_unique<std::mutex[]>(static_cast<std::size_t>(y_groups_));
  }
  const auto nn = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  zero_r_.assign(nn, 0.0);
  x_top_.assign(nn, 0.0);
  for (const auto& step : tree_steps(rank_, size_)) {
    if (!step.receive) continue;
    level_v_.emplace_back(nn, 0.0);
    level_t_.emplace_back(static_cast<std::size_t>(nb_) * static_cast<std::size_t>(n), 0.0);
    level_x_.emplace_back(nn, 0.0);
  }
  if (rank_ == 0) {
    svd_in_.assign(nn, 0.0);
    sigma_.assign(static_cast<std::size_t>(n), 0.0);
    vt_.assign(nn, 0.0);
    gesdd_iwork_.resize(8 * static_cast<std::size_t>(n));
    double q = 0;
    SB_LAPACK_CHECK(LAPACKE_dgesdd_work(LAPACK_COL_MAJOR, 'S', n, n, nullptr, n, nullptr, nullptr,
                                        n, nullptr, n, &q, -1, gesdd_iwork_.data()));
    gesdd_work_.resize(lwork_of(q));
    if (cfg_.cpu_svd == "auto") {
      double qw = 0;
      lapack_int qi = 0;
      SB_LAPACK_CHECK(LAPACKE_dsyevd_work(LAPACK_COL_MAJOR, 'V', 'U', n, nullptr, n, nullptr, &qw,
                                          -1, &qi, -1));
      syevd_work_.resize(lwork_of(qw));
      syevd_iwork_.resize(static_cast<std::size_t>(qi) + 1);
      eig_.resize(static_cast<std::size_t>(n));
    }
  }
  slots_.resize(static_cast<std::size_t>(cfg_.blocks()));
  const std::int64_t pre = std::min(expected_blocks, cfg_.blocks());
  for (int i = 0; i < pre; ++i) slot(i);
}

CpuTsqr::~CpuTsqr() = default;

CpuTsqr::Slot& CpuTsqr::slot(int i) {
  auto& p = slots_[static_cast<std::size_t>(i)];
  if (!p) {
    p = std::make_unique<Slot>();
    const auto cn = static_cast<std::size_t>(cfg_.chunk * cfg_.n);
    const auto nn = static_cast<std::size_t>(cfg_.n * cfg_.n);
    p->a.assign(cn, 0.0);
    p->u.assign(cn, 0.0);
    p->tq.assign(static_cast<std::size_t>(qnb_) * static_cast<std::size_t>(cfg_.n), 0.0);
    p->r.assign(nn, 0.0);
    p->x.assign(nn, 0.0);
    p->t.assign(static_cast<std::size_t>(nb_) * static_cast<std::size_t>(cfg_.n), 0.0);
  }
  return *p;
}

std::int64_t CpuTsqr::block_of(int i) const {
  return slots_.at(static_cast<std::size_t>(i))->block;
}
const double* CpuTsqr::u(int i) const {
  return slots_.at(static_cast<std::size_t>(i))->u.data();
}

void CpuTsqr::begin_repeat() {
  pool_.rethrow();
  used_ = 0;
  if (sketch_) std::fill(sketch_y_.begin(), sketch_y_.end(), std::int64_t{0});
  set_blas_threads(1);  // pool threads call BLAS single-threaded
}

void CpuTsqr::submit(std::int64_t block, std::function<void(double, double)> done) {
  SB_EXPECTS(used_ < static_cast<int>(slots_.size()),
             "svd: a worker was handed more blocks than the case has");
  Slot& s = slot(used_++);
  s.block = block;
  pool_.post([this, &s, done = std::move(done)](int thread) {
    double g = 0, c = 0;
    factor(s, *work_[static_cast<std::size_t>(thread)], thread, g, c);
    done(g, c);
  });
}

void CpuTsqr::factor(Slot& s, Work& w, int thread, double& generate_s, double& compute_s) {
  const double t0 = now();
  generate_block(cfg_, scales_.data(), s.block, s.a.data());
  const double t1 = now();
  if (sketch_) {
    sketch_block(s, w, thread);
  } else {
    householder_leaf(s, w);
  }
  generate_s = t1 - t0;
  compute_s = now() - t1;
}

void CpuTsqr::sketch_block(const Slot& s, Work& w, int thread) {
  const std::int64_t n = cfg_.n, chunk = cfg_.chunk, sk = sketch_height(n);
  const std::int64_t layer_rows = sk / kSketchLayers;
  const std::uint64_t key = sketch_key(cfg_.seed);
  const auto row0 = static_cast<std::uint64_t>(s.block * chunk);
  std::uint32_t* hits = w.hits.data();
  for (std::int64_t r = 0; r < chunk; ++r)
    for (int t = 0; t < kSketchLayers; ++t)
      hits[r * kSketchLayers + t] =
          sketch_hit(key, row0 + static_cast<std::uint64_t>(r), t, layer_rows);
  // Column by column (one column of Y, 16 KB at n = 1000, stays in L1 while its chunk rows
  // land), column groups under their locks: each task starts at its thread's own group and
  // takes the free groups first, waiting only when every group it still needs is busy.
  const int groups = y_groups_;
  const int first = thread * groups / std::max(1, pool_.size());
  std::vector<char>& pending = w.pending;
  pending.assign(static_cast<std::size_t>(groups), 1);
  for (int left = groups; left > 0;) {
    int gi = -1;
    std::unique_lock<std::mutex> lock;
    for (int g = 0; g < groups && gi < 0; ++g) {
      const int c = (first + g) % groups;
      if (pending[static_cast<std::size_t>(c)] == 0) continue;
      std::unique_lock<std::mutex> l(y_locks_[static_cast<std::size_t>(c)], std::try_to_lock);
      if (l.owns_lock()) {
        gi = c;
        lock = std::move(l);
      }
    }
    if (gi < 0) {  // all busy: wait for the first one still needed
      for (int g = 0; g < groups && gi < 0; ++g)
        if (pending[static_cast<std::size_t>((first + g) % groups)] != 0) gi = (first + g) % groups;
      lock = std::unique_lock<std::mutex>(y_locks_[static_cast<std::size_t>(gi)]);
    }
    pending[static_cast<std::size_t>(gi)] = 0;
    --left;
    const std::int64_t j0 = n * gi / groups, j1 = n * (gi + 1) / groups;
    for (std::int64_t j = j0; j < j1; ++j) {
      // Unsigned two's complement arithmetic, as sketch_rows_cpu and the GPU's atomics.
      auto* y = reinterpret_cast<std::uint64_t*>(sketch_y_.data() + j * sk);
      const double* a = s.a.data() + j * chunk;
      const double inv = inv_scales_[static_cast<std::size_t>(j)];
      for (std::int64_t r = 0; r < chunk; ++r) {
        const auto q = static_cast<std::uint64_t>(sketch_fixed(a[r], inv));
        const std::uint32_t* h = hits + r * kSketchLayers;
        for (int t = 0; t < kSketchLayers; ++t) {
          const std::uint64_t neg = std::uint64_t{0} - (h[t] >> 31);  // all ones when negative
          y[h[t] & 0x7fffffffu] += (q ^ neg) - neg;
        }
      }
    }
  }
}

void CpuTsqr::householder_leaf(Slot& s, Work& w) const {
  const auto n = static_cast<lapack_int>(cfg_.n);
  const auto chunk = static_cast<lapack_int>(cfg_.chunk);
  SB_LAPACK_CHECK(LAPACKE_dgeqrt_work(LAPACK_COL_MAJOR, chunk, n, qnb_, s.a.data(), chunk,
                                      s.tq.data(), qnb_, w.geqrt.data()));
  // The leaf's R: upper triangle of the block's top n x n, zeros below.
  for (std::int64_t j = 0; j < cfg_.n; ++j) {
    double* rj = s.r.data() + j * cfg_.n;
    const double* aj = s.a.data() + j * cfg_.chunk;
    std::copy(aj, aj + j + 1, rj);
    std::fill(rj + j + 1, rj + cfg_.n, 0.0);
  }
}

void CpuTsqr::run_level(std::int64_t count, const std::function<void(std::int64_t, Work&)>& body) {
  if (count > 1 && pool_.size() > 1) {
    pool_.parallel_for(count, [&](std::int64_t i, int thread) {
      body(i, *work_[static_cast<std::size_t>(thread)]);
    });
    return;
  }
  ScopedBlasThreads all(threads_);
  for (std::int64_t i = 0; i < count; ++i) body(i, *work_.back());
}

void CpuTsqr::mark(const char* label) {
  if (trace_) marks_.emplace_back(label, now());
}

void CpuTsqr::finish(PhaseTimes& times) {
  pool_.rethrow();
  const double t_start = now();
  marks_.clear();
  mark("start");
  double comm_s = 0;
  const auto n = static_cast<lapack_int>(cfg_.n);
  const auto chunk = static_cast<lapack_int>(cfg_.chunk);
  const auto nn = static_cast<std::size_t>(cfg_.n * cfg_.n);
  const int nb = nb_;

  // 0. Sketch mode: R = R_c R_s straight from the blocks, or (the check failed) every block
  // holds the Householder QR of its preconditioned rows and step 1 goes on from there.
  const bool sketched = sketch_ && used_ > 0;
  const bool sketch_ok = sketched && sketch_factor();
  local_routine_ = used_ == 0  ? "none"
                   : sketch_ok ? "sketch"
                   : sketched  ? "sketch+householder"
                               : "householder";

  // 1. Merge this worker's R factors pairwise (node a absorbs node b; b's r becomes V).
  const auto levels = sketch_ok ? std::vector<std::vector<LocalMerge>>{} : local_levels(used_);
  for (const auto& level : levels) {
    run_level(static_cast<std::int64_t>(level.size()), [&](std::int64_t i, Work& w) {
      Slot& a = slot(level[static_cast<std::size_t>(i)].a);
      Slot& b = slot(level[static_cast<std::size_t>(i)].b);
      SB_LAPACK_CHECK(LAPACKE_dtpqrt_work(LAPACK_COL_MAJOR, n, n, n, nb, a.r.data(), n, b.r.data(),
                                          n, b.t.data(), nb, w.tp.data()));
    });
  }
  double* my_r = used_ > 0 ? slot(0).r.data() : zero_r_.data();
  if (used_ == 0) std::fill(zero_r_.begin(), zero_r_.end(), 0.0);
  if (sketched && !sketch_ok) {
    // A = A_p R_s = Q R_p R_s: this worker's R is R_p R_s (both upper triangular).
    ScopedBlasThreads all(threads_);
    cblas_dtrmm(CblasColMajor, CblasRight, CblasUpper, CblasNoTrans, CblasNonUnit, n, n, 1.0,
                rs_.data(), n, my_r, n);
  }

  mark("local R");
  // 2. Up the cross-worker tree.
  const auto steps = tree_steps(rank_, size_);
  {
    ScopedBlasThreads all(threads_);
    std::size_t lv = 0;
    for (const auto& step : steps) {
      if (step.receive) {
        double t0 = now();
        SB_MPI_CHECK(MPI_Recv(level_v_[lv].data(), static_cast<int>(nn), MPI_DOUBLE, step.partner,
                              kTagUp, comm_, MPI_STATUS_IGNORE));
        comm_s += now() - t0;
        SB_LAPACK_CHECK(LAPACKE_dtpqrt_work(LAPACK_COL_MAJOR, n, n, n, nb, my_r, n,
                                            level_v_[lv].data(), n, level_t_[lv].data(), nb,
                                            work_.back()->tp.data()));
        ++lv;
      } else {
        const double t0 = now();
        SB_MPI_CHECK(MPI_Send(my_r, static_cast<int>(nn), MPI_DOUBLE, step.partner, kTagUp, comm_));
        // Wait for this worker's piece of U_R.
        SB_MPI_CHECK(MPI_Recv(x_top_.data(), static_cast<int>(nn), MPI_DOUBLE, step.partner,
                              kTagDown, comm_, MPI_STATUS_IGNORE));
        comm_s += now() - t0;
      }
    }

    // 3. The root: R = U_R S V^T; U_R is the root's X.
    mark("up");
    if (rank_ == 0) svd_of_r(my_r);
    mark("svd");

    // 4. Down the cross-worker tree: [X; X_partner] = Q_merge [X; 0].
    for (std::size_t s = steps.size(); s-- > 0;) {
      if (!steps[s].receive) continue;
      --lv;
      std::fill(level_x_[lv].begin(), level_x_[lv].end(), 0.0);
      SB_LAPACK_CHECK(LAPACKE_dtpmqrt_work(
          LAPACK_COL_MAJOR, 'L', 'N', n, n, n, n, nb, level_v_[lv].data(), n, level_t_[lv].data(),
          nb, x_top_.data(), n, level_x_[lv].data(), n, work_.back()->tp.data()));
      const double t0 = now();
      SB_MPI_CHECK(MPI_Send(level_x_[lv].data(), static_cast<int>(nn), MPI_DOUBLE, steps[s].partner,
                            kTagDown, comm_));
      comm_s += now() - t0;
    }
  }

  mark("down");
  // 5. Sketch mode: U_i = A_p,i Z with Z = R_c^-1 X.
  if (sketch_ok) {
    double* z = slot(0).x.data();
    std::copy(x_top_.begin(), x_top_.end(), z);
    {
      ScopedBlasThreads all(threads_);
      trsm_left_upper(n, n, chol_.data(), n, z, n);
    }
    mark("Z");
    run_level(used_, [&](std::int64_t i, Work&) {
      Slot& s = slot(static_cast<int>(i));
      cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, chunk, n, n, 1.0, s.a.data(), chunk, z,
                  n, 0.0, s.u.data(), chunk);
    });
  } else if (used_ > 0) {
    // 5. Down this worker's tree, then U_i = Q_i [X_i; 0] for every block.
    std::copy(x_top_.begin(), x_top_.end(), slot(0).x.begin());
    for (std::size_t l = levels.size(); l-- > 0;) {
      const auto& level = levels[l];
      run_level(static_cast<std::int64_t>(level.size()), [&](std::int64_t i, Work& w) {
        Slot& a = slot(level[static_cast<std::size_t>(i)].a);
        Slot& b = slot(level[static_cast<std::size_t>(i)].b);
        std::fill(b.x.begin(), b.x.end(), 0.0);
        SB_LAPACK_CHECK(LAPACKE_dtpmqrt_work(LAPACK_COL_MAJOR, 'L', 'N', n, n, n, n, nb, b.r.data(),
                                             n, b.t.data(), nb, a.x.data(), n, b.x.data(), n,
                                             w.tp.data()));
      });
    }
    run_level(used_, [&](std::int64_t i, Work& w) {
      Slot& s = slot(static_cast<int>(i));
      for (std::int64_t j = 0; j < cfg_.n; ++j) {
        double* uj = s.u.data() + j * cfg_.chunk;
        std::copy(s.x.data() + j * cfg_.n, s.x.data() + (j + 1) * cfg_.n, uj);
        std::fill(uj + cfg_.n, uj + cfg_.chunk, 0.0);
      }
      SB_LAPACK_CHECK(LAPACKE_dgemqrt_work(LAPACK_COL_MAJOR, 'L', 'N', chunk, n, n, qnb_,
                                           s.a.data(), chunk, s.tq.data(), qnb_, s.u.data(), chunk,
                                           w.gemqrt.data()));
    });
  }
  mark("U");
  times.communicate += comm_s;
  times.compute += now() - t_start - comm_s;
  if (trace_ && marks_.size() > 1) {
    std::string line = "svd trace rank " + std::to_string(rank_) + " (" + local_routine_ + "):";
    for (std::size_t i = 1; i < marks_.size(); ++i)
      line += " " + std::string(marks_[i].first) + " " +
              std::to_string(1e3 * (marks_[i].second - marks_[i - 1].second)) + " ms";
    std::fprintf(stderr, "%s\n", line.c_str());
  }
}

double CpuTsqr::cholesky_spread(const double* f, std::int64_t ldf, int info) const {
  constexpr double kFail = std::numeric_limits<double>::infinity();
  if (info != 0) return kFail;
  double lo = kFail, hi = 0;
  for (std::int64_t j = 0; j < cfg_.n; ++j) {
    const double d = f[j + j * ldf];
    if (!std::isfinite(d)) return kFail;
    lo = std::min(lo, std::fabs(d));
    hi = std::max(hi, std::fabs(d));
  }
  return lo > 0 ? hi / lo : kFail;
}

bool CpuTsqr::sketch_factor() {
  const std::int64_t nl = cfg_.n, sk = sketch_height(nl);
  const auto n = static_cast<lapack_int>(nl);
  const auto chunk = static_cast<lapack_int>(cfg_.chunk);
  const auto isk = static_cast<lapack_int>(sk);
  {
    // 1. R_s, an R factor of Y (as doubles: 2^-40 of each column's scale per unit). When Y is
    // well conditioned, Cholesky of Y^T Y (its error, ~cond(Y)^2 eps, only makes the
    // preconditioner a little less exact); else Householder QR of Y.
    ScopedBlasThreads all(threads_);
    for (std::int64_t j = 0; j < nl; ++j) {
      const double unit = 0x1p-40 * scales_[static_cast<std::size_t>(j)];
      const std::int64_t* y = sketch_y_.data() + j * sk;
      double* d = sketch_d_.data() + j * sk;
      for (std::int64_t i = 0; i < sk; ++i) d[i] = static_cast<double>(y[i]) * unit;
    }
    cblas_dsyrk(CblasColMajor, CblasUpper, CblasTrans, n, isk, 1.0, sketch_d_.data(), isk, 0.0,
                rs_.data(), n);
    const lapack_int info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'U', n, rs_.data(), n);
    if (!(cholesky_spread(rs_.data(), nl, info) < kSketchGramSpread)) {
      SB_LAPACK_CHECK(
          LAPACKE_dgeqrf(LAPACK_COL_MAJOR, isk, n, sketch_d_.data(), isk, sketch_tau_.data()));
      for (std::int64_t j = 0; j < nl; ++j)
        std::copy(sketch_d_.data() + j * sk, sketch_d_.data() + j * sk + j + 1,
                  rs_.data() + j * nl);
    }
    for (std::int64_t j = 0; j < nl; ++j)  // exactly upper triangular (dtrmm reads it whole)
      std::fill(rs_.data() + j * nl + j + 1, rs_.data() + (j + 1) * nl, 0.0);
  }
  mark("R_s");

  // 2. Per block: A_p = A R_s^-1 in place, and the Grams. Partition p takes blocks p, p + P,
  // ... in order and sums their Grams into slot(p).r (free until the R factors are formed), so
  // G does not depend on which thread ran what.
  const int parts = std::max(1, std::min(pool_.size(), used_));
  auto part = [&](std::int64_t p) {
    double* g = slot(static_cast<int>(p)).r.data();
    for (auto b = static_cast<int>(p); b < used_; b += parts) {
      Slot& s = slot(b);
      trsm_right_upper(chunk, n, rs_.data(), n, s.a.data(), chunk);
      cblas_dsyrk(CblasColMajor, CblasUpper, CblasTrans, n, chunk, 1.0, s.a.data(), chunk,
                  b == p ? 0.0 : 1.0, g, n);
    }
  };
  if (parts > 1) {
    pool_.parallel_for(parts, [&](std::int64_t p, int) { part(p); });
  } else {
    ScopedBlasThreads all(threads_);
    part(0);
  }
  mark("trsm+gram");

  // 3. G = sum of the partitions' Grams (upper triangle) = R_c^T R_c, and the check.
  bool ok = false;
  {
    ScopedBlasThreads all(threads_);
    for (std::int64_t j = 0; j < nl; ++j) {
      double* gj = chol_.data() + j * nl;
      std::copy(slot(0).r.data() + j * nl, slot(0).r.data() + j * nl + j + 1, gj);
      for (int p = 1; p < parts; ++p) {
        const double* pj = slot(p).r.data() + j * nl;
        for (std::int64_t i = 0; i <= j; ++i) gj[i] += pj[i];
      }
    }
    const lapack_int info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'U', n, chol_.data(), n);
    ok = cholesky_spread(chol_.data(), nl, info) < cfg_.sketch_diag_ratio;
    if (ok) {
      // R = R_c R_s into slot(0).r.
      double* r = slot(0).r.data();
      std::copy(rs_.begin(), rs_.end(), r);
      cblas_dtrmm(CblasColMajor, CblasLeft, CblasUpper, CblasNoTrans, CblasNonUnit, n, n, 1.0,
                  chol_.data(), n, r, n);
    }
  }
  mark("R_c");
  if (ok) return true;
  // 4. The check failed: Householder QR of every preconditioned block (finish() goes on).
  run_level(used_,
            [&](std::int64_t i, Work& w) { householder_leaf(slot(static_cast<int>(i)), w); });
  return false;
}

void CpuTsqr::svd_of_r(const double* r) {
  const auto n = static_cast<lapack_int>(cfg_.n);
  const std::int64_t nl = cfg_.n;
  // svd_in_ = triu(R).
  for (std::int64_t j = 0; j < nl; ++j) {
    std::copy(r + j * nl, r + j * nl + j + 1, svd_in_.data() + j * nl);
    std::fill(svd_in_.data() + j * nl + j + 1, svd_in_.data() + (j + 1) * nl, 0.0);
  }
  if (cfg_.cpu_svd == "auto") {
    // R^T R = V L V^T (divide and conquer). When cond(R) <= 100: S = sqrt(L), U_R = R V S^-1,
    // accurate to ~cond(R)^2 eps. Otherwise dgesdd on R itself.
    std::vector<double>& g = vt_;  // scratch for G and its eigenvectors
    cblas_dsyrk(CblasColMajor, CblasUpper, CblasTrans, n, n, 1.0, svd_in_.data(), n, 0.0, g.data(),
                n);
    SB_LAPACK_CHECK(
        LAPACKE_dsyevd_work(LAPACK_COL_MAJOR, 'V', 'U', n, g.data(), n, eig_.data(),
                            syevd_work_.data(), static_cast<lapack_int>(syevd_work_.size()),
                            syevd_iwork_.data(), static_cast<lapack_int>(syevd_iwork_.size())));
    const double lmin = eig_.front(), lmax = eig_.back();
    if (lmax > 0 && lmin >= kGramRatio * lmax) {
      // V (descending) into gesdd_work_'s first n*n doubles, S, then U_R = R V / S.
      std::vector<double>& v = gesdd_work_;
      if (v.size() < static_cast<std::size_t>(nl * nl)) v.resize(static_cast<std::size_t>(nl * nl));
      for (std::int64_t i = 0; i < nl; ++i) {
        const std::int64_t src = nl - 1 - i;
        sigma_[static_cast<std::size_t>(i)] = std::sqrt(eig_[static_cast<std::size_t>(src)]);
        std::copy(g.data() + src * nl, g.data() + (src + 1) * nl, v.data() + i * nl);
      }
      cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, svd_in_.data(), n,
                  v.data(), n, 0.0, x_top_.data(), n);
      for (std::int64_t j = 0; j < nl; ++j) {
        const double inv = 1.0 / sigma_[static_cast<std::size_t>(j)];
        for (std::int64_t i = 0; i < nl; ++i) x_top_[static_cast<std::size_t>(i + j * nl)] *= inv;
      }
      for (std::int64_t j = 0; j < nl; ++j)  // V^T
        for (std::int64_t i = 0; i < nl; ++i)
          vt_[static_cast<std::size_t>(i + j * nl)] = v[static_cast<std::size_t>(j + i * nl)];
      svd_routine_ = "gram";
      return;
    }
  }
  SB_LAPACK_CHECK(LAPACKE_dgesdd_work(
      LAPACK_COL_MAJOR, 'S', n, n, svd_in_.data(), n, sigma_.data(), x_top_.data(), n, vt_.data(),
      n, gesdd_work_.data(), static_cast<lapack_int>(gesdd_work_.size()), gesdd_iwork_.data()));
  svd_routine_ = "gesdd";
}

std::vector<double> CpuTsqr::validate() {
  pool_.rethrow();
  const std::int64_t n = cfg_.n;
  const std::int64_t chunk = cfg_.chunk;
  const auto nn = static_cast<std::size_t>(n * n);
  std::vector<double> sigma = sigma_;
  std::vector<double> vt = vt_;
  sigma.resize(static_cast<std::size_t>(n));
  vt.resize(nn);
  // S and V^T from the root to every worker (untimed).
  SB_MPI_CHECK(MPI_Bcast(sigma.data(), static_cast<int>(n), MPI_DOUBLE, 0, comm_));
  SB_MPI_CHECK(MPI_Bcast(vt.data(), static_cast<int>(nn), MPI_DOUBLE, 0, comm_));

  ScopedBlasThreads all(threads_);
  // sums = {residual_sq, a_sq, G (n x n)} with G = sum U_i^T U_i.
  std::vector<double> sums(2 + nn, 0.0);
  double* g = sums.data() + 2;
  std::vector<double> a(static_cast<std::size_t>(chunk * n));
  std::vector<double> us(static_cast<std::size_t>(chunk * n));
  for (int i = 0; i < used_; ++i) {
    const Slot& s = slot(i);
    generate_block(cfg_, scales_.data(), s.block, a.data());
    double a_sq = 0;
    for (double v : a) a_sq += v * v;
    cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, static_cast<int>(n), static_cast<int>(n),
                static_cast<int>(chunk), 1.0, s.u.data(), static_cast<int>(chunk), s.u.data(),
                static_cast<int>(chunk), 1.0, g, static_cast<int>(n));
    for (std::int64_t j = 0; j < n; ++j) {
      const double sj = sigma[static_cast<std::size_t>(j)];
      for (std::int64_t r = 0; r < chunk; ++r) us[r + j * chunk] = s.u[r + j * chunk] * sj;
    }
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(chunk),
                static_cast<int>(n), static_cast<int>(n), -1.0, us.data(), static_cast<int>(chunk),
                vt.data(), static_cast<int>(n), 1.0, a.data(), static_cast<int>(chunk));
    double r_sq = 0;
    for (double v : a) r_sq += v * v;
    sums[0] += r_sq;
    sums[1] += a_sq;
  }
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
