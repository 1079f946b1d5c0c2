#pragma once
/// @file expected.hpp
/// What each output element of a collective must hold, as a function of the payloads: the
/// ranks whose payload element `index` it is (one rank, or the sum over all of them). Each
/// collective states its rule as data (Expected, in its file of collectives/), which this plain
/// integer code reads the same way on the CPU (payload.cpp) and in the GPU's check kernel
/// (gpu/payload.cu), so both check the same thing.

#include <cstdint>

#if defined(__CUDACC__)
#define SB_COMMS_HD __host__ __device__
#else
#define SB_COMMS_HD
#endif

namespace sb::comms {

/// Output element i of rank `me` equals payload(r, index) summed over r in [first, last].
struct Source {
  int first = 0;
  int last = 0;
  std::int64_t index = 0;
};

/// A collective's rule for output element i of rank `me` (the output is `ranks` blocks of
/// `count` elements where the collective gathers, one block or one buffer otherwise):
///   from            the ranks summed: `every` rank; the one whose block i is in (`block`:
///                   i / count); or `root` (a broadcast's root, a pair transfer's sender);
///   at_own_block    the element is taken from this rank's block of each source's buffer
///                   (index + me * count), as a reduce-scatter or an all-to-all delivers it;
/// and within a block the index is i % count.
struct Expected {
  enum class From : int { every, block, root };
  From from = From::every;
  bool at_own_block = false;
};

/// A pair transfer: the receiver holds the sender's (`root`'s) payload, element for element.
inline constexpr Expected kExpectCopy{Expected::From::root, false};

/// The source of output element i on rank `me` of `ranks`; `count` is Layout::count and
/// `root` the broadcast's root or the copy's sender.
SB_COMMS_HD inline Source source_of(Expected rule, int me, int ranks, std::int64_t count, int root,
                                    std::int64_t i) {
  const bool blocks = rule.from == Expected::From::block;
  const std::int64_t index = (rule.at_own_block ? me * count : 0) + (blocks ? i % count : i);
  switch (rule.from) {
    case Expected::From::every:
      return {0, ranks - 1, index};
    case Expected::From::block: {
      const int r = static_cast<int>(i / count);
      return {r, r, index};
    }
    default:
      return {root, root, index};
  }
}

/// Payload element e of rank r as an integer in [-128, 127] (exact in float32, and so are sums
/// over up to 2^16 ranks, whatever order a reduction takes): the top byte of word e % 4 of
/// Philox4x32-10 at counter (e / 4, stream r) under key `seed`, minus 128.
SB_COMMS_HD inline float payload_from_word(std::uint32_t word) {
  return static_cast<float>(static_cast<int>(word >> 24) - 128);
}

/// Most ranks whose sums stay exact in float32 (2^16 * 128 = 2^23).
inline constexpr int kMaxExactRanks = 1 << 16;

}  // namespace sb::comms
