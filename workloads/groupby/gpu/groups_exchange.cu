// The groups exchange of a multi-GPU by-key case (groups_exchange.cuh).
#include "groupby/gpu/groups_exchange.cuh"

#include <cstdio>

#include "scalebench/clock.hpp"
#include "scalebench/error.hpp"
#include "scalebench/gpu_error.cuh"

namespace sb::groupby::gpu {

void GroupsExchange::finish(const std::vector<int>& nccl_peer, ShuffleStats& stats) {
  const int size = e_.env->size;
  const double t0 = now();
  // Local groups grouped by owner: the send buffer of the all-to-all.
  std::vector<long long> counts(static_cast<std::size_t>(size)), offsets(counts.size());
  const std::int64_t total =
      hash_compact(*e_.table, size, *e_.records, counts.data(), offsets.data(), stream_);
  const double t1 = now();
  const std::int64_t rtotal = exchange_records(counts, offsets, total, nccl_peer, stats);
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
