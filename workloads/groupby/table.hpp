#pragma once
/// @file table.hpp
/// The groupby input table (docs/specification.md §4.3), like dask.datasets.timeseries: one row per
/// second from 2000-01-01T00:00:00 UTC, partitions of one day (86 400 rows). Every value of row
/// r is a pure function of (seed, r); this header holds the per-row functions, shared by the CPU
/// generator, the CUDA kernels and the reference scan, so all paths see the same bits.
///
/// Exact mapping (Philox4x32-10, key = {lo32(seed), hi32(seed)}, counter = {lo32(r), hi32(r),
/// stream, 0}, i.e. philox.hpp's layout with the counter block equal to the row index):
///
///   stream kStreamXName (0x67620001) -> words a0..a3
///     x    = 2 u01(a0, a1) - 1                        uniform(-1, 1), 53 bits
///     name = (a2 * 26) >> 32                          code in [0, 26), multiply-shift
///     id   = Poisson(1000) by inversion of the 64-bit uniform a3 * 2^32 + 2^31 (poisson.hpp):
///            32 random bits at the midpoint of their interval, so values whose probability
///            is below ~2^-32 (beyond about 6 standard deviations) are never drawn
///   stream kStreamYKey  (0x67620002) -> words b0..b3
///     y    = 2 u01(b0, b1) - 1
///     key  = ((b2 << 32 | b3) * cardinality) >> 64    uniform in [0, cardinality), 128-bit product
///   timestamp = 946684800e9 + r * 1e9                 int64 nanoseconds since the Unix epoch
///
/// with u01(hi, lo) = min(((hi << 21) | (lo >> 11)) * 2^-53 + 2^-54, 1 - 2^-53) as in philox.hpp
/// (so x, y lie in [-1 + 2^-53, 1 - 2^-52], inside (-1, 1)). Every step is
/// an integer operation or an exactly specified IEEE operation (the multiplications by powers
/// of two are exact, so FMA contraction cannot change a bit), hence CPU and GPU agree bit for
/// bit; tests compare them. A query costs one Philox call per row (by-name) or two (by-id,
/// by-key); the whole table costs two.

#include <array>
#include <cstdint>
#include <string_view>

#if defined(__CUDACC__)
#define SB_GB_HD __host__ __device__
#else
#define SB_GB_HD
#endif

