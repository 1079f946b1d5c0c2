#pragma once
/// @file collective.hpp
/// The collectives of the sweep, one file each in collectives/ (as nccl-tests' src/*.cu): all
/// that is particular to a collective is there, in one Collective descriptor — the element
/// counts of a nominal size, the bus-bandwidth factor, what every output element must hold,
/// and its MPI and NCCL calls. collective_list.cpp lists them in sweep order; adding a
/// collective is one file in collectives/ and one entry in that list.
///
/// Sizes follow nccl-tests (doc/PERFORMANCE.md): S is the per-rank buffer for all-reduce and
/// broadcast, the gathered total for all-gather, the reduced input for reduce-scatter, and a
/// rank's whole send buffer for all-to-all. algbw = S / t; busbw = algbw * factor(n).

#include <mpi.h>

#if SCALEBENCH_HAVE_CUDA
#include <cuda_runtime.h>
#include <nccl.h>
#endif

#include <cstdint>
#include <string_view>
#include <vector>

#include "comms/expected.hpp"

namespace sb::comms {

/// Element counts (float32) of one size on n ranks.
struct Layout {
  std::int64_t send = 0;   ///< elements in each rank's send buffer
  std::int64_t recv = 0;   ///< elements in each rank's receive buffer
  std::int64_t count = 0;  ///< the count argument of the call (per rank for gather/scatter/a2a)
  std::int64_t bytes = 0;  ///< S, the size bandwidths are computed from (4 bytes per element)
};

/// The rank a rooted collective (broadcast) starts from.
inline constexpr int kRoot = 0;

struct Collective {
  std::string_view name;  ///< the `op` parameter's value
  /// Counts for a nominal size of `bytes` on `ranks` ranks; count 0 when the size holds no
  /// element per rank (that size is left out of the sweep).
  Layout (*layout)(std::int64_t bytes, int ranks);
  /// busbw / algbw (nccl-tests doc/PERFORMANCE.md).
  double (*bus_factor)(int ranks);
  /// What every output element must hold (expected.hpp); a rooted collective starts at kRoot.
  Expected expected;
  /// The collective over MPI (float sum), out of place.
  void (*run_mpi)(const float* send, float* recv, const Layout& layout, MPI_Comm comm);
#if SCALEBENCH_HAVE_CUDA
  /// The collective over NCCL (float sum), out of place, queued on `stream`.
  void (*run_nccl)(const float* send, float* recv, const Layout& layout, ncclComm_t comm,
                   cudaStream_t stream);
#endif
};

/// Every collective, in sweep order (collective_list.cpp).
[[nodiscard]] const std::vector<const Collective*>& collectives();
/// The collective named `name` ("all-reduce"), or nullptr.
[[nodiscard]] const Collective* find_collective(std::string_view name);

/// The per-rank share of S bytes split over `ranks` ranks, in elements.
[[nodiscard]] inline std::int64_t per_rank_elements(std::int64_t bytes, int ranks) {
  return bytes / 4 / (ranks > 0 ? ranks : 1);
}

}  // namespace sb::comms
