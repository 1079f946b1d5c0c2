#include "svd/tsqr_cpu.hpp"

#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "scalebench/clock.hpp"
#include "scalebench/error.hpp"
#include "svd/blas_threads.hpp"
#include "svd/lapack_check.hpp"
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
};

CpuTsqr::CpuTsqr(const Config& cfg, int threads, MPI_Comm comm, std::int64_t expected_blocks)
    : cfg_(cfg),
      scales_(column_scales(cfg)),
      threads_(std::max(1, threads)),
      comm_(comm),
      pool_(std::max(1, threads)) {
  SB_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  SB_MPI_CHECK(MPI_Comm_size(comm_, &size_));
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
    work_.push_back(std::move(w));
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
  set_blas_threads(1);  // pool threads call BLAS single-threaded
}

void CpuTsqr::submit(std::int64_t block, std::function<void(double, double)> done) {
  SB_EXPECTS(used_ < static_cast<int>(slots_.size()),
             "svd: a worker was handed more blocks than the case has");
  Slot& s = slot(used_++);
  s.block = block;
  pool_.post([this, &s, done = std::move(done)](int thread) {
    double g = 0, c = 0;
    factor(s, *work_[static_cast<std::size_t>(thread)], g, c);
    done(g, c);
  });
}

void CpuTsqr::factor(Slot& s, Work& w, double& generate_s, double& compute_s) const {
  const double t0 = now();
  generate_block(cfg_, scales_.data(), s.block, s.a.data());
  const double t1 = now();
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
  generate_s = t1 - t0;
  compute_s = now() - t1;
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

void CpuTsqr::finish(PhaseTimes& times) {
  pool_.rethrow();
  const double t_start = now();
  double comm_s = 0;
  const auto n = static_cast<lapack_int>(cfg_.n);
  const auto chunk = static_cast<lapack_int>(cfg_.chunk);
  const auto nn = static_cast<std::size_t>(cfg_.n * cfg_.n);
  const int nb = nb_;

  // 1. Merge this worker's R factors pairwise (node a absorbs node b; b's r becomes V).
  const auto levels = local_levels(used_);
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
    if (rank_ == 0) svd_of_r(my_r);

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

  // 5. Down this worker's tree, then U_i = Q_i [X_i; 0] for every block.
  if (used_ > 0) {
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
  times.communicate += comm_s;
  times.compute += now() - t_start - comm_s;
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
