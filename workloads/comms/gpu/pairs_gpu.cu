// The pair matrix on GPU workers (worker.hpp). A pair of GPUs of one node moves its data by
// cudaMemcpyAsync into the receiver's buffer, mapped into the sender by CUDA IPC (each worker
// sees only its own GPU, so cudaMemcpyPeerAsync cannot name the peer; the copy engines and
// the link are the same); other pairs (across nodes, or where CUDA IPC maps nothing) use
// ncclSend / ncclRecv. Per step: the receiver's buffer is set to NaN, a barrier, `iters`
// transfers of pair_bytes timed on the host to the stream's end, kLatencyIters small ones, a
// barrier, and the receiver checks its buffer against the sender's payload on the GPU.
#include <mpi.h>

#include <cstring>
#include <vector>

#include "comms/gpu/device_buffer.cuh"
#include "comms/gpu/identity.hpp"
#include "comms/gpu/payload.cuh"
#include "comms/link_discovery.hpp"
#include "comms/pair_partial.hpp"
#include "comms/pair_schedule.hpp"
#include "comms/repeat_worker.hpp"
#include "comms/worker_gpu.hpp"
#include "scalebench/clock.hpp"
#include "scalebench/gpu_context.cuh"

namespace sb::comms {
namespace {

class PairsWorkerGpu final : public RepeatWorker {
 public:
  PairsWorkerGpu(const Config& cfg, const CaseEnv& env)
      : cfg_(cfg),
        env_(env),
        ctx_(*env.gpu),
        count_(cfg.pair_bytes / 4),
        steps_(pair_steps(env.size, cfg.schedule)),
        send_(count_),
        landing_(count_),
        ping_(2) {
    report_.id = gpu::identity(env);
    const Peers peers = discover_peers(report_.id, env.rank, env.comm, /*gpu=*/true);
    report_.rows.resize(static_cast<std::size_t>(env.size));
    for (int j = 0; j < env.size; ++j)
      report_.rows[static_cast<std::size_t>(j)].link = peers.links[static_cast<std::size_t>(j)];
    map_nccl_ranks();
    map_peer_buffers(peers);
    gpu::fill_payload(cfg.seed, env.rank, send_.get(), count_, ctx_.stream);
    SB_CUDA_CHECK(cudaMemsetAsync(ping_.get(), 0, 2 * sizeof(float), ctx_.stream));
    SB_CUDA_CHECK(cudaStreamSynchronize(ctx_.stream));
  }

  std::vector<double> finish_repeat() override {
    for (auto& row : report_.rows) row.send_s = row.latency_s = row.recv_s = row.recv_wrong = 0;
    const int me = env_.rank;
    for (const Step& step : steps_) {
      const Transfer* t = transfer_of(step, me);
      const bool receiving = t != nullptr && t->dst == me;
      if (receiving) {
        SB_CUDA_CHECK(cudaMemsetAsync(landing_.get(), 0xFF, static_cast<std::size_t>(count_) * 4,
                                      ctx_.stream));
        SB_CUDA_CHECK(cudaStreamSynchronize(ctx_.stream));
      }
      SB_MPI_CHECK(MPI_Barrier(env_.comm));
      if (t != nullptr) {
        ScopedPhase comm(times_, Phase::communicate);
        if (t->src == me) {
          send_to(t->dst, report_.rows[static_cast<std::size_t>(t->dst)]);
        } else if (transport(t->src, me) == Transport::nccl) {
          receive_from(t->src, report_.rows[static_cast<std::size_t>(t->src)]);
        }
      }
      SB_MPI_CHECK(MPI_Barrier(env_.comm));  // every copy into a receiver's buffer has ended
      if (receiving) {
        ScopedPhase check(times_, Phase::compute);
        report_.rows[static_cast<std::size_t>(t->src)].recv_wrong =
            static_cast<double>(counter_
                                    .count(kExpectCopy, cfg_.seed, me, env_.size, count_, t->src,
                                           landing_.get(), count_, ctx_.stream)
                                    .count);
      }
    }
    return encode_pairs(report_);
  }

 private:
  [[nodiscard]] Transport transport(int src, int dst) const {
    return copy_[static_cast<std::size_t>(src * env_.size + dst)] != 0 ? Transport::copy
                                                                       : Transport::nccl;
  }

  void map_nccl_ranks() {
    nccl_peer_.assign(static_cast<std::size_t>(env_.size), 0);
    int mine = ctx_.nccl_rank;
    SB_MPI_CHECK(MPI_Allgather(&mine, 1, MPI_INT, nccl_peer_.data(), 1, MPI_INT, env_.comm));
    if (ctx_.nccl == nullptr) throw Error("comms: the GPU workers have no NCCL communicator");
  }

