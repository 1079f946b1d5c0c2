#pragma once
/// @file philox_simd_table.hpp
/// The table of fast data kernels that each instruction-set variant exports (internal).
///
/// Every ISA variant lives in its own translation unit compiled with its own `-m` flags
/// (philox_simd_avx2.cpp, philox_simd_avx512.cpp). Those units include only this header, the
/// intrinsics headers, sleef.h and philox_simd_impl.hpp, so that no inline function compiled with
/// wide instructions can be picked by the linker for code that runs on any x86-64.
/// Public entry points are in philox_simd.hpp.

#include <cstddef>
#include <cstdint>

namespace sb::data::simd {

/// Instruction sets with a kernel variant. `scalar` runs everywhere.
enum class Isa : int { scalar = 0, avx2 = 1, avx512 = 2 };

/// Elementary functions behind Box-Muller.
///  - own:   this project's vector log and sincospi (philox_simd_impl.hpp): <= 1 ulp, inlined.
///  - sleef: SLEEF's Sleef_log*_u10 / Sleef_sincospi*_u05 (1.0 / 0.506 ulp). With Isa::scalar
///           this is exactly the reference of philox.hpp (same calls, same order, same bits).
enum class Math : int { own = 0, sleef = 1 };

/// Sums of the two normals of a range of Philox blocks.
struct NormalSums {
  double z0 = 0;  ///< sum of z0 (the even elements)
  double z1 = 0;  ///< sum of z1 (the odd elements)
};

/// One variant's kernels. Blocks are Philox calls of philox.hpp's layout: block b of (seed, stream)
/// is philox4x32_10(counter {lo32(b), hi32(b), stream, 0}, key {lo32(seed), hi32(seed)}).
struct Kernels {
  Isa isa = Isa::scalar;
  Math math = Math::own;
  /// Philox4x32-10 of `count` arbitrary counters: out[4i..4i+3] = philox(ctr[4i..4i+3], key[0..1]).
  void (*philox)(const std::uint32_t* key, const std::uint32_t* ctr, std::size_t count,
                 std::uint32_t* out) = nullptr;
  /// Words of blocks first..first+count-1: out[4i + w] = word w of block first+i.
  void (*words)(std::uint64_t seed, std::uint32_t stream, std::uint64_t first, std::size_t count,
                std::uint32_t* out) = nullptr;
  /// Uniforms in element order: out[2i] = ua, out[2i+1] = ub of block first+i.
  void (*uniforms)(std::uint64_t seed, std::uint32_t stream, std::uint64_t first, std::size_t count,
                   double* out) = nullptr;
  /// u01 of raw 53-bit integers (for tests of the edges): out[i] = philox.hpp's
  /// u01(k[i] >> 21, (k[i] & (2^21 - 1)) << 11), by the same vector code as `uniforms`; bits of
  /// k[i] above 52 are ignored.
  void (*u01)(const std::uint64_t* k, std::size_t count, double* out) = nullptr;
  /// Normals in element order: out[2i] = z0, out[2i+1] = z1 of block first+i.
  void (*normals)(std::uint64_t seed, std::uint32_t stream, std::uint64_t first, std::size_t count,
                  double* out) = nullptr;
  /// Sums of z0 and z1 over blocks first..first+count-1, without storing them. With Math::own
  /// each term is exact to a few 1e-16 absolute (cheaper paths than `normals`, see
  /// philox_simd_impl.hpp); with Math::sleef the terms are `normals`' own.
  NormalSums (*normal_sums)(std::uint64_t seed, std::uint32_t stream, std::uint64_t first,
                            std::size_t count) = nullptr;
  /// Sum of z0 + z1 over blocks first..first+count-1, computed per block as
  /// r (cospi + sinpi)(2 ub) = r sqrt(2) sinpi(2 ub + 1/4): one polynomial instead of two, exact
  /// to a few 1e-16 per block (not ulps of z0 and z1): for rows that need only the full sum.
  double (*normal_pair_total)(std::uint64_t seed, std::uint32_t stream, std::uint64_t first,
                              std::size_t count) = nullptr;
  /// The elementary functions behind normals, element-wise (for accuracy tests):
  /// out[i] = log(x[i]) for x in (0, 1]; sin_out[i], cos_out[i] = sinpi, cospi of x in [0, 2].
  void (*log)(const double* x, std::size_t count, double* out) = nullptr;
  void (*sincospi)(const double* x, std::size_t count, double* sin_out, double* cos_out) = nullptr;
};

namespace detail {
/// Each variant's table (null where the variant was not compiled in).
const Kernels* kernels_scalar(Math math) noexcept;
const Kernels* kernels_avx2(Math math) noexcept;
const Kernels* kernels_avx512(Math math) noexcept;
}  // namespace detail

}  // namespace sb::data::simd
