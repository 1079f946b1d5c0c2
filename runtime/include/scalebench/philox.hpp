#pragma once
/// @file philox.hpp
/// Deterministic data (docs/specification.md §3): every input element is a pure function of
/// (seed, stream, global element index) through Philox4x32-10.
///
/// Layout, identical on CPU and GPU:
///   key     = { lo32(seed), hi32(seed) }
///   counter = { lo32(block), hi32(block), stream, 0 }      block = element index / 2
///   words   = philox4x32_10(counter, key) = { w0, w1, w2, w3 }
///   uniform pair:  ua = u01(w0, w1),  ub = u01(w2, w3)
///   u01(hi, lo)  = min(k * 2^-53 + 2^-54, 1 - 2^-53),  k = (hi << 21) | (lo >> 11)  (53 bits)
///                  one correctly rounded fp64 sum (the product is exact), then the clamp: from
///                  1/2 on the sum is a tie that rounds to even, so k = 2^53 - 1 alone would give
///                  exactly 1.0; the clamp maps it to the largest double below 1 and changes no
///                  other k. Every uniform lies in [2^-54, 1 - 2^-53], inside (0, 1).
///   normal pair (Box-Muller): r = sqrt(-2 ln ua);  z0 = r cos(2 pi ub),  z1 = r sin(2 pi ub)
///                             (computed as sincospi(2 ub))
///   element e of a uniform stream is (e even ? ua : ub) of block e/2; likewise z0 / z1 of a
///   normal stream. Workloads that need several values per row use distinct `stream` values.
///
/// This header is the CPU reference (Random123's philox4x32 and libm). Fast kernels (SIMD on
/// the CPU, CUDA on the GPU) must reproduce its bits for the words and uniforms; tests check.

#include <Random123/philox.h>

#include <array>
#include <cmath>
#include <cstdint>

namespace sb::data {

using Words = std::array<std::uint32_t, 4>;

/// Philox4x32-10 of the counter (block, stream) under the key made from seed.
inline Words philox_words(std::uint64_t seed, std::uint64_t block, std::uint32_t stream = 0) {
  r123::Philox4x32 gen;
  const r123::Philox4x32::key_type key = {
      {static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)}};
  const r123::Philox4x32::ctr_type ctr = {
      {static_cast<std::uint32_t>(block), static_cast<std::uint32_t>(block >> 32), stream, 0u}};
  const auto out = gen(ctr, key);
  return {out.v[0], out.v[1], out.v[2], out.v[3]};
}

/// The largest double below 1 (1 - 2^-53): u01's upper clamp.
inline constexpr double kU01Max = 0x1.fffffffffffffp-1;

/// 53-bit uniform in the open interval (0,1) from two 32-bit words (hi gives the top 32 bits):
/// k 2^-53 + 2^-54 rounded once, clamped to kU01Max (only k = 2^53 - 1 is affected; it would
/// round up to 1.0). Result in [2^-54, 1 - 2^-53].
constexpr double u01(std::uint32_t hi, std::uint32_t lo) noexcept {
  const std::uint64_t k = (static_cast<std::uint64_t>(hi) << 21) | (lo >> 11);
  const double u = static_cast<double>(k) * 0x1p-53 + 0x1p-54;
  return u < kU01Max ? u : kU01Max;
}

struct Pair {
  double a;
  double b;
};

/// The two uniforms of one Philox block.
inline Pair uniform_pair(const Words& w) noexcept {
  return {u01(w[0], w[1]), u01(w[2], w[3])};
}

/// Box-Muller on one uniform pair: {r cos(2 pi ub), r sin(2 pi ub)} with r = sqrt(-2 ln ua).
Pair box_muller(Pair u) noexcept;

/// Element e of the uniform stream.
inline double uniform(std::uint64_t seed, std::uint64_t e, std::uint32_t stream = 0) {
  const Pair p = uniform_pair(philox_words(seed, e >> 1, stream));
  return (e & 1u) ? p.b : p.a;
}

/// Element e of the standard-normal stream.
inline double normal(std::uint64_t seed, std::uint64_t e, std::uint32_t stream = 0) {
  const Pair z = box_muller(uniform_pair(philox_words(seed, e >> 1, stream)));
  return (e & 1u) ? z.b : z.a;
}

}  // namespace sb::data
