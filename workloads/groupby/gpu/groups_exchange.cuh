#pragma once
/// @file groups_exchange.cuh
/// The groups exchange of a multi-GPU by-key case (exchange.cuh): every GPU aggregates all its
/// rows into a full table; after the tasks its groups, compacted by owner, travel as records
/// and each owner merges what it receives into its share-sized table.

#include "groupby/gpu/exchange.cuh"

namespace sb::groupby::gpu {

class GroupsExchange final : public Exchange {
 public:
  GroupsExchange(const ExchangeEnv& e, OwnedTable owner) : Exchange(e, std::move(owner)) {}
  [[nodiscard]] bool takes_rows() const override { return false; }
  void finish(const std::vector<int>& nccl_peer, ShuffleStats& stats) override;
};

}  // namespace sb::groupby::gpu
