#include "svd/sketch.hpp"

namespace sb::svd {

void sketch_rows_cpu(const double* a, std::int64_t lda, std::int64_t row0, std::int64_t rows,
                     std::int64_t n, std::uint64_t key, const double* inv_scales, std::int64_t* y) {
  const std::int64_t s = sketch_height(n);
  const std::int64_t layer_rows = s / kSketchLayers;
  for (std::int64_t r = 0; r < rows; ++r) {
    std::uint32_t hits[kSketchLayers];
    for (int t = 0; t < kSketchLayers; ++t)
      hits[t] = sketch_hit(key, static_cast<std::uint64_t>(row0 + r), t, layer_rows);
    for (std::int64_t j = 0; j < n; ++j) {
      const std::int64_t q = sketch_fixed(a[r + j * lda], inv_scales[j]);
      for (const std::uint32_t h : hits) {
        // Two's complement wrap-around, as the GPU's unsigned atomics.
        auto& cell = y[static_cast<std::int64_t>(h & 0x7fffffffu) + j * s];
        const auto add = static_cast<std::uint64_t>((h >> 31) != 0 ? -q : q);
        cell = static_cast<std::int64_t>(static_cast<std::uint64_t>(cell) + add);
      }
    }
  }
}

}  // namespace sb::svd
