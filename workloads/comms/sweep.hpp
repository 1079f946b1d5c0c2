#pragma once
/// @file sweep.hpp
/// A collective's size sweep: the sizes a case measures on n ranks, the bandwidths of a
/// measured time (nccl-tests' algbw and busbw), and what a worker reports per size.

#include <cstdint>
#include <vector>

#include "comms/collective.hpp"
#include "comms/config.hpp"

namespace sb::comms {

struct SweepSize {
  std::int64_t nominal = 0;  ///< the size asked for (min_bytes * factor^k)
  Layout layout;             ///< its counts on the case's ranks; layout.bytes is S
};

/// The sizes of cfg's sweep that hold at least one element per rank, in increasing order.
[[nodiscard]] std::vector<SweepSize> sweep_sizes(const Config& cfg, int ranks);

/// Largest send and receive buffers (elements) over the sweep.
struct BufferSizes {
  std::int64_t send = 0;
  std::int64_t recv = 0;
};
[[nodiscard]] BufferSizes buffer_sizes(const std::vector<SweepSize>& sizes);

/// algbw = S / t and busbw = algbw * factor(n), bytes per second.
struct Bandwidth {
  double algbw = 0;
  double busbw = 0;
};
[[nodiscard]] Bandwidth bandwidth(const Collective& c, const Layout& layout, double seconds,
                                  int ranks);

/// A worker's finish_repeat partial starts with kSweepHeaderWords doubles: the nominal rate of
/// its slowest link to the case's other workers, when known (bytes per second per direction;
/// 0: unknown) and that link's NVLink count (0: not NVLink). Then, per size, kSizeWords doubles:
/// S, seconds per iteration (its own host timer around `iters` calls and the stream's end),
/// wrong output elements, the first wrong one (-1: none).
inline constexpr int kSweepHeaderWords = 2;
inline constexpr int kSizeWords = 4;

}  // namespace sb::comms