  /// Maps the landing buffer of every peer on this node (CUDA IPC); every worker then learns
  /// which ordered pairs copy and which go through NCCL.
  void map_peer_buffers(const Peers& peers) {
    const int n = env_.size;
    cudaIpcMemHandle_t mine{};
    SB_CUDA_CHECK(cudaIpcGetMemHandle(&mine, landing_.get()));
    std::vector<cudaIpcMemHandle_t> all(static_cast<std::size_t>(n));
    SB_MPI_CHECK(
        MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, env_.comm));
    peer_landing_.p.assign(static_cast<std::size_t>(n), nullptr);
    std::vector<int> opened(static_cast<std::size_t>(n), 0);
    for (int j = 0; j < n; ++j) {
      if (j == env_.rank || peers.links[static_cast<std::size_t>(j)].kind == LinkKind::network)
        continue;
      void* p = nullptr;
      if (cudaIpcOpenMemHandle(&p, all[static_cast<std::size_t>(j)],
                               cudaIpcMemLazyEnablePeerAccess) == cudaSuccess) {
        peer_landing_.p[static_cast<std::size_t>(j)] = p;
        opened[static_cast<std::size_t>(j)] = 1;
      } else {
        (void)cudaGetLastError();
      }
    }
    copy_.assign(static_cast<std::size_t>(n * n), 0);
    SB_MPI_CHECK(MPI_Allgather(opened.data(), n, MPI_INT, copy_.data(), n, MPI_INT, env_.comm));
    for (int j = 0; j < n; ++j)
      report_.rows[static_cast<std::size_t>(j)].transport = transport(env_.rank, j);
  }

  void send_to(int dst, PairRow& row) {
    const cudaStream_t s = ctx_.stream;
    const auto bytes = static_cast<std::size_t>(count_) * 4;
    double t0 = now();
    if (transport(env_.rank, dst) == Transport::copy) {
      void* peer = peer_landing_.p[static_cast<std::size_t>(dst)];
      for (int it = 0; it < cfg_.iters; ++it)
        SB_CUDA_CHECK(cudaMemcpyAsync(peer, send_.get(), bytes, cudaMemcpyDefault, s));
      SB_CUDA_CHECK(cudaStreamSynchronize(s));
      row.send_s = (now() - t0) / cfg_.iters;
      // One-way: each small copy waited for, as a dependent transfer would be.
      t0 = now();
      for (int it = 0; it < kLatencyIters; ++it) {
        SB_CUDA_CHECK(cudaMemcpyAsync(peer, send_.get(), kLatencyBytes, cudaMemcpyDefault, s));
        SB_CUDA_CHECK(cudaStreamSynchronize(s));
      }
      row.latency_s = (now() - t0) / kLatencyIters;
      return;
    }
    const int peer = nccl_peer_[static_cast<std::size_t>(dst)];
    for (int it = 0; it < cfg_.iters; ++it)
      SB_NCCL_CHECK(
          ncclSend(send_.get(), static_cast<std::size_t>(count_), ncclFloat32, peer, ctx_.nccl, s));
    SB_CUDA_CHECK(cudaStreamSynchronize(s));
    row.send_s = (now() - t0) / cfg_.iters;
    t0 = now();
    for (int it = 0; it < kLatencyIters; ++it) {  // ping-pong; the half round trip
      SB_NCCL_CHECK(ncclSend(ping_.get(), 2, ncclFloat32, peer, ctx_.nccl, s));
      SB_NCCL_CHECK(ncclRecv(ping_.get(), 2, ncclFloat32, peer, ctx_.nccl, s));
    }
    SB_CUDA_CHECK(cudaStreamSynchronize(s));
    row.latency_s = (now() - t0) / (2.0 * kLatencyIters);
  }

  void receive_from(int src, PairRow& row) {
    const cudaStream_t s = ctx_.stream;
    const int peer = nccl_peer_[static_cast<std::size_t>(src)];
    const double t0 = now();
    for (int it = 0; it < cfg_.iters; ++it)
      SB_NCCL_CHECK(ncclRecv(landing_.get(), static_cast<std::size_t>(count_), ncclFloat32, peer,
                             ctx_.nccl, s));
    SB_CUDA_CHECK(cudaStreamSynchronize(s));
    row.recv_s = (now() - t0) / cfg_.iters;
    for (int it = 0; it < kLatencyIters; ++it) {
      SB_NCCL_CHECK(ncclRecv(ping_.get(), 2, ncclFloat32, peer, ctx_.nccl, s));
      SB_NCCL_CHECK(ncclSend(ping_.get(), 2, ncclFloat32, peer, ctx_.nccl, s));
    }
    SB_CUDA_CHECK(cudaStreamSynchronize(s));
  }

  Config cfg_;
  CaseEnv env_;
  GpuContext& ctx_;
  std::int64_t count_;  ///< float32 elements of one bandwidth transfer
  std::vector<Step> steps_;
  gpu::DeviceBuffer send_;
  gpu::DeviceBuffer landing_;
  gpu::DeviceBuffer ping_;  ///< the latency transfers' 8 bytes
  gpu::WrongCounter counter_;
  std::vector<int> nccl_peer_;  ///< NCCL rank of each case rank
  /// Landing buffers of this node's peers, mapped here (closed with the worker).
  struct Mapped {
    std::vector<void*> p;
    Mapped() = default;
    Mapped(const Mapped&) = delete;
    Mapped& operator=(const Mapped&) = delete;
    ~Mapped() {
      for (void* q : p)
        if (q != nullptr) (void)cudaIpcCloseMemHandle(q);
    }
  } peer_landing_;
  std::vector<int> copy_;  ///< [src * n + dst]: 1 when src maps dst's buffer
  PairReport report_;
};

}  // namespace

std::unique_ptr<WorkerCase> make_pairs_worker_gpu(const Config& cfg, const CaseEnv& env) {
  return std::make_unique<PairsWorkerGpu>(cfg, env);
}

}  // namespace sb::comms
