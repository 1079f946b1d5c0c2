#include "svd/svd_data.hpp"

#include "scalebench/philox.hpp"

namespace sb::svd {

void generate_rows(const Config& cfg, const double* scales, std::int64_t row0, std::int64_t rows,
                   double* out, std::int64_t ld) {
  const std::int64_t n = cfg.n;
  const std::uint64_t seed = cfg.seed;
  if (n % 2 == 0) {
    // Elements (i, j) and (i, j + 1) with j even share one Philox block: one call, two columns.
    for (std::int64_t j = 0; j < n; j += 2) {
      double* c0 = out + j * ld;
      double* c1 = c0 + ld;
      const double s0 = scales[j];
      const double s1 = scales[j + 1];
      for (std::int64_t r = 0; r < rows; ++r) {
        const auto e = static_cast<std::uint64_t>((row0 + r) * n + j);
        const data::Pair p = data::uniform_pair(data::philox_words(seed, e >> 1));
        c0[r] = p.a * s0;
        c1[r] = p.b * s1;
      }
    }
    return;
  }
  // Odd n: pairs straddle rows; walk the elements in stream order, one Philox call per pair.
  std::uint64_t cached = ~std::uint64_t{0};
  data::Pair p{0, 0};
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t j = 0; j < n; ++j) {
      const auto e = static_cast<std::uint64_t>((row0 + r) * n + j);
      if ((e >> 1) != cached) {
        cached = e >> 1;
        p = data::uniform_pair(data::philox_words(seed, cached));
      }
      out[r + j * ld] = ((e & 1u) ? p.b : p.a) * scales[j];
    }
  }
}

}  // namespace sb::svd
