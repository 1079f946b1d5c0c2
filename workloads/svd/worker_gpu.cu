#include "svd/worker_gpu.hpp"

#include <algorithm>
#include <deque>
#include <utility>

#include "scalebench/error.hpp"
#include "scalebench/gpu_context.cuh"
#include "svd/config.hpp"
#include "svd/routines.hpp"
#include "svd/tsqr_gpu.cuh"

namespace sb::svd {

namespace {

/// Block streams of a worker: enough to overlap the block QRs and the sketch's row slices
/// (bench_svd_gpu bm_engine runs the seed preset with several stream counts).
constexpr int kStreams = 8;

class GpuWorker final : public WorkerCase {
 public:
  GpuWorker(const Config& cfg, const CaseEnv& env)
      : cfg_(cfg),
        engine_(cfg, *env.gpu, env.comm, env.rank, env.size, kStreams, env.trace),
        fair_share_(static_cast<int>((cfg.blocks() + env.size - 1) / std::max(env.size, 1))) {}

  void begin_repeat() override {
    engine_.begin_repeat();
    pending_.clear();
    times_ = {};
  }

  void submit(std::int64_t task) override { pending_.emplace_back(task, engine_.submit(task)); }

  [[nodiscard]] std::size_t in_flight() const override { return pending_.size(); }

  std::optional<TaskOutcome> poll(bool wait) override {
    if (pending_.empty()) return std::nullopt;
    // Oldest first: blocks finish in submission order per stream, nearly so across streams.
    const auto [task, slot] = pending_.front();
    if (wait) {
      engine_.wait(slot);
    } else if (!engine_.ready(slot)) {
      return std::nullopt;
    }
    pending_.pop_front();
    const auto t = engine_.task_times(slot);
    TaskOutcome out;
    out.task = task;
    out.start = t.start;
    out.end = t.end;
    out.bytes = cfg_.chunk * cfg_.n * static_cast<std::int64_t>(sizeof(double));
    out.phase = Phase::compute;
    return out;
  }

  std::vector<double> finish_repeat() override {
    while (!pending_.empty()) (void)poll(true);
    engine_.finish(times_);
    return encode_engine_finish(engine_);
  }

  [[nodiscard]] PhaseTimes phase_times() const override { return times_; }
  std::vector<double> validate() override { return engine_.validate(); }
  /// A worker asks for prefetch() + 1 blocks at first: at most one per stream plus one, and
  /// never more than its share of the blocks. A block's task is only its generation and
  /// sketch; most of its cost (solve, Gram, U) comes in finish_repeat, in proportion to the
  /// blocks a worker owns, so the first request must not exceed the share: one more can hand
  /// the first workers more than their share and leave the last one nearly idle (the large
  /// preset on four GPUs, tools/gpu-campaign.sh). With fewer blocks than workers, one at a time.
  [[nodiscard]] int prefetch() const override {
    return std::clamp(fair_share_ - 1, 0, engine_.streams());
  }

 private:
  Config cfg_;
  GpuTsqr engine_;
  int fair_share_ = 1;  ///< ceil(blocks / workers)
  std::deque<std::pair<std::int64_t, int>> pending_;
  PhaseTimes times_;
};

}  // namespace

std::unique_ptr<WorkerCase> make_gpu_worker(const CaseSpec& spec, const CaseEnv& env) {
  if (env.gpu == nullptr) throw EnvironmentError("svd: GPU worker without a GPU context");
  return std::make_unique<GpuWorker>(parse(spec.params), env);
}

}  // namespace sb::svd
