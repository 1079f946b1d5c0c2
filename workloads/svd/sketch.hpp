#pragma once
/// @file sketch.hpp
/// The sparse sign sketch of a GPU svd worker's rows (sketch-preconditioned Cholesky QR, see
/// tsqr_gpu.cuh), shared by the CUDA kernel (svd_gpu_kernels.cu) and its CPU twin below.
///
/// S is s x m with s = kSketchLayers * b rows in kSketchLayers layers of b rows; global row i
/// of A has one nonzero (+1 or -1) in each layer, at a row chosen by a hash of (key, i, layer),
/// so Y = S A sums every row of A into kSketchLayers rows of Y with random signs (Tropp's
/// sparse sign embedding with zeta = 8 and s = 2n). The sketch is accumulated in 64-bit fixed
/// point (kSketchFracBits fractional bits of each column's scale), so the sum does not depend
/// on the order of the atomic additions: every run, stream order and worker count gives the
/// same Y bit for bit, and Y is exact to 2^-40 of a column's scale per term, far more than a
/// preconditioner needs.
///
/// Everything here is constexpr so that device code can call it (--expt-relaxed-constexpr).

#include <cstdint>

namespace sb::svd {

inline constexpr int kSketchLayers = 8;
inline constexpr int kSketchFracBits = 40;

/// Rows of the sketch for n columns: 2n rounded up to a multiple of kSketchLayers.
constexpr std::int64_t sketch_height(std::int64_t n) {
  return (2 * n + kSketchLayers - 1) / kSketchLayers * kSketchLayers;
}

/// The sketch's key from the data's seed (a fixed, documented derivation).
constexpr std::uint64_t sketch_key(std::uint64_t seed) {
  return seed ^ 0x5ce7c11a2b3d4e5fULL;
}

/// SplitMix64's finaliser.
constexpr std::uint64_t sketch_mix(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

/// Global row `row`'s nonzero in layer `layer`, packed: bit 31 is the sign (1 = negative),
/// the low bits the row of Y (layer * layer_rows + offset).
constexpr std::uint32_t sketch_hit(std::uint64_t key, std::uint64_t row, int layer,
                                   std::int64_t layer_rows) {
  const std::uint64_t h = sketch_mix(
      key + 0x9e3779b97f4a7c15ULL * (row * kSketchLayers + static_cast<unsigned>(layer) + 1));
  const auto offset =
      static_cast<std::uint32_t>((h & 0xffffffffULL) % static_cast<std::uint64_t>(layer_rows));
  const auto target = static_cast<std::uint32_t>(layer * layer_rows) + offset;
  return target | (static_cast<std::uint32_t>(h >> 63) << 31);
}

/// An element of A in fixed point: a / scale in units of 2^-kSketchFracBits, rounded to
/// nearest (inv_scale = 1 / the column's scale; A's columns are bounded by their scales).
constexpr std::int64_t sketch_fixed(double a, double inv_scale) {
  const double v = a * inv_scale * static_cast<double>(std::int64_t{1} << kSketchFracBits);
  return static_cast<std::int64_t>(v < 0 ? v - 0.5 : v + 0.5);
}

/// CPU twin of gpu::sketch_rows: adds S[:, row0 : row0 + rows] * A (rows x n, column-major,
/// leading dimension lda) to y (sketch_height(n) x n, column-major, fixed point).
void sketch_rows_cpu(const double* a, std::int64_t lda, std::int64_t row0, std::int64_t rows,
                     std::int64_t n, std::uint64_t key, const double* inv_scales, std::int64_t* y);

}  // namespace sb::svd
