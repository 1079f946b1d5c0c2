#pragma once
/// @file collective.hpp
/// The collectives of the sweep, one descriptor each (as nccl-tests' struct testColl): element
/// counts of a nominal size, the bus-bandwidth factor, and the MPI call. One file per
/// collective in collectives/; the list in collective_list.cpp; the NCCL calls in
/// gpu/nccl_collectives.cu.
///
/// Sizes follow nccl-tests (doc/PERFORMANCE.md): S is the per-rank buffer for all-reduce and
/// broadcast, the gathered total for all-gather, the reduced input for reduce-scatter, and a
/// rank's whole send buffer for all-to-all. algbw = S / t; busbw = algbw * factor(n).

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace sb::comms {

/// The collectives, in sweep order (op=all).
enum class Op : int { all_reduce, all_gather, reduce_scatter, all_to_all, broadcast };

/// Element counts (float32) of one size on n ranks.
struct Layout {
  std::int64_t send = 0;   ///< elements in each rank's send buffer
  std::int64_t recv = 0;   ///< elements in each rank's receive buffer
  std::int64_t count = 0;  ///< the count argument of the call (per rank for gather/scatter/a2a)
  std::int64_t bytes = 0;  ///< S, the size bandwidths are computed from (4 bytes per element)
};

/// The rank the broadcast starts from.
inline constexpr int kBroadcastRoot = 0;

struct Collective {
  Op op;
  std::string_view name;  ///< the `op` parameter's value
  /// Counts for a nominal size of `bytes` on `ranks` ranks; count 0 when the size holds no
  /// element per rank (that size is left out of the sweep).
  Layout (*layout)(std::int64_t bytes, int ranks);
  /// busbw / algbw (nccl-tests doc/PERFORMANCE.md).
  double (*bus_factor)(int ranks);
  /// The collective over MPI (float sum), out of place.
  void (*run_mpi)(const float* send, float* recv, const Layout& layout, MPI_Comm comm);
};

/// Every collective, in sweep order.
[[nodiscard]] const std::vector<const Collective*>& collectives();
[[nodiscard]] const Collective& collective(Op op);
[[nodiscard]] std::optional<Op> parse_op(std::string_view name);

/// The per-rank share of S bytes split over `ranks` ranks, in elements.
[[nodiscard]] inline std::int64_t per_rank_elements(std::int64_t bytes, int ranks) {
  return bytes / 4 / (ranks > 0 ? ranks : 1);
}

}  // namespace sb::comms
