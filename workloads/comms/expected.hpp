#pragma once
/// @file expected.hpp
/// What each output element of a collective must hold, as a function of the payloads: the
/// ranks whose payload element `index` it is (one rank, or the sum over all of them). Plain
/// integer code, the same on the CPU (payload.cpp) and in the GPU's check kernel
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

/// The op codes of collective.hpp's Op, plus a pair transfer (`root` is the sender).
enum ExpectOp : int {
  kExpectAllReduce = 0,
  kExpectAllGather = 1,
  kExpectReduceScatter = 2,
  kExpectAllToAll = 3,
  kExpectBroadcast = 4,
  kExpectCopy = 5,
};

/// The source of output element i on rank `me` of `ranks`; `count` is Layout::count and
/// `root` the broadcast's root or the copy's sender.
SB_COMMS_HD inline Source source_of(int op, int me, int ranks, std::int64_t count, int root,
                                    std::int64_t i) {
  switch (op) {
    case kExpectAllReduce:
      return {0, ranks - 1, i};
    case kExpectAllGather:
      return {static_cast<int>(i / count), static_cast<int>(i / count), i % count};
    case kExpectReduceScatter:
      return {0, ranks - 1, me * count + i};
    case kExpectAllToAll:
      return {static_cast<int>(i / count), static_cast<int>(i / count), me * count + i % count};
    default:  // broadcast, copy
      return {root, root, i};
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
