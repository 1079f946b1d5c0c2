// u01's clamp (philox.hpp, docs/specification.md §3: uniforms lie in (0,1)). k 2^-53 + 2^-54
// rounded once is 1.0 for k = 2^53 - 1 (a tie that rounds to even); u01 clamps it to 1 - 2^-53.
// These tests prove that the clamp changes that k alone, and that the GPU twin's construction
// (philox.cuh: bits, one FMA, two integer instructions), written here in host code, gives the
// reference's bits.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <numbers>
#include <random>
#include <vector>

#include "scalebench/philox.hpp"

namespace {

using sb::data::u01;

constexpr std::uint64_t kTop = std::uint64_t{1} << 52;  // first k of the top half (u >= 1/2)
constexpr std::uint64_t kAll = std::uint64_t{1} << 53;  // number of k

std::uint64_t bits_of(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

double from_bits(std::uint64_t b) {
  double x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

/// The words that give k (the 11 low bits of `lo` are dropped; set them to catch misuse).
std::uint32_t hi_of(std::uint64_t k) {
  return static_cast<std::uint32_t>(k >> 21);
}
std::uint32_t lo_of(std::uint64_t k) {
  return static_cast<std::uint32_t>((k & 0x1FFFFF) << 11) | 0x5A5u;
}

/// The formula before the clamp: one correctly rounded sum of exact terms.
double u01_unclamped(std::uint64_t k) {
  volatile double p = static_cast<double>(k) * 0x1p-53;  // exact; volatile keeps two operations
  return p + 0x1p-54;
}

/// philox.cuh's u01 in host code, step by step (the device code's integer and FMA steps):
///   t = 1 + m 2^-52 from bits (m = low 52 bits of k; bit 52 falls on the exponent's low bit,
///   already 1), c = 2^-54 (bit 52 set) or 2^-54 - 1/2 from words built without a select,
///   u = fma(t, 1/2, c); then h' = min(h, 0x3FEFFFFF), l' = l + (h' - h) on u's words.
double u01_gpu_construction(std::uint32_t hi, std::uint32_t lo) {
  const std::uint32_t t_hi = 0x3FF00000u | (hi >> 11);
  const std::uint32_t t_lo = (lo >> 11) | (hi << 21);  // __funnelshift_r(lo, hi, 11)
  const std::uint32_t c_lo = 0xFFFFFFFFu + (hi >> 31);
  const std::uint32_t c_hi = 0x3C900000u + c_lo * 0x7CB00001u;
  const double t = from_bits((std::uint64_t{t_hi} << 32) | t_lo);
  const double c = from_bits((std::uint64_t{c_hi} << 32) | c_lo);
  const double u = std::fma(t, 0.5, c);
  const auto h = static_cast<std::int32_t>(bits_of(u) >> 32);
  const auto l = static_cast<std::uint32_t>(bits_of(u));
  const std::int32_t h2 = h < 0x3FEFFFFF ? h : 0x3FEFFFFF;
  const std::uint32_t l2 = l + static_cast<std::uint32_t>(h2 - h);
  return from_bits((std::uint64_t{static_cast<std::uint32_t>(h2)} << 32) | l2);
}

/// Edge k: both ends, the half boundary, every binade boundary 2^j with its neighbours, and
/// the k just below 1 whose ties go up (odd) and down (even).
std::vector<std::uint64_t> edge_ks() {
  std::vector<std::uint64_t> ks = {0,        1,        2,        3,        kTop / 2 - 1, kTop / 2,
                                   kTop - 3, kTop - 2, kTop - 1, kTop,     kTop + 1,     kTop + 2,
                                   kTop + 3, kAll - 5, kAll - 4, kAll - 3, kAll - 2,     kAll - 1};
  for (int j = 1; j < 53; ++j)
    for (std::int64_t d = -2; d <= 2; ++d) ks.push_back((std::uint64_t{1} << j) + d);
  for (std::uint64_t low = 0; low < 64; ++low) ks.push_back(kAll - 1 - low);
  return ks;
}

/// Edge k, then `random` uniform k, then `random` k of the top half near 1 (the tie region).
std::vector<std::uint64_t> test_ks(int random) {
  std::vector<std::uint64_t> ks = edge_ks();
  std::mt19937_64 rng(20261122);
  for (int i = 0; i < random; ++i) ks.push_back(rng() >> 11);
  for (int i = 0; i < random; ++i) ks.push_back(kAll - 1 - (rng() >> 40));
  return ks;
}

TEST(U01Clamp, OnlyTheLastKChanges) {
  // Unclamped, k = 2^53 - 1 gives 1.0; clamped, 0x1.fffffffffffffp-1; every other k keeps its bits.
  EXPECT_EQ(u01_unclamped(kAll - 1), 1.0);
  EXPECT_EQ(u01(0xFFFFFFFFu, 0xFFFFFFFFu), 0x1.fffffffffffffp-1);
  EXPECT_EQ(bits_of(u01(0xFFFFFFFFu, 0xFFFFFFFFu)), 0x3FEFFFFFFFFFFFFFull);
  EXPECT_EQ(u01(0xFFFFFFFFu, 0xFFFFFFFFu), sb::data::kU01Max);
  EXPECT_LT(u01(0xFFFFFFFFu, 0xFFFFF800u), 1.0);
  std::size_t changed = 0;
  for (const std::uint64_t k : test_ks(2'000'000)) {
    const double now = u01(hi_of(k), lo_of(k));
    const double before = u01_unclamped(k);
    if (k == kAll - 1) {
      ++changed;
      EXPECT_EQ(bits_of(now), 0x3FEFFFFFFFFFFFFFull);
      continue;
    }
    ASSERT_EQ(bits_of(now), bits_of(before)) << "k = " << k;
    ASSERT_GT(now, 0.0) << "k = " << k;
    ASSERT_LT(now, 1.0) << "k = " << k;
  }
  EXPECT_GE(changed, 1u);
  // The named edges, value by value.
  EXPECT_EQ(u01(hi_of(0), lo_of(0)), 0x1p-54);
  EXPECT_EQ(u01(hi_of(1), lo_of(1)), 0x1.8p-53);
  EXPECT_EQ(u01(hi_of(kTop / 2 - 1), lo_of(kTop / 2 - 1)), 0.25 - 0x1p-54);
  EXPECT_EQ(u01(hi_of(kTop / 2), lo_of(kTop / 2)), 0.25 + 0x1p-54);
  EXPECT_EQ(u01(hi_of(kTop - 1), lo_of(kTop - 1)), 0x1.fffffffffffffp-2);
  EXPECT_EQ(u01(hi_of(kTop), lo_of(kTop)), 0.5);
  EXPECT_EQ(u01(hi_of(kTop + 1), lo_of(kTop + 1)), 0.5 + 0x1p-52);
  EXPECT_EQ(u01(hi_of(kAll - 3), lo_of(kAll - 3)), 0x1.ffffffffffffep-1);
  EXPECT_EQ(u01(hi_of(kAll - 2), lo_of(kAll - 2)), 0x1.ffffffffffffep-1);
  EXPECT_EQ(u01(hi_of(kAll - 1), lo_of(kAll - 1)), 0x1.fffffffffffffp-1);
}

TEST(U01Clamp, GpuConstructionMatchesTheReference) {
  // Why it holds for every k: t = 1 + m 2^-52 exactly (t_hi's bit 20, the exponent's low bit,
  // is 1 with or without k's bit 52); for k < 2^52, t/2 + c = m 2^-53 + 2^-54 = k 2^-53 + 2^-54;
  // for k >= 2^52, t/2 + c = 1/2 + m 2^-53 + 2^-54 = k 2^-53 + 2^-54. The FMA rounds that same
  // real once, as the reference's exact product plus one rounded sum does, so the sums agree;
  // both clamps map [0, 1] to [0, 1 - 2^-53] alike (the integer one moves 1.0 alone, whose low
  // word is 0, to (0x3FEFFFFF, 0xFFFFFFFF)). Checked on the edges and 4e6 random k.
  for (const std::uint64_t k : test_ks(2'000'000)) {
    const std::uint32_t hi = hi_of(k);
    const std::uint32_t lo = lo_of(k);
    ASSERT_EQ(bits_of(u01_gpu_construction(hi, lo)), bits_of(u01(hi, lo))) << "k = " << k;
  }
  EXPECT_EQ(bits_of(u01_gpu_construction(0xFFFFFFFFu, 0xFFFFFFFFu)), 0x3FEFFFFFFFFFFFFFull);
  EXPECT_EQ(u01_gpu_construction(0u, 0u), 0x1p-54);
  // c's two values, from the select-free words.
  EXPECT_EQ(from_bits((std::uint64_t{0x3C900000u + 0u * 0x7CB00001u} << 32) | 0u), 0x1p-54);
  EXPECT_EQ(from_bits((std::uint64_t{0x3C900000u + 0xFFFFFFFFu * 0x7CB00001u} << 32) | 0xFFFFFFFFu),
            0x1p-54 - 0.5);
  // The integer clamp itself on every double the FMA can give near and at 1.
  for (double u : {0.5, 0x1.ffffffffffffep-1, 0x1.fffffffffffffp-1, 1.0}) {
    const auto h = static_cast<std::int32_t>(bits_of(u) >> 32);
    const std::int32_t h2 = h < 0x3FEFFFFF ? h : 0x3FEFFFFF;
    const std::uint32_t l2 =
        static_cast<std::uint32_t>(bits_of(u)) + static_cast<std::uint32_t>(h2 - h);
    EXPECT_EQ(from_bits((std::uint64_t{static_cast<std::uint32_t>(h2)} << 32) | l2),
              u < sb::data::kU01Max ? u : sb::data::kU01Max);
  }
}

TEST(U01Clamp, BoxMullerOfTheClampedUniformIsSmallAndFinite) {
  // ua = 1 - 2^-53: -2 ln ua = 2^-52 (1 + 2^-54 + ...), r = 2^-26 to within an ulp; ub the same
  // value: 2 pi ub = 2 pi - 2^-52 pi, so z0 = r cos(.) ~ r and z1 = r sin(.) ~ -r 2^-52 pi.
  const sb::data::Pair u =
      sb::data::uniform_pair({0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu});
  EXPECT_EQ(u.a, sb::data::kU01Max);
  EXPECT_EQ(u.b, sb::data::kU01Max);
  const sb::data::Pair z = sb::data::box_muller(u);
  EXPECT_TRUE(std::isfinite(z.a));
  EXPECT_TRUE(std::isfinite(z.b));
  EXPECT_NEAR(z.a, 0x1p-26, 0x1p-26 * 0x1p-50);
  EXPECT_NEAR(z.b, -0x1p-26 * 0x1p-52 * std::numbers::pi,
              0x1p-26 * 0x1p-52 * std::numbers::pi * 0x1p-48);
  EXPECT_LT(z.b, 0.0);
}

}  // namespace
