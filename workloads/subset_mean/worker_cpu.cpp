// subset-mean on the CPU: fused block kernel and the worker.
#include "subset_mean/worker_cpu.hpp"

#include <algorithm>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "scalebench/clock.hpp"
#include "scalebench/error.hpp"
#include "scalebench/philox.hpp"

namespace sb::subset_mean {
namespace {

/// Pairwise sum of x[0], x[stride], ... (n terms): error grows like log n, order fixed.
double pairwise(const double* x, std::int64_t n, std::int64_t stride) {
  if (n <= 16) {
    double s = 0;
    for (std::int64_t i = 0; i < n; ++i) s += x[i * stride];
    return s;
  }
  const std::int64_t h = n / 2;
  return pairwise(x, h, stride) + pairwise(x + h * stride, n - h, stride);
}

}  // namespace

BlockSums block_sums(const Config& cfg, std::int64_t task, const data::simd::Kernels& kernels,
                     int threads, double* scratch) {
  const std::int64_t r0 = cfg.row0(task);
  const std::int64_t c0 = cfg.col0(task);
  const std::int64_t rows = cfg.chunk;
  const std::size_t blocks = static_cast<std::size_t>(cfg.chunk / 2);
  const auto sums = kernels.normal_sums;
  const auto total = kernels.normal_pair_total;
  // Rows r0 + r with r even are the even rows (r0 is a multiple of the even chunk): they need
  // the sum of z0 (their even columns, the subset) and of z1; odd rows only z0 + z1.
  // scratch[2r] = subset part of row r (0 for odd rows), scratch[2r + 1] = the rest of its sum.
  // Dynamic: a thread that loses its core for a while (shared nodes) leaves its rows to the
  // others instead of stalling the barrier; the result does not depend on who did which row.
#pragma omp parallel for num_threads(std::max(threads, 1)) schedule(dynamic, 8)
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::uint64_t first = cfg.philox_block(r0 + r, c0);
    if (r % 2 == 0) {
      const data::simd::NormalSums s = sums(cfg.seed, kStream, first, blocks);
      scratch[2 * r] = s.z0;
      scratch[2 * r + 1] = s.z1;
    } else {
      scratch[2 * r] = 0;
      scratch[2 * r + 1] = total(cfg.seed, kStream, first, blocks);
    }
  }
  BlockSums out;
  out.subset = pairwise(scratch, rows / 2, 4);
  out.full = pairwise(scratch, 2 * rows, 1);
  return out;
}

BlockSums reference_block_sums(const Config& cfg, std::int64_t task) {
  const std::int64_t r0 = cfg.row0(task);
  const std::int64_t c0 = cfg.col0(task);
  BlockSums out;
  for (std::int64_t i = r0; i < r0 + cfg.chunk; ++i) {
    for (std::int64_t j = c0; j < c0 + cfg.chunk; ++j) {
      const std::uint64_t e = static_cast<std::uint64_t>(i) * static_cast<std::uint64_t>(cfg.n) +
                              static_cast<std::uint64_t>(j);
      const double z = data::normal(cfg.seed, e, kStream);
      out.full += z;
      if (i % 2 == 0 && j % 2 == 0) out.subset += z;
    }
  }
  return out;
}

namespace {

class CpuWorker final : public WorkerCase {
 public:
  CpuWorker(const CaseSpec& spec, const CaseEnv& env)
      : cfg_(parse(spec.params)),
        threads_(std::max(env.threads, 1)),
        kernels_(data::simd::best_kernels(cfg_.simd)),
        scratch_(static_cast<std::size_t>(2 * cfg_.chunk)) {}

  void begin_repeat() override {
    done_.clear();
    times_ = {};
    t0_ = now();
  }

  void submit(std::int64_t task) override {
    if (task < 0 || task >= cfg_.tasks)
      throw Error(fmt::format("subset-mean: task {} out of range (0..{})", task, cfg_.tasks - 1));
    const double start = now();
    const BlockSums s = block_sums(cfg_, task, kernels_, threads_, scratch_.data());
    const double end = now();
    times_.compute += end - start;
    TaskOutcome out;
    out.task = task;
    out.partial = {s.subset, s.full};
    out.start = start - t0_;
    out.end = end - t0_;
    out.bytes = 8 * cfg_.chunk * cfg_.chunk;
    out.phase = Phase::compute;
    done_.push_back(std::move(out));
  }

  [[nodiscard]] std::size_t in_flight() const override { return done_.size(); }

  std::optional<TaskOutcome> poll(bool /*wait*/) override {
    if (done_.empty()) return std::nullopt;
    TaskOutcome out = std::move(done_.front());
    done_.pop_front();
    return out;
  }

  [[nodiscard]] PhaseTimes phase_times() const override { return times_; }

 private:
  Config cfg_;
  int threads_;
  const data::simd::Kernels& kernels_;
  std::vector<double> scratch_;
  std::deque<TaskOutcome> done_;
  PhaseTimes times_;
  double t0_ = 0;
};

}  // namespace

std::unique_ptr<WorkerCase> make_cpu_worker(const CaseSpec& spec, const CaseEnv& env) {
  return std::make_unique<CpuWorker>(spec, env);
}

}  // namespace sb::subset_mean