namespace sb::groupby {

inline constexpr std::int64_t kRowsPerDay = 86'400;
/// 2000-01-01T00:00:00Z in nanoseconds since 1970-01-01T00:00:00Z.
inline constexpr std::int64_t kEpochNs = 946'684'800LL * 1'000'000'000LL;
inline constexpr std::int64_t kNsPerRow = 1'000'000'000LL;

inline constexpr std::uint32_t kStreamXName = 0x67620001u;
inline constexpr std::uint32_t kStreamYKey = 0x67620002u;
/// Sampled validation keys (not a column).
inline constexpr std::uint32_t kStreamSample = 0x67620004u;

inline constexpr int kNumNames = 26;
/// The dictionary of the `name` column; code c is kNames[c].
inline constexpr std::array<std::string_view, kNumNames> kNames = {
    "Alice", "Bob",   "Charlie", "Dan",     "Edith",   "Frank",  "George",   "Hannah", "Ingrid",
    "Jerry", "Kevin", "Laura",   "Michael", "Norbert", "Oliver", "Patricia", "Quinn",  "Ray",
    "Sarah", "Tim",   "Ursula",  "Victor",  "Wendy",   "Xavier", "Yvonne",   "Zelda"};

/// Columns as bits, for "which columns to generate".
enum ColumnBits : unsigned {
  kColTimestamp = 1u << 0,
  kColId = 1u << 1,
  kColName = 1u << 2,
  kColX = 1u << 3,
  kColY = 1u << 4,
  kColKey = 1u << 5,
  kColAll = 0x3fu,
};

/// Output columns of a generator call; only the pointers of requested columns are touched.
struct ColumnPtrs {
  std::int64_t* timestamp = nullptr;
  std::int64_t* id = nullptr;
  std::int32_t* name = nullptr;
  double* x = nullptr;
  double* y = nullptr;
  std::int64_t* key = nullptr;
};

struct Words4 {
  std::uint32_t w[4];
};

/// Philox4x32-10 (Salmon et al. 2011), the same function as Random123's philox4x32 (tested).
SB_GB_HD inline Words4 philox4x32_10(std::uint64_t block, std::uint32_t stream,
                                     std::uint64_t seed) {
  std::uint32_t c0 = static_cast<std::uint32_t>(block);
  std::uint32_t c1 = static_cast<std::uint32_t>(block >> 32);
  std::uint32_t c2 = stream;
  std::uint32_t c3 = 0u;
  std::uint32_t k0 = static_cast<std::uint32_t>(seed);
  std::uint32_t k1 = static_cast<std::uint32_t>(seed >> 32);
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int round = 0; round < 10; ++round) {
    const std::uint64_t p0 = static_cast<std::uint64_t>(0xD2511F53u) * c0;
    const std::uint64_t p1 = static_cast<std::uint64_t>(0xCD9E8D57u) * c2;
    const std::uint32_t n0 = static_cast<std::uint32_t>(p1 >> 32) ^ c1 ^ k0;
    const std::uint32_t n2 = static_cast<std::uint32_t>(p0 >> 32) ^ c3 ^ k1;
    c1 = static_cast<std::uint32_t>(p1);
    c3 = static_cast<std::uint32_t>(p0);
    c0 = n0;
    c2 = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return {{c0, c1, c2, c3}};
}

/// philox.hpp's u01: 53-bit uniform in (0,1) from two words (hi gives the top 32 bits), clamped
/// to 1 - 2^-53 (only k = 2^53 - 1 is affected: its sum rounds up to 1.0).
SB_GB_HD constexpr double unit_double(std::uint32_t hi, std::uint32_t lo) {
  const std::uint64_t k = (static_cast<std::uint64_t>(hi) << 21) | (lo >> 11);
  const double u = static_cast<double>(k) * 0x1p-53 + 0x1p-54;
  return u < 0x1.fffffffffffffp-1 ? u : 0x1.fffffffffffffp-1;
}

/// uniform(-1, 1) of two words.
SB_GB_HD constexpr double centered_uniform(std::uint32_t hi, std::uint32_t lo) {
  return 2.0 * unit_double(hi, lo) - 1.0;
}

/// Name code in [0, 26) of one word (multiply-shift; bias below 26 / 2^32).
SB_GB_HD constexpr std::int32_t name_code(std::uint32_t w) {
  return static_cast<std::int32_t>((static_cast<std::uint64_t>(w) * kNumNames) >> 32);
}

/// High 64 bits of a 64x64-bit product.
SB_GB_HD inline std::uint64_t mul_hi64(std::uint64_t a, std::uint64_t b) {
#if defined(__CUDA_ARCH__)
  return __umul64hi(a, b);
#else
  __extension__ typedef unsigned __int128 u128;  // GCC/Clang extension, no -Wpedantic noise
  return static_cast<std::uint64_t>((static_cast<u128>(a) * b) >> 64);
#endif
}

/// Uniform integer in [0, cardinality) from two words (multiply-shift on 64 bits).
SB_GB_HD inline std::int64_t bounded_key(std::uint32_t hi, std::uint32_t lo,
                                         std::uint64_t cardinality) {
  const std::uint64_t u = (static_cast<std::uint64_t>(hi) << 32) | lo;
  return static_cast<std::int64_t>(mul_hi64(u, cardinality));
}

SB_GB_HD constexpr std::int64_t timestamp_ns(std::int64_t row) {
  return kEpochNs + row * kNsPerRow;
}

}  // namespace sb::groupby
