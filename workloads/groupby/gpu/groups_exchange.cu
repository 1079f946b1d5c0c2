// The groups exchange of a multi-GPU by-key case (groups_exchange.cuh).
#include "groupby/gpu/groups_exchange.cuh"

#include "scalebench/error.hpp"

namespace sb::groupby::gpu {

void GroupsExchange::finish(const std::vector<int>& nccl_peer, ShuffleStats& stats) {
  const int size = e_.env->size;
  // Local groups grouped by owner: the send buffer of the all-to-all.
  std::vector<long long> counts(static_cast<std::size_t>(size)), offsets(counts.size());
  const std::int64_t total =
      hash_compact(*e_.table, size, *e_.records, counts.data(), offsets.data(), stream_);
  const std::int64_t rtotal = exchange_records(counts, offsets, total, nccl_peer, stats);
  // The owner's merge: the received records into its share-sized table.
  if (hash_overflowed(*e_.table, stream_))
    throw Error("groupby: the GPU hash table overflowed (internal sizing error)");
  hash_insert_records(owner(), recv_, rtotal, stream_);
}

}  // namespace sb::groupby::gpu
