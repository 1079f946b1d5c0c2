// The one place that chooses a multi-GPU by-key case's exchange (exchange.cuh): by
// groupby.gpu_shuffle between groups and rows, then by groupby.gpu_exchange between the row
// exchanges.
#include <cmath>
#include <functional>
#include <map>
#include <string>

#include "groupby/gpu/exchange.cuh"
#include "groupby/gpu/groups_exchange.cuh"
#include "groupby/gpu/hash_stage.cuh"
#include "groupby/gpu/nccl_row_exchange.cuh"
#include "groupby/gpu/peer_push_exchange.cuh"
#include "scalebench/error.hpp"
#include "scalebench/gpu_error.cuh"

namespace sb::groupby::gpu {

namespace {

using RowExchangeMaker =
    std::function<std::unique_ptr<Exchange>(const ExchangeEnv&, OwnedTable, const RowShuffle&)>;

/// The row exchanges by groupby.gpu_exchange value.
const std::map<std::string, RowExchangeMaker>& row_exchanges() {
  static const std::map<std::string, RowExchangeMaker> m = {
      {"nccl",
       [](const ExchangeEnv& e, OwnedTable owner, const RowShuffle& plan) {
         return std::make_unique<NcclRowExchange>(e, std::move(owner), plan);
       }},
      {"peer",
       [](const ExchangeEnv& e, OwnedTable owner, const RowShuffle& plan) {
         return std::make_unique<PeerPushExchange>(e, std::move(owner), plan, true);
       }},
      {"auto",
       [](const ExchangeEnv& e, OwnedTable owner, const RowShuffle& plan) {
         return std::make_unique<PeerPushExchange>(e, std::move(owner), plan, false);
       }},
  };
  return m;
}

/// The row shuffle for the owner's table when the case allows it and gpu_shuffle asks for it
/// (auto: the full table is more than twice L2); owners == 0 in the result when the groups travel
/// instead. Throws UsageError when gpu_shuffle=rows cannot be had.
RowShuffle plan_rows(const ExchangeEnv& e, const HashTable& owner) {
  const Config& c = *e.cfg;
  const int size = e.env->size;
  const RowShuffle plan = plan_row_shuffle(owner, size, c.rows);
  const bool wanted = c.gpu_shuffle == "rows" || stage_pays(*e.table, e.ctx->prop);
  std::size_t free_b = 0, total_b = 0;
  SB_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  const std::int64_t share_rows = NcclRowExchange::share_rows(c, size);
  const double packed = (plan.with_y ? 48.0 : 32.0) * static_cast<double>(share_rows);
  const bool fits = plan.owners > 0 && plan.bytes + packed < 0.5 * static_cast<double>(free_b);
  if (wanted && fits) return plan;
  if (c.gpu_shuffle == "rows")
    throw UsageError(
        plan.owners == 0
            ? "groupby: gpu_shuffle=rows does not fit this table's shape (use auto or groups)"
            : "groupby: gpu_shuffle=rows needs more GPU memory than is free (use groups)");
  return RowShuffle{};
}

}  // namespace

std::unique_ptr<Exchange> make_exchange(const ExchangeEnv& e) {
  const Config& c = *e.cfg;
  // The owner's share of the groups (hash partitioning; 8 sigma and 1024 of headroom: an
  // overflow would be caught, not lost).
  const double mean = static_cast<double>(c.max_groups(c.rows)) / e.env->size;
  const auto share = static_cast<std::int64_t>(mean + 8.0 * std::sqrt(mean) + 1024.0);
  OwnedTable owner(make_hash(share, c.def.fields));
  if (c.gpu_shuffle != "groups") {
    const RowShuffle plan = plan_rows(e, owner.get());
    if (plan.owners > 0) {
      // Host-staged transport: the rows travel through the NCCL row exchange's steps (its
      // transfers go through e.transport); the peer exchange's stores have no such form.
      const std::string how = c.comm == GpuTransportKind::mpi_host && c.gpu_exchange == "auto"
                                  ? "nccl"
                                  : c.gpu_exchange;
      const auto it = row_exchanges().find(how);
      if (it == row_exchanges().end())
        throw UsageError("groupby: unknown gpu_exchange '" + c.gpu_exchange + "'");
      return it->second(e, std::move(owner), plan);
    }
  }
  return std::make_unique<GroupsExchange>(e, std::move(owner), share);
}

}  // namespace sb::groupby::gpu
