#pragma once
/// @file philox_simd.hpp
/// Fast CPU kernels for the deterministic data of philox.hpp (docs/specification.md §3).
///
/// Same numbers as the reference, many at a time: Philox4x32-10 words and u01 uniforms are
/// bit-identical to philox.hpp; normals are within a few ulps of sb::data::box_muller (the
/// reference uses SLEEF's scalar log/sincospi, the fast path its own vector ones, both <= 1 ulp).
/// Variants: AVX-512 (8 blocks per step), AVX2+FMA (4), scalar (1, runs anywhere), chosen at run
/// time from the CPU's features; each is compiled in its own translation unit with its own flags.
///
/// subset-mean's optional parameter `simd` (scalar | avx2 | avx512) caps the choice: the widest
/// available variant up to that level runs, with the same numbers (for comparing variants, or to
/// dodge a suspected miscompile).
///
/// Example: the sum of 10^6 normals of stream 0 from element 0
/// @code
///   const auto& k = sb::data::simd::best_kernels();
///   const auto s = k.normal_sums(seed, 0, /*first block*/ 0, /*blocks*/ 500000);
///   double total = s.z0 + s.z1;
/// @endcode

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "subset_mean/philox_simd_table.hpp"

namespace sb::data::simd {

[[nodiscard]] std::string_view to_string(Isa isa) noexcept;
[[nodiscard]] std::string_view to_string(Math math) noexcept;

/// The variant was compiled into this binary (avx2/avx512 only on x86-64 builds).
[[nodiscard]] bool compiled(Isa isa) noexcept;
/// Compiled in and this CPU can run it.
[[nodiscard]] bool available(Isa isa) noexcept;
/// Every available variant, scalar first.
[[nodiscard]] std::vector<Isa> available_isas();
/// The widest available variant up to `cap`.
[[nodiscard]] Isa best_isa(Isa cap = Isa::avx512) noexcept;
/// The variant named `name` ("scalar", "avx2", "avx512"), if it names one.
[[nodiscard]] bool parse_isa(std::string_view name, Isa& isa) noexcept;

/// A variant's kernels; throws sb::EnvironmentError when `isa` is not available here.
[[nodiscard]] const Kernels& kernels(Isa isa, Math math = Math::own);
/// kernels(best_isa(cap), Math::own); Math::sleef (the reference itself) when that is scalar.
[[nodiscard]] const Kernels& best_kernels(Isa cap = Isa::avx512);

/// Elements first..first+count-1 of the uniform stream (any start, any length).
void fill_uniform(std::uint64_t seed, std::uint32_t stream, std::uint64_t first, std::size_t count,
                  double* out);
/// Elements first..first+count-1 of the standard-normal stream (any start, any length).
void fill_normal(std::uint64_t seed, std::uint32_t stream, std::uint64_t first, std::size_t count,
                 double* out);

}  // namespace sb::data::simd
