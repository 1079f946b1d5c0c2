// philox.hpp, the CPU reference of the deterministic data (docs/specification.md §3): Random123's
// published known answers, the counter/key layout, u01's exact values, and Box-Muller against an
// independent long-double computation.
#include <gtest/gtest.h>

#include <Random123/philox.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "scalebench/philox.hpp"

namespace {

using sb::data::Words;

struct Kat {
  std::uint32_t ctr[4];
  std::uint32_t key[2];
  std::uint32_t expected[4];
};

// Random123 (D. E. Shaw Research), tests/kat_vectors, the three "philox4x32 10" lines
// (columns: counter[4] key[2] expected[4]).
constexpr Kat kPhilox4x32_10[] = {
    {{0x00000000, 0x00000000, 0x00000000, 0x00000000},
     {0x00000000, 0x00000000},
     {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
     {0xffffffff, 0xffffffff},
     {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
     {0xa4093822, 0x299f31d0},
     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
};

TEST(PhiloxKat, Random123GivesThePublishedVectors) {
  r123::Philox4x32 gen;
  for (const Kat& k : kPhilox4x32_10) {
    const r123::Philox4x32::ctr_type ctr = {{k.ctr[0], k.ctr[1], k.ctr[2], k.ctr[3]}};
    const r123::Philox4x32::key_type key = {{k.key[0], k.key[1]}};
    const auto out = gen(ctr, key);
    for (int w = 0; w < 4; ++w) EXPECT_EQ(out.v[w], k.expected[w]) << "word " << w;
  }
}

TEST(PhiloxKat, ZeroVectorThroughTheLayout) {
  // seed 0, block 0, stream 0 is counter {0,0,0,0} under key {0,0}.
  const Words w = sb::data::philox_words(0, 0, 0);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(w[i], kPhilox4x32_10[0].expected[i]);
}

TEST(PhiloxLayout, CounterIsBlockLoHiStreamZeroKeyIsSeedLoHi) {
  r123::Philox4x32 gen;
  const std::uint64_t seeds[] = {0, 42, 0xFFFFFFFFull, 0x100000000ull, 0x0123456789ABCDEFull};
  const std::uint64_t blocks[] = {0, 1, 0xFFFFFFFFull, 0x100000000ull, 0xFEDCBA9876543210ull};
  const std::uint32_t streams[] = {0, 1, 0xFFFFFFFFu};
  for (std::uint64_t seed : seeds)
    for (std::uint64_t block : blocks)
      for (std::uint32_t stream : streams) {
        const r123::Philox4x32::ctr_type ctr = {{static_cast<std::uint32_t>(block),
                                                 static_cast<std::uint32_t>(block >> 32), stream,
                                                 0u}};
        const r123::Philox4x32::key_type key = {
            {static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)}};
        const auto expected = gen(ctr, key);
        const Words w = sb::data::philox_words(seed, block, stream);
        for (int i = 0; i < 4; ++i) EXPECT_EQ(w[i], expected.v[i]);
      }
  // The high halves matter.
  EXPECT_NE(sb::data::philox_words(0, 1), sb::data::philox_words(0, 0x100000001ull));
  EXPECT_NE(sb::data::philox_words(1, 0), sb::data::philox_words(0x100000001ull, 0));
}

TEST(U01, ExactValuesAtTheEdges) {
  using sb::data::u01;
  // All-zero words: half a step above 0.
  EXPECT_EQ(u01(0, 0), 0x1p-54);
  EXPECT_GT(u01(0, 0), 0.0);
  // The low 11 bits of `lo` are dropped; the next step is k = 1.
  EXPECT_EQ(u01(0, 0x7FF), 0x1p-54);
  EXPECT_EQ(u01(0, 0x800), 0x1.8p-53);
  // `hi` gives the top 32 of the 53 bits.
  EXPECT_EQ(u01(1, 0), 0x1p-32 + 0x1p-54);
  // Below 1/2 every value is exactly (k + 1/2) 2^-53: k = 2^52 - 1.
  EXPECT_EQ(u01(0x7FFFFFFF, 0xFFFFFFFF), 0x1.fffffffffffffp-2);
  // From 1/2 on, k 2^-53 + 2^-54 is a tie that rounds to even: k = 2^52 gives 1/2 exactly,
  // k = 2^52 + 1 gives 1/2 + 2^-52, k = 2^53 - 2 gives 1 - 2^-52.
  EXPECT_EQ(u01(0x80000000, 0), 0.5);
  EXPECT_EQ(u01(0x80000000, 0x800), 0.5 + 0x1p-52);
  EXPECT_EQ(u01(0xFFFFFFFF, 0xFFFFF7FF), 0x1.ffffffffffffep-1);
  // All-one words: k = 2^53 - 1 is odd, so the tie would round UP to exactly 1.0; u01 clamps
  // it to the largest double below 1 (tests/data/test_u01.cpp: no other k changes).
  EXPECT_EQ(u01(0xFFFFFFFF, 0xFFFFFFFF), 0x1.fffffffffffffp-1);
  EXPECT_LT(u01(0xFFFFFFFF, 0xFFFFFFFF), 1.0);
}

TEST(U01, BelowOneHalfIsExactlyHalfAStepOffset) {
  // Walk k < 2^52 with a fixed stride; compare with the exact (2k + 1) 2^-54 in long double.
  for (std::uint64_t k = 0; k < (std::uint64_t{1} << 52); k += 0x0000123456789ABull) {
    const auto hi = static_cast<std::uint32_t>(k >> 21);
    const auto lo = static_cast<std::uint32_t>((k & 0x1FFFFF) << 11);
    const long double exact = (2.0L * static_cast<long double>(k) + 1.0L) * 0x1p-54L;
    EXPECT_EQ(static_cast<long double>(sb::data::u01(hi, lo)), exact) << "k = " << k;
  }
}

TEST(Streams, ElementsMapToBlocksAndHalves) {
  const std::uint64_t seed = 7;
  for (std::uint64_t e : {0ull, 1ull, 2ull, 3ull, 0x1FFFFFFFFull, 0x200000000ull, 0x200000001ull}) {
    for (std::uint32_t stream : {0u, 5u}) {
      const auto u = sb::data::uniform_pair(sb::data::philox_words(seed, e / 2, stream));
      EXPECT_EQ(sb::data::uniform(seed, e, stream), (e % 2) ? u.b : u.a);
      const auto z = sb::data::box_muller(u);
      EXPECT_EQ(sb::data::normal(seed, e, stream), (e % 2) ? z.b : z.a);
    }
  }
}

/// Distance of `x` from `exact` in ulps of the double nearest `exact`.
double ulps(double x, long double exact) {
  if (exact == 0) return x == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  const double d = static_cast<double>(exact);
  const double ulp = std::nextafter(std::fabs(d), INFINITY) - std::fabs(d);
  return static_cast<double>(std::fabs(static_cast<long double>(x) - exact) / ulp);
}

/// Box-Muller in long double, written independently of SLEEF: 2 ub = q/2 + y exactly, then
/// sinl / cosl of pi y and the quadrant.
void exact_long(double ua, double ub, long double& z0, long double& z1) {
  const long double pi = 3.141592653589793238462643383279502884L;
  const long double r = std::sqrt(-2.0L * std::log(static_cast<long double>(ua)));
  const long double x = 2.0L * ub;
  const long double q = std::nearbyint(2.0L * x);
  const long double y = x - q / 2;
  const long double s = std::sin(pi * y);
  const long double c = std::cos(pi * y);
  const long double sv[4] = {s, c, -s, -c};
  const long double cv[4] = {c, -s, -c, s};
  const int qi = static_cast<int>(static_cast<long long>(q) & 3);
  z0 = r * cv[qi];
  z1 = r * sv[qi];
}

TEST(BoxMuller, WithinThreeUlpsOfLongDouble) {
  // SLEEF log (<= 1 ulp) and sincospi (<= 0.506), sqrt and the product: ~2 ulps seen.
  std::vector<sb::data::Pair> inputs;
  const double edges_a[] = {0x1p-54,
                            0x1.8p-53,
                            0x1p-30,
                            0.25,
                            0.5,
                            0.734375,
                            0.75,
                            0.984375,
                            0x1.fffffffffffffp-2,
                            0.5 + 0x1p-52,
                            0x1.ffffffffffffep-1,
                            0x1.fffffffffffffp-1};
  const double edges_b[] = {0x1p-54,
                            0x1p-40,
                            0.125,
                            0.125 + 0x1p-54,
                            0.25 - 0x1p-54,
                            0.25,
                            0.25 + 0x1p-53,
                            0.375,
                            0.5,
                            0.5 + 0x1p-53,
                            0.75,
                            0.875,
                            0x1.ffffffffffffep-1,
                            0x1.fffffffffffffp-1};
  for (double a : edges_a)
    for (double b : edges_b) inputs.push_back({a, b});
  for (std::uint64_t block = 0; block < 200000; ++block)
    inputs.push_back(sb::data::uniform_pair(sb::data::philox_words(1234, block * 7919)));
  double worst = 0;
  for (const auto& u : inputs) {
    long double z0;
    long double z1;
    exact_long(u.a, u.b, z0, z1);
    const sb::data::Pair z = sb::data::box_muller(u);
    const double e = std::max(ulps(z.a, z0), ulps(z.b, z1));
    worst = std::max(worst, e);
    ASSERT_LE(e, 3.0) << "ua " << u.a << " ub " << u.b;
  }
  RecordProperty("worst_ulps", std::to_string(worst));
}

TEST(BoxMuller, UniformOfOneGivesZero) {
  // u01 never returns 1.0 (it clamps to 1 - 2^-53), but box_muller accepts (0, 1]: log 1 = 0.
  const sb::data::Pair z = sb::data::box_muller({1.0, 0.3});
  EXPECT_EQ(z.a, 0.0);
  EXPECT_EQ(z.b, 0.0);
}

}  // namespace
