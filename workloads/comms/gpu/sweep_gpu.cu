// A collective's size sweep on GPU workers, over the case's NCCL communicator (worker.hpp).
// Per size: the output is set to NaN, one call is checked element by element on the GPU
// (nccl-tests -c; it also warms the size up), then `iters` calls are timed on the host from a
// barrier to the stream's end (nccl-tests' timer). Ranks are NCCL's: the payloads and the
// outputs' layout follow the communicator's order.
#include <mpi.h>

#include <string>
#include <vector>

#include "comms/gpu/device_buffer.cuh"
#include "comms/gpu/identity.hpp"
#include "comms/gpu/payload.cuh"
#include "comms/link_discovery.hpp"
#include "comms/repeat_worker.hpp"
#include "comms/sweep.hpp"
#include "comms/worker_gpu.hpp"
#include "scalebench/clock.hpp"
#include "scalebench/gpu_context.cuh"

namespace sb::comms {
namespace {

class SweepWorkerGpu final : public RepeatWorker {
 public:
  SweepWorkerGpu(const Config& cfg, const CaseEnv& env)
      : cfg_(cfg), env_(env), ctx_(*env.gpu), coll_(*cfg.collective) {
    if (ctx_.nccl == nullptr || ctx_.nccl_size != env.size)
      throw Error("comms: the case has " + std::to_string(env.size) +
                  " GPU workers and the NCCL communicator " +
                  std::to_string(ctx_.nccl == nullptr ? 0 : ctx_.nccl_size));
    sizes_ = sweep_sizes(cfg, ctx_.nccl_size);
    const Peers peers = discover_peers(gpu::identity(env), env.rank, env.comm, /*gpu=*/true);
    ceiling_ = gpu::link_ceiling(env, peers.links);
    const BufferSizes b = buffer_sizes(sizes_);
    send_ = gpu::DeviceBuffer(b.send);
    recv_ = gpu::DeviceBuffer(b.recv);
    gpu::fill_payload(cfg.seed, ctx_.nccl_rank, send_.get(), b.send, ctx_.stream);
    SB_CUDA_CHECK(cudaStreamSynchronize(ctx_.stream));
  }

  std::vector<double> finish_repeat() override {
    std::vector<double> out = {ceiling_.bytes_per_s, static_cast<double>(ceiling_.nvlinks)};
    const cudaStream_t stream = ctx_.stream;
    for (const SweepSize& s : sizes_) {
      const Layout& l = s.layout;
      Wrong wrong;
      {
        ScopedPhase check(times_, Phase::compute);
        SB_CUDA_CHECK(
            cudaMemsetAsync(recv_.get(), 0xFF, static_cast<std::size_t>(l.recv) * 4, stream));
        coll_.run_nccl(send_.get(), recv_.get(), l, ctx_.nccl, stream);
        wrong = counter_.count(coll_.expected, cfg_.seed, ctx_.nccl_rank, ctx_.nccl_size, l.count,
                               kRoot, recv_.get(), l.recv, stream);
      }
      double seconds = 0;
      {
        ScopedPhase comm(times_, Phase::communicate);
        SB_MPI_CHECK(MPI_Barrier(env_.comm));
        const double t0 = now();
        for (int it = 0; it < cfg_.iters; ++it)
          coll_.run_nccl(send_.get(), recv_.get(), l, ctx_.nccl, stream);
        SB_CUDA_CHECK(cudaStreamSynchronize(stream));
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
  GpuContext& ctx_;
  const Collective& coll_;
  std::vector<SweepSize> sizes_;
  gpu::LinkCeiling ceiling_;
  gpu::DeviceBuffer send_;
  gpu::DeviceBuffer recv_;
  gpu::WrongCounter counter_;
};

}  // namespace

std::unique_ptr<WorkerCase> make_sweep_worker_gpu(const Config& cfg, const CaseEnv& env) {
  return std::make_unique<SweepWorkerGpu>(cfg, env);
}

}  // namespace sb::comms
