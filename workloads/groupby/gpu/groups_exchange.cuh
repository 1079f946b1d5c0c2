#pragma once
/// @file groups_exchange.cuh
/// The groups exchange of a multi-GPU by-key case (exchange.cuh): every GPU aggregates all its
/// rows into a full table; after the tasks its groups, compacted by owner, travel as records
/// and each owner merges what it receives into its share-sized table.

#include "groupby/gpu/exchange.cuh"

namespace sb::groupby::gpu {

class GroupsExchange final : public Exchange {
 public:
  /// `share`: the most records one owner can hold (its table's sizing). Collective over the
  /// case: sizes the receive buffer for `share` records from every worker and sends that much
  /// to every peer once, untimed (connect_peers), where GPU memory allows.
  GroupsExchange(const ExchangeEnv& e, OwnedTable owner, std::int64_t share);
  [[nodiscard]] bool takes_rows() const override { return false; }
  void finish(ShuffleStats& stats) override;

 private:
  void connect_peers(std::int64_t share);
};

}  // namespace sb::groupby::gpu
