#pragma once
/// @file poisson.hpp
/// Poisson(lambda) by exact table inversion of a 64-bit uniform integer, identical on CPU and GPU.
///
/// The table holds T[j] = floor(P(X <= kmin + j) * 2^64) for the values whose probability is not
/// below 2^-64 resolution, and the sample of U is the smallest kmin + j with U < T[j] (the last
/// entry catches everything above). A guide table indexed by the top kGuideBits of U gives the
/// range of candidates [guide[g], guide[g+1]], searched by bisection: almost always zero or one
/// comparison, at most log2(entries) in the tails (Chen & Asau's guide table).
///
/// The probabilities are built without libm: unnormalised weights from the mode outwards by the
/// recurrences w(k+1) = w(k) lambda / (k+1) and w(k-1) = w(k) k / lambda, summed in ascending k,
/// then divided by the total; only IEEE multiplications, divisions and additions in a fixed
/// order, so every conforming machine builds the same table. Sampling uses integer compares
/// only. The GPU gets a byte copy of the host's table.

#include <cstdint>

#include "groupby/table.hpp"

namespace sb::groupby {

struct PoissonTable {
  static constexpr int kMaxEntries = 1024;
  static constexpr int kGuideBits = 10;
  static constexpr int kGuideSize = 1 << kGuideBits;

  std::int32_t kmin = 0;     ///< smallest value that can be drawn
  std::int32_t entries = 0;  ///< values kmin .. kmin + entries - 1 can be drawn
  std::uint64_t threshold[kMaxEntries] = {};
  std::uint16_t guide[kGuideSize] = {};

  [[nodiscard]] SB_GB_HD std::int32_t kmax() const { return kmin + entries - 1; }

  /// Inverse CDF of the 64-bit uniform u: kmin + the smallest j with u < threshold[j].
  /// guide[g] is the smallest j with threshold[j] > g * 2^(64 - kGuideBits) (clamped to the last
  /// entry), so the answer lies in [guide[g], guide[g + 1]].
  [[nodiscard]] SB_GB_HD std::int64_t sample(std::uint64_t u) const {
    const unsigned g = static_cast<unsigned>(u >> (64 - kGuideBits));
    int lo = guide[g];
    int hi = (g + 1 < static_cast<unsigned>(kGuideSize)) ? guide[g + 1] : entries - 1;
    while (lo < hi) {
      const int mid = (lo + hi) >> 1;
      if (threshold[mid] <= u) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return kmin + lo;
  }
};

/// The table of Poisson(lambda) for 1 <= lambda <= 10^5 (deterministic, see above).
[[nodiscard]] PoissonTable make_poisson_table(double lambda);

/// The table of the `id` column (lambda = 1000), built once.
[[nodiscard]] const PoissonTable& id_poisson_table();

/// id of a row from word a3 of its kStreamXName block (table.hpp): inversion at the midpoint
/// a3 * 2^32 + 2^31.
SB_GB_HD inline std::int64_t id_of_word(const PoissonTable& t, std::uint32_t a3) {
  return t.sample((static_cast<std::uint64_t>(a3) << 32) | 0x80000000u);
}

}  // namespace sb::groupby
