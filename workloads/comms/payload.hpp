#pragma once
/// @file payload.hpp
/// The CPU side of the comms payloads (expected.hpp): filling a rank's send buffer and counting
/// the output elements that differ from what the collective must produce (nccl-tests' -c).
/// gpu/payload.cuh is the GPU twin (tests/comms/test_comms_gpu.cu compares them).

#include <cstdint>

#include "comms/expected.hpp"

namespace sb::comms {

/// Payload element e of rank r (expected.hpp).
[[nodiscard]] float payload(std::uint64_t seed, int rank, std::int64_t e);

/// out[e] = payload(seed, rank, e) for e < n (OpenMP).
void fill_payload(std::uint64_t seed, int rank, float* out, std::int64_t n);

/// Outcome of a check: wrong elements and the first of them (-1: none).
struct Wrong {
  std::int64_t count = 0;
  std::int64_t first = -1;
};

/// Checks out[0..n) of rank `me` against source_of(rule, me, ranks, count, root, i) (OpenMP).
[[nodiscard]] Wrong count_wrong(Expected rule, std::uint64_t seed, int me, int ranks,
                                std::int64_t count, int root, const float* out, std::int64_t n);

}  // namespace sb::comms
