// The pair matrix on CPU workers, over MPI (worker_cpu.hpp). Per step of the schedule: a
// barrier, then the sender sends `iters` messages of pair_bytes and the receiver receives
// them (each times its side), then kLatencyIters ping-pongs of 8 bytes (osu_latency's half
// round trip). The receiver checks the last message against the sender's payload.
#include <cmath>
#include <limits>
#include <vector>

#include "comms/link_discovery.hpp"
#include "comms/pair_partial.hpp"
#include "comms/pair_schedule.hpp"
#include "comms/payload.hpp"
#include "comms/repeat_worker.hpp"
#include "comms/worker_cpu.hpp"
#include "scalebench/clock.hpp"

namespace sb::comms {
namespace {

constexpr int kTagBandwidth = 71;
constexpr int kTagLatency = 72;

class PairsWorkerCpu final : public RepeatWorker {
 public:
  PairsWorkerCpu(const Config& cfg, const CaseEnv& env)
      : cfg_(cfg),
        env_(env),
        count_(cfg.pair_bytes / 4),
        steps_(pair_steps(env.size, cfg.schedule)),
        send_(static_cast<std::size_t>(count_)),
        recv_(static_cast<std::size_t>(count_)) {
    report_.id = {env.host, -1};
    const Peers peers = discover_peers(report_.id, env.rank, env.comm, /*gpu=*/false);
    report_.rows.resize(static_cast<std::size_t>(env.size));
    for (int j = 0; j < env.size; ++j) {
      report_.rows[static_cast<std::size_t>(j)].link = peers.links[static_cast<std::size_t>(j)];
      report_.rows[static_cast<std::size_t>(j)].transport = Transport::mpi;
    }
    fill_payload(cfg.seed, env.rank, send_.data(), count_);
  }

  std::vector<double> finish_repeat() override {
    for (auto& row : report_.rows) row.send_s = row.latency_s = row.recv_s = row.recv_wrong = 0;
    for (const Step& step : steps_) {
      const Transfer* t = transfer_of(step, env_.rank);
      if (t != nullptr && t->dst == env_.rank)
        std::fill(recv_.begin(), recv_.end(), std::numeric_limits<float>::quiet_NaN());
      SB_MPI_CHECK(MPI_Barrier(env_.comm));
      if (t == nullptr) continue;
      if (t->src == env_.rank) {
        send_to(t->dst, report_.rows[static_cast<std::size_t>(t->dst)]);
      } else {
        receive_from(t->src, report_.rows[static_cast<std::size_t>(t->src)]);
      }
    }
    return encode_pairs(report_);
  }

 private:
  void send_to(int dst, PairRow& row) {
    ScopedPhase comm(times_, Phase::communicate);
    const int n = static_cast<int>(count_);
    double t0 = now();
    for (int it = 0; it < cfg_.iters; ++it)
      SB_MPI_CHECK(MPI_Send(send_.data(), n, MPI_FLOAT, dst, kTagBandwidth, env_.comm));
    row.send_s = (now() - t0) / cfg_.iters;
    float ping[2] = {0, 0};
    t0 = now();
    for (int it = 0; it < kLatencyIters; ++it) {
      SB_MPI_CHECK(MPI_Send(ping, 2, MPI_FLOAT, dst, kTagLatency, env_.comm));
      SB_MPI_CHECK(MPI_Recv(ping, 2, MPI_FLOAT, dst, kTagLatency, env_.comm, MPI_STATUS_IGNORE));
    }
    row.latency_s = (now() - t0) / (2.0 * kLatencyIters);
  }

  void receive_from(int src, PairRow& row) {
    transfers_from(src, row);
    ScopedPhase check(times_, Phase::compute);
    row.recv_wrong = static_cast<double>(
        count_wrong(kExpectCopy, cfg_.seed, env_.rank, env_.size, count_, src, recv_.data(), count_)
            .count);
  }

  void transfers_from(int src, PairRow& row) {
    ScopedPhase comm(times_, Phase::communicate);
    const int n = static_cast<int>(count_);
    const double t0 = now();
    for (int it = 0; it < cfg_.iters; ++it)
      SB_MPI_CHECK(
          MPI_Recv(recv_.data(), n, MPI_FLOAT, src, kTagBandwidth, env_.comm, MPI_STATUS_IGNORE));
    row.recv_s = (now() - t0) / cfg_.iters;
    float pong[2] = {0, 0};
    for (int it = 0; it < kLatencyIters; ++it) {
      SB_MPI_CHECK(MPI_Recv(pong, 2, MPI_FLOAT, src, kTagLatency, env_.comm, MPI_STATUS_IGNORE));
      SB_MPI_CHECK(MPI_Send(pong, 2, MPI_FLOAT, src, kTagLatency, env_.comm));
    }
  }

  Config cfg_;
  CaseEnv env_;
  std::int64_t count_;  ///< float32 elements of one bandwidth transfer
  std::vector<Step> steps_;
  std::vector<float> send_;
  std::vector<float> recv_;
  PairReport report_;
};

}  // namespace

std::unique_ptr<WorkerCase> make_pairs_worker_cpu(const Config& cfg, const CaseEnv& env) {
  return std::make_unique<PairsWorkerCpu>(cfg, env);
}

}  // namespace sb::comms
