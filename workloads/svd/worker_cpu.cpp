#include "svd/worker_cpu.hpp"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>

#include "scalebench/clock.hpp"
#include "svd/config.hpp"
#include "svd/routines.hpp"
#include "svd/tsqr_cpu.hpp"

namespace sb::svd {

namespace {

class CpuWorker final : public WorkerCase {
 public:
  CpuWorker(const Config& cfg, const CaseEnv& env)
      : cfg_(cfg),
        threads_(std::max(1, env.threads)),
        engine_(cfg, threads_, env.comm, (cfg.blocks() + env.size - 1) / env.size + 1, env.trace) {}
  ~CpuWorker() override = default;

  void begin_repeat() override {
    engine_.begin_repeat();
    std::lock_guard<std::mutex> lock(mutex_);
    done_.clear();
    in_flight_ = 0;
    generate_sum_ = compute_sum_ = 0;
    times_ = {};
    t0_ = now();
  }

  void submit(std::int64_t task) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++in_flight_;
    }
    engine_.submit(task, [this, task](double g, double c) {
      const double end = now() - t0_;
      TaskOutcome out;
      out.task = task;
      out.start = end - g - c;
      out.end = end;
      out.bytes = cfg_.chunk * cfg_.n * static_cast<std::int64_t>(sizeof(double));
      out.phase = Phase::compute;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        generate_sum_ += g;
        compute_sum_ += c;
        done_.push_back(std::move(out));
      }
      ready_.notify_all();
    });
  }

  [[nodiscard]] std::size_t in_flight() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return in_flight_;
  }

  std::optional<TaskOutcome> poll(bool wait) override {
    std::unique_lock<std::mutex> lock(mutex_);
    while (done_.empty()) {
      if (!wait || in_flight_ == 0) return std::nullopt;
      ready_.wait_for(lock, std::chrono::milliseconds(50));
      if (done_.empty()) {
        lock.unlock();
        engine_.pool().rethrow();  // a failed block must not leave us waiting forever
        lock.lock();
      }
    }
    TaskOutcome out = std::move(done_.front());
    done_.pop_front();
    --in_flight_;
    return out;
  }

  std::vector<double> finish_repeat() override {
    // Task phases ran on threads_ threads at once: report their share of wall time.
    {
      std::lock_guard<std::mutex> lock(mutex_);
      times_.generate = generate_sum_ / threads_;
      times_.compute = compute_sum_ / threads_;
    }
    engine_.finish(times_);
    return encode_engine_finish(engine_);
  }

  [[nodiscard]] PhaseTimes phase_times() const override { return times_; }
  std::vector<double> validate() override { return engine_.validate(); }
  [[nodiscard]] int prefetch() const override { return threads_ + 1; }

 private:
  Config cfg_;
  int threads_;
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<TaskOutcome> done_;
  std::size_t in_flight_ = 0;
  double generate_sum_ = 0;
  double compute_sum_ = 0;
  double t0_ = 0;
  PhaseTimes times_;
  CpuTsqr engine_;  ///< last: its pool is joined before the state its callbacks touch goes
};

}  // namespace

std::unique_ptr<WorkerCase> make_cpu_worker(const CaseSpec& spec, const CaseEnv& env) {
  return std::make_unique<CpuWorker>(parse(spec.params), env);
}

}  // namespace sb::svd
