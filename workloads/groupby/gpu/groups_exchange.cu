// The groups exchange of a multi-GPU by-key case (groups_exchange.cuh).
#include "groupby/gpu/groups_exchange.cuh"

#include <mpi.h>

#include <cstdio>

#include "scalebench/clock.hpp"
#include "scalebench/error.hpp"
#include "scalebench/gpu_error.cuh"

namespace sb::groupby::gpu {

GroupsExchange::GroupsExchange(const ExchangeEnv& e, OwnedTable owner, std::int64_t share)
    : Exchange(e, std::move(owner)) {
  connect_peers(share);
}

void GroupsExchange::connect_peers(std::int64_t share) {
  // NCCL connects a pair's channels when a send first needs them, and a bigger message needs
  // more: without this, whichever timed repeat first sends a peer more records than before
  // took 0.26 s (seed by-key on four GPUs, tools/gpu-campaign.sh sizes). The receive buffer
  // would likewise grow (cudaMalloc) inside a timed repeat.
  const CaseEnv& env = *e_.env;
  const auto W = static_cast<std::size_t>(width_);
  const std::size_t bytes = sizeof(std::uint64_t) * W * static_cast<std::size_t>(share) *
                            static_cast<std::size_t>(env.size);
  std::size_t free_b = 0, total_b = 0;
  SB_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  // Where it does not fit comfortably the buffer grows as repeats need it (exchange_records).
  int fits = bytes < free_b / 4 ? 1 : 0;
  SB_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &fits, 1, MPI_INT, MPI_MIN, env.comm));
  if (fits == 0) return;
  SB_CUDA_CHECK(cudaMalloc(&recv_, bytes));
  recv_cap_ = share * env.size;
  const std::vector<int>& nccl_peer = *e_.nccl_peer;
  // Region p of the buffer receives from worker p; this worker's own region is what it sends.
  const std::size_t region = W * static_cast<std::size_t>(share);
  GpuTransport& tr = *e_.transport;
  tr.group_start();
  for (int p = 0; p < env.size; ++p) {
    if (p == env.rank) continue;
    tr.send(recv_ + region * env.rank, region, ncclUint64, nccl_peer[p], stream_);
    tr.recv(recv_ + region * p, region, ncclUint64, nccl_peer[p], stream_);
  }
  tr.group_end();
  SB_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void GroupsExchange::finish(ShuffleStats& stats) {
  const int size = e_.env->size;
  const double t0 = now();
  // Local groups grouped by owner: the send buffer of the all-to-all.
  std::vector<long long> counts(static_cast<std::size_t>(size)), offsets(counts.size());
  const std::int64_t total =
      hash_compact(*e_.table, size, *e_.records, counts.data(), offsets.data(), stream_);
  const double t1 = now();
  const std::int64_t rtotal = exchange_records(counts, offsets, total, stats);
  const double t2 = now();
  // The owner's merge: the received records into its share-sized table.
  if (hash_overflowed(*e_.table, stream_))
    throw Error("groupby: the GPU hash table overflowed (internal sizing error)");
  hash_insert_records(owner(), recv_, rtotal, stream_);
  if (!e_.env->trace) return;
  // run --trace: each step's time on this worker (hash_compact and exchange_records wait for
  // their work; the insert is waited for here, which only a traced run does).
  SB_CUDA_CHECK(cudaStreamSynchronize(stream_));
  std::fprintf(stderr,
               "groupby shuffle rank %d (groups): compact %f ms, counts %f ms, records %f ms, "
               "insert %f ms; records out %lld in %lld\n",
               e_.env->rank, (t1 - t0) * 1e3, counts_s_ * 1e3, (t2 - t1 - counts_s_) * 1e3,
               (now() - t2) * 1e3, static_cast<long long>(total), static_cast<long long>(rtotal));
}

}  // namespace sb::groupby::gpu
