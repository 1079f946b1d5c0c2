#pragma once
/// @file philox_lanes.hpp
/// Philox4x32-10's ten rounds on L counters at once, written lane-parallel (`omp simd`) so that
/// compilers vectorise them with pmuludq / vpmuludq: the CPU's fast Philox (groupby's rows, the
/// machine description's Philox ceiling). Its words are philox.hpp's (tests/groupby check them).

#include <cstdint>

namespace sb::data {

/// Rounds the counters (c0..c3)[lane] in place under the key (k0, k1): afterwards they hold the
/// lanes' Philox4x32-10 words.
template <int L>
inline void philox_rounds_lanes(std::uint32_t (&c0)[L], std::uint32_t (&c1)[L],
                                std::uint32_t (&c2)[L], std::uint32_t (&c3)[L], std::uint32_t k0,
                                std::uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
#pragma omp simd
    for (int l = 0; l < L; ++l) {
      const std::uint64_t p0 = static_cast<std::uint64_t>(0xD2511F53u) * c0[l];
      const std::uint64_t p1 = static_cast<std::uint64_t>(0xCD9E8D57u) * c2[l];
      const std::uint32_t n0 = static_cast<std::uint32_t>(p1 >> 32) ^ c1[l] ^ k0;
      const std::uint32_t n2 = static_cast<std::uint32_t>(p0 >> 32) ^ c3[l] ^ k1;
      c1[l] = static_cast<std::uint32_t>(p1);
      c3[l] = static_cast<std::uint32_t>(p0);
      c0[l] = n0;
      c2[l] = n2;
    }
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
}

}  // namespace sb::data
