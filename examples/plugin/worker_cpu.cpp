// tiled-dgemm on the CPU: the data, the blocked panel product and the CPU worker
// (tiled_dgemm.hpp).
#include <algorithm>
#include <deque>
#include <vector>

#include "scalebench/clock.hpp"
#include "scalebench/error.hpp"
#include "tiled_dgemm.hpp"

namespace tiled_dgemm {

void generate_a(const Config& c, std::int64_t row0, std::int64_t rows, double* a, int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t l = 0; l < c.k; ++l) a[r * c.k + l] = a_value(c, row0 + r, l);
}

void generate_b(const Config& c, double* b, int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t l = 0; l < c.k; ++l)
    for (std::int64_t j = 0; j < c.n; ++j) b[l * c.n + j] = b_value(c, l, j);
}

void panel_product(const Config& c, const double* a, std::int64_t rows, const double* b,
                   double* out, int threads) {
  // A block of B (kInner x kCols doubles, 256 KiB) stays in the L2 cache while every row of the
  // panel passes over it; the innermost loop is a vectorised axpy over kCols columns.
  constexpr std::int64_t kCols = 256;
  constexpr std::int64_t kInner = 128;
  const std::int64_t n = c.n;
  const std::int64_t k = c.k;
  std::fill(out, out + rows * n, 0.0);
#pragma omp parallel num_threads(threads)
  for (std::int64_t j0 = 0; j0 < n; j0 += kCols) {
    const std::int64_t cols = std::min(kCols, n - j0);
    for (std::int64_t l0 = 0; l0 < k; l0 += kInner) {
      const std::int64_t l1 = std::min(k, l0 + kInner);
      // Static schedule: each row has the same thread in every block, so no barrier is needed.
#pragma omp for schedule(static) nowait
      for (std::int64_t i = 0; i < rows; ++i) {
        double* __restrict ci = out + i * n + j0;
        const double* ai = a + i * k;
        for (std::int64_t l = l0; l < l1; ++l) {
          const double ail = ai[l];
          const double* __restrict bl = b + l * n + j0;
          for (std::int64_t j = 0; j < cols; ++j) ci[j] += ail * bl[j];
        }
      }
    }
  }
}

namespace {

/// The CPU worker: B made once (untimed), then per task a panel of A (generate phase) and the
/// panel product and its sums (compute phase), synchronously in submit().
class CpuWorker final : public sb::WorkerCase {
 public:
  CpuWorker(const sb::CaseSpec& spec, const sb::CaseEnv& env)
      : c_(parse(spec.params)),
        threads_(env.threads),
        b_(static_cast<std::size_t>(c_.k * c_.n)),
        a_(static_cast<std::size_t>(c_.tile * c_.k)),
        panel_(static_cast<std::size_t>(c_.tile * c_.n)),
        samples_(static_cast<std::size_t>(c_.tasks() * kSamples), 0.0) {
    generate_b(c_, b_.data(), threads_);
  }

  void begin_repeat() override {
    times_ = {};
    done_.clear();
    t0_ = sb::now();
  }

  void submit(std::int64_t task) override {
    SB_EXPECTS(task >= 0 && task < c_.tasks(), "tiled-dgemm: task out of range");
    const std::int64_t rows = c_.rows(task);
    sb::TaskOutcome o;
    o.task = task;
    o.start = sb::now() - t0_;
    {
      sb::ScopedPhase phase(times_, sb::Phase::generate);
      generate_a(c_, c_.row0(task), rows, a_.data(), threads_);
    }
    double sum = 0;
    double squares = 0;
    {
      sb::ScopedPhase phase(times_, sb::Phase::compute);
      panel_product(c_, a_.data(), rows, b_.data(), panel_.data(), threads_);
      if (const std::int64_t again = extra_rows(rows); again > 0)
        panel_product(c_, a_.data(), again, b_.data(), panel_.data(), threads_);
      for (std::int64_t e = 0; e < rows * c_.n; ++e) {
        sum += panel_[static_cast<std::size_t>(e)];
        squares += panel_[static_cast<std::size_t>(e)] * panel_[static_cast<std::size_t>(e)];
      }
    }
    for (int s = 0; s < kSamples; ++s) {
      const Entry at = sample_entry(c_, task, s);
      samples_[static_cast<std::size_t>(task * kSamples + s)] =
          panel_[static_cast<std::size_t>((at.row - c_.row0(task)) * c_.n + at.col)];
    }
    o.end = sb::now() - t0_;
    o.partial = {sum, squares};
    o.bytes = 8 * (rows * c_.k + rows * c_.n);
    done_.push_back(task);
    finished_.push_back(std::move(o));
  }

  [[nodiscard]] std::size_t in_flight() const override { return finished_.size(); }

  std::optional<sb::TaskOutcome> poll(bool) override {
    if (finished_.empty()) return std::nullopt;
    sb::TaskOutcome o = std::move(finished_.front());
    finished_.pop_front();
    return o;
  }

  [[nodiscard]] sb::PhaseTimes phase_times() const override { return times_; }

  std::vector<double> validate() override { return validation_part(c_, done_, samples_, threads_); }

  /// One task ahead: the next one's message arrives while this one computes.
  [[nodiscard]] int prefetch() const override { return 1; }

 private:
  Config c_;
  int threads_;
  std::vector<double> b_;
  std::vector<double> a_;
  std::vector<double> panel_;
  std::vector<double> samples_;     ///< kSamples entries per task, by task
  std::vector<std::int64_t> done_;  ///< tasks of this worker in the current repeat
  std::deque<sb::TaskOutcome> finished_;
  sb::PhaseTimes times_;
  double t0_ = 0;
};

}  // namespace

std::unique_ptr<sb::WorkerCase> make_cpu_worker(const sb::CaseSpec& spec, const sb::CaseEnv& env) {
  return std::make_unique<CpuWorker>(spec, env);
}

}  // namespace tiled_dgemm
