// A collective's size sweep on CPU workers, over MPI (worker_cpu.hpp). Per size: one call whose
// output is checked element by element (nccl-tests -c; it also warms the size up), then
// `iters` calls timed from a barrier to the last one's return (nccl-tests' host timer).
#include <cstring>
#include <limits>
#include <vector>

#include "comms/payload.hpp"
#include "comms/repeat_worker.hpp"
#include "comms/sweep.hpp"
#include "comms/worker_cpu.hpp"
#include "scalebench/clock.hpp"

namespace sb::comms {
namespace {

class SweepWorkerCpu final : public RepeatWorker {
 public:
  SweepWorkerCpu(const Config& cfg, const CaseEnv& env)
      : cfg_(cfg), env_(env), coll_(*cfg.collective), sizes_(sweep_sizes(cfg, env.size)) {
    const BufferSizes b = buffer_sizes(sizes_);
    send_.resize(static_cast<std::size_t>(b.send));
    recv_.resize(static_cast<std::size_t>(b.recv));
    fill_payload(cfg_.seed, env_.rank, send_.data(), b.send);
  }

  std::vector<double> finish_repeat() override {
    std::vector<double> out(kSweepHeaderWords, 0.0);  // no nominal rate for MPI links
    for (const SweepSize& s : sizes_) {
      const Layout& l = s.layout;
      Wrong wrong;
      {
        ScopedPhase check(times_, Phase::compute);
        // Every output element starts as NaN, so one the call never wrote is counted wrong.
        std::fill(recv_.begin(), recv_.begin() + l.recv, std::numeric_limits<float>::quiet_NaN());
      }
      {
        ScopedPhase comm(times_, Phase::communicate);
        coll_.run_mpi(send_.data(), recv_.data(), l, env_.comm);
      }
      {
        ScopedPhase check(times_, Phase::compute);
        wrong = count_wrong(coll_.expected, cfg_.seed, env_.rank, env_.size, l.count, kRoot,
                            recv_.data(), l.recv);
      }
      double seconds = 0;
      {
        ScopedPhase comm(times_, Phase::communicate);
        SB_MPI_CHECK(MPI_Barrier(env_.comm));
        const double t0 = now();
        for (int it = 0; it < cfg_.iters; ++it)
          coll_.run_mpi(send_.data(), recv_.data(), l, env_.comm);
        seconds = (now() - t0) / cfg_.iters;
      }
      out.insert(out.end(), {static_cast<double>(l.bytes), seconds,
                             static_cast<double>(wrong.count), static_cast<double>(wrong.first)});
    }
    return out;
  }

 private:
  Config cfg_;
  CaseEnv env_;
  const Collective& coll_;
  std::vector<SweepSize> sizes_;
  std::vector<float> send_;
  std::vector<float> recv_;
};

}  // namespace

std::unique_ptr<WorkerCase> make_sweep_worker_cpu(const Config& cfg, const CaseEnv& env) {
  return std::make_unique<SweepWorkerCpu>(cfg, env);
}

}  // namespace sb::comms
