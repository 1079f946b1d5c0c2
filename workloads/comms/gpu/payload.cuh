#pragma once
/// @file payload.cuh
/// The GPU twin of payload.hpp: filling a send buffer with the Philox payload and counting the
/// output elements that differ from expected.hpp's sources, on the worker's stream.

#include <cuda_runtime.h>

#include <cstdint>

#include "comms/expected.hpp"
#include "comms/payload.hpp"
#include "scalebench/philox.cuh"

namespace sb::comms::gpu {

/// Payload element e of rank r (expected.hpp), bit for bit payload.hpp's.
__device__ __forceinline__ float payload(std::uint64_t seed, int rank, std::int64_t e) {
  const uint4 w = data::gpu::philox_words(seed, static_cast<std::uint64_t>(e) / 4,
                                          static_cast<std::uint32_t>(rank));
  const int k = static_cast<int>(e % 4);
  return payload_from_word(k == 0 ? w.x : k == 1 ? w.y : k == 2 ? w.z : w.w);
}

/// out[e] = payload(seed, rank, e) for e < n.
void fill_payload(std::uint64_t seed, int rank, float* out, std::int64_t n, cudaStream_t stream);

/// Device scratch for count_wrong: two 64-bit words (wrong count, first wrong index).
class WrongCounter {
 public:
  WrongCounter();
  ~WrongCounter();
  WrongCounter(const WrongCounter&) = delete;
  WrongCounter& operator=(const WrongCounter&) = delete;
  /// Checks out[0..n) of rank `me` as payload.hpp's count_wrong does; waits for the stream.
  [[nodiscard]] Wrong count(Expected rule, std::uint64_t seed, int me, int ranks,
                            std::int64_t count, int root, const float* out, std::int64_t n,
                            cudaStream_t stream);

 private:
  unsigned long long* device_ = nullptr;  ///< [0] wrong, [1] first wrong index
  unsigned long long* host_ = nullptr;    ///< pinned copy
};

}  // namespace sb::comms::gpu
