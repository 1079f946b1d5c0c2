#include "comms/payload.hpp"

#include <omp.h>

#include <algorithm>
#include <cstring>

#include "scalebench/philox.hpp"

namespace sb::comms {

float payload(std::uint64_t seed, int rank, std::int64_t e) {
  const auto w =
      data::philox_words(seed, static_cast<std::uint64_t>(e) / 4, static_cast<std::uint32_t>(rank));
  return payload_from_word(w[static_cast<std::size_t>(e % 4)]);
}

void fill_payload(std::uint64_t seed, int rank, float* out, std::int64_t n) {
  const std::int64_t blocks = (n + 3) / 4;
#pragma omp parallel for schedule(static)
  for (std::int64_t b = 0; b < blocks; ++b) {
    const auto w =
        data::philox_words(seed, static_cast<std::uint64_t>(b), static_cast<std::uint32_t>(rank));
    for (std::int64_t k = 0; k < 4 && 4 * b + k < n; ++k)
      out[4 * b + k] = payload_from_word(w[static_cast<std::size_t>(k)]);
  }
}

Wrong count_wrong(Expected rule, std::uint64_t seed, int me, int ranks, std::int64_t count,
                  int root, const float* out, std::int64_t n) {
  // Runs of outputs whose sources are consecutive elements of one Philox block take one
  // Philox call per rank for up to 4 outputs (an all-reduce of n ranks: n calls per 4 outputs).
  constexpr std::int64_t kChunk = 1 << 14;
  const std::int64_t chunks = (n + kChunk - 1) / kChunk;
  std::int64_t wrong = 0;
  std::int64_t first = n;
#pragma omp parallel for schedule(dynamic, 4) reduction(+ : wrong) reduction(min : first)
  for (std::int64_t c = 0; c < chunks; ++c) {
    const std::int64_t end = std::min(n, (c + 1) * kChunk);
    for (std::int64_t i = c * kChunk; i < end;) {
      const Source s = source_of(rule, me, ranks, count, root, i);
      const std::int64_t k0 = s.index % 4;
      std::int64_t len = std::min<std::int64_t>(4 - k0, end - i);
      for (std::int64_t j = 1; j < len; ++j) {
        const Source t = source_of(rule, me, ranks, count, root, i + j);
        if (t.first != s.first || t.last != s.last || t.index != s.index + j) {
          len = j;
          break;
        }
      }
      float want[4] = {0, 0, 0, 0};
      for (int r = s.first; r <= s.last; ++r) {
        const auto w = data::philox_words(seed, static_cast<std::uint64_t>(s.index) / 4,
                                          static_cast<std::uint32_t>(r));
        for (std::int64_t j = 0; j < len; ++j)
          want[j] += payload_from_word(w[static_cast<std::size_t>(k0 + j)]);
      }
      for (std::int64_t j = 0; j < len; ++j)
        // Bitwise: a NaN left in an output that was never written is wrong too.
        if (std::memcmp(&want[j], &out[i + j], sizeof(float)) != 0) {
          ++wrong;
          first = std::min(first, i + j);
        }
      i += len;
    }
  }
  return {wrong, wrong > 0 ? first : -1};
}

}  // namespace sb::comms
