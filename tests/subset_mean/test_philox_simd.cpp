// The fast data kernels (philox_simd.hpp) against the reference (philox.hpp), for every SIMD
// variant this CPU runs and both math choices: Philox known answers, words and uniforms bit for
// bit, normals within a few ulps, log/sincospi accuracy against long double, sums, fills.
#include <gtest/gtest.h>

#include <Random123/philox.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "scalebench/error.hpp"
#include "scalebench/philox.hpp"
#include "subset_mean/philox_simd.hpp"

namespace {

namespace simd = sb::data::simd;

struct Variant {
  simd::Isa isa;
  simd::Math math;
};

std::vector<Variant> variants() {
  std::vector<Variant> v;
  for (simd::Isa isa : simd::available_isas())
    for (simd::Math math : {simd::Math::own, simd::Math::sleef}) v.push_back({isa, math});
  return v;
}

std::string name_of(const testing::TestParamInfo<Variant>& info) {
  return std::string(simd::to_string(info.param.isa)) + "_" +
         std::string(simd::to_string(info.param.math));
}

double ulps(double x, long double exact) {
  if (exact == 0) return x == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  const double d = static_cast<double>(exact);
  const double ulp = std::nextafter(std::fabs(d), INFINITY) - std::fabs(d);
  return static_cast<double>(std::fabs(static_cast<long double>(x) - exact) / ulp);
}

double ulps(double x, double reference) {
  return ulps(x, static_cast<long double>(reference));
}

class Kernels : public testing::TestWithParam<Variant> {
 protected:
  const simd::Kernels& k() const { return simd::kernels(GetParam().isa, GetParam().math); }
};

TEST_P(Kernels, PhiloxKnownAnswers) {
  // Random123's tests/kat_vectors, "philox4x32 10": counter, key, expected.
  const std::uint32_t ctr[3][4] = {{0x00000000, 0x00000000, 0x00000000, 0x00000000},
                                   {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                                   {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}};
  const std::uint32_t key[3][2] = {
      {0x00000000, 0x00000000}, {0xffffffff, 0xffffffff}, {0xa4093822, 0x299f31d0}};
  const std::uint32_t expected[3][4] = {{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
                                        {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
                                        {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}};
  for (int i = 0; i < 3; ++i) {
    std::uint32_t out[4] = {};
    k().philox(key[i], ctr[i], 1, out);
    for (int w = 0; w < 4; ++w) EXPECT_EQ(out[w], expected[i][w]) << "vector " << i;
  }
}

TEST_P(Kernels, PhiloxOfRandomCountersMatchesRandom123) {
  std::mt19937_64 rng(11);
  r123::Philox4x32 gen;
  for (std::size_t count : {1u, 3u, 8u, 17u, 100u}) {
    const std::uint32_t key[2] = {static_cast<std::uint32_t>(rng()),
                                  static_cast<std::uint32_t>(rng())};
    std::vector<std::uint32_t> ctr(4 * count);
    for (auto& c : ctr) c = static_cast<std::uint32_t>(rng());
    std::vector<std::uint32_t> out(4 * count);
    k().philox(key, ctr.data(), count, out.data());
    for (std::size_t i = 0; i < count; ++i) {
      const auto r =
          gen({{ctr[4 * i], ctr[4 * i + 1], ctr[4 * i + 2], ctr[4 * i + 3]}}, {{key[0], key[1]}});
      for (int w = 0; w < 4; ++w) ASSERT_EQ(out[4 * i + w], r.v[w]) << "counter " << i;
    }
  }
}

struct Range {
  std::uint64_t seed;
  std::uint32_t stream;
  std::uint64_t first;
  std::size_t count;
};

std::vector<Range> ranges() {
  std::vector<Range> r = {{42, 0, 0, 1},
                          {42, 0, 0, 37},
                          {0, 0, 0xFFFFFFF0ull, 40},  // block crosses 2^32 (hi word changes)
                          {0xFFFFFFFFFFFFFFFFull, 0xFFFFFFFFu, 0xFFFFFFFFFFFFFF00ull, 200},
                          {0x123456789ull, 7, 1ull << 40, 1000}};
  std::mt19937_64 rng(5);
  for (int i = 0; i < 20; ++i)
    r.push_back({rng(), static_cast<std::uint32_t>(rng() % 4), rng() >> 2, 1 + rng() % 70});
  r.push_back({rng(), 0, rng() >> 1, 100000});
  return r;
}

TEST_P(Kernels, WordsAndUniformsAreBitIdentical) {
  for (const Range& r : ranges()) {
    std::vector<std::uint32_t> w(4 * r.count);
    std::vector<double> u(2 * r.count);
    k().words(r.seed, r.stream, r.first, r.count, w.data());
    k().uniforms(r.seed, r.stream, r.first, r.count, u.data());
    for (std::size_t i = 0; i < r.count; ++i) {
      const sb::data::Words ref = sb::data::philox_words(r.seed, r.first + i, r.stream);
      for (int j = 0; j < 4; ++j) ASSERT_EQ(w[4 * i + j], ref[j]) << "block " << r.first + i;
      const sb::data::Pair ur = sb::data::uniform_pair(ref);
      ASSERT_EQ(u[2 * i], ur.a) << "block " << r.first + i;
      ASSERT_EQ(u[2 * i + 1], ur.b) << "block " << r.first + i;
    }
  }
}

TEST_P(Kernels, U01OfEdgeIntegersIsBitIdentical) {
  // Raw 53-bit k through the same vector code as `uniforms`: the ends, the half and binade
  // boundaries, and k = 2^53 - 1, whose sum rounds to 1.0 and which u01 clamps to 1 - 2^-53.
  constexpr std::uint64_t kAll = std::uint64_t{1} << 53;
  std::vector<std::uint64_t> ks = {0,
                                   1,
                                   2,
                                   kAll / 4 - 1,
                                   kAll / 4,
                                   kAll / 2 - 2,
                                   kAll / 2 - 1,
                                   kAll / 2,
                                   kAll / 2 + 1,
                                   kAll - 3,
                                   kAll - 2,
                                   kAll - 1};
  for (int j = 1; j < 53; ++j)
    for (std::uint64_t d = 0; d < 3; ++d) ks.push_back((std::uint64_t{1} << j) - 1 + d);
  for (std::uint64_t d = 0; d < 40; ++d) ks.push_back(kAll - 1 - d);
  std::mt19937_64 rng(53);
  for (int i = 0; i < 100000; ++i) ks.push_back(rng() >> 11);
  for (std::size_t count : {std::size_t{1}, std::size_t{3}, ks.size()}) {
    // 1 and 3: the clamped k alone, in partial vectors; then every k
    const std::vector<std::uint64_t> in =
        count < ks.size() ? std::vector<std::uint64_t>(count, kAll - 1) : ks;
    std::vector<double> out(count);
    k().u01(in.data(), count, out.data());
    for (std::size_t i = 0; i < count; ++i) {
      const std::uint64_t kk = in[i];
      const double ref = sb::data::u01(static_cast<std::uint32_t>(kk >> 21),
                                       static_cast<std::uint32_t>((kk & 0x1FFFFF) << 11));
      ASSERT_EQ(out[i], ref) << "k = " << kk;
      ASSERT_LT(out[i], 1.0) << "k = " << kk;
    }
  }
  double top = 0;
  const std::uint64_t last = kAll - 1;
  k().u01(&last, 1, &top);
  EXPECT_EQ(top, 0x1.fffffffffffffp-1);
}

TEST_P(Kernels, NormalsWithinFourUlpsOfTheReference) {
  // The scalar SLEEF variant IS the reference (same calls in the same order): bit for bit.
  const bool exact = GetParam().isa == simd::Isa::scalar && GetParam().math == simd::Math::sleef;
  double worst = 0;
  for (const Range& r : ranges()) {
    std::vector<double> z(2 * r.count);
    k().normals(r.seed, r.stream, r.first, r.count, z.data());
    for (std::size_t i = 0; i < r.count; ++i) {
      const sb::data::Pair ref = sb::data::box_muller(
          sb::data::uniform_pair(sb::data::philox_words(r.seed, r.first + i, r.stream)));
      if (exact) {
        ASSERT_EQ(z[2 * i], ref.a);
        ASSERT_EQ(z[2 * i + 1], ref.b);
      }
      const double e = std::max(ulps(z[2 * i], ref.a), ulps(z[2 * i + 1], ref.b));
      worst = std::max(worst, e);
      ASSERT_LE(e, 4.0) << "block " << r.first + i;
    }
  }
  RecordProperty("worst_ulps", std::to_string(worst));
}

/// Box-Muller in long double with exact reduction of 2 ub (independent of both math choices).
void exact_normals(double ua, double ub, long double& z0, long double& z1) {
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

TEST_P(Kernels, NormalsWithinThreeUlpsOfLongDouble) {
  constexpr std::size_t kCount = 200000;
  std::vector<double> u(2 * kCount);
  std::vector<double> z(2 * kCount);
  k().uniforms(2024, 1, 1ull << 33, kCount, u.data());
  k().normals(2024, 1, 1ull << 33, kCount, z.data());
  double worst = 0;
  for (std::size_t i = 0; i < kCount; ++i) {
    long double z0;
    long double z1;
    exact_normals(u[2 * i], u[2 * i + 1], z0, z1);
    const double e = std::max(ulps(z[2 * i], z0), ulps(z[2 * i + 1], z1));
    worst = std::max(worst, e);
    ASSERT_LE(e, 3.0) << "ua " << u[2 * i] << " ub " << u[2 * i + 1];
  }
  RecordProperty("worst_ulps", std::to_string(worst));
}

TEST_P(Kernels, LogOfOneIsExactlyZero) {
  // u01 never gives 1.0 (it clamps to 1 - 2^-53), but log accepts (0, 1]: log 1 must be 0.
  const double x = 1.0;
  double lg = -1;
  k().log(&x, 1, &lg);
  EXPECT_EQ(lg, 0.0);
}

/// log of a set that covers the reduction's edges: the sub-interval boundaries of
/// [0.734375, 1.46875) scaled by every power of two down to 2^-54, their neighbours, u01's
/// extremes, and random values of (0, 1).
std::vector<double> log_inputs() {
  std::vector<double> x;
  for (int e = -54; e <= 0; ++e) {
    for (int j = 0; j <= 16; ++j) {
      const double b = std::ldexp(j < 9 ? (23.5 + j) / 32 : (7.5 + j) / 16, e);
      for (double v : {std::nextafter(b, 0.0), b, std::nextafter(b, 2.0)})
        if (v > 0 && v <= 1) x.push_back(v);
    }
    x.push_back(std::ldexp(0.75, e));
    x.push_back(std::ldexp(1.0, e));
  }
  for (double v : {0x1p-54, 0x1.8p-53, 0.5, 0x1.ffffffffffffep-1, 0x1.fffffffffffffp-1, 1.0})
    x.push_back(v);
  std::mt19937_64 rng(3);
  for (int i = 0; i < 300000; ++i) {
    const double u = static_cast<double>(rng() >> 11) * 0x1p-53;
    if (u > 0) x.push_back(i % 2 ? u : std::ldexp(u, -static_cast<int>(rng() % 54)));
    if (i % 3 == 0) x.push_back(1.0 - static_cast<double>(rng() >> 20) * 0x1p-53);  // near 1
  }
  return x;
}

TEST_P(Kernels, LogWithinItsUlpBound) {
  // own: bound with a margin over its worst case (the worst_ulps property); SLEEF's u10: 1.0.
  const double bound = GetParam().math == simd::Math::own ? 0.6 : 1.0;
  const std::vector<double> x = log_inputs();
  std::vector<double> y(x.size());
  k().log(x.data(), x.size(), y.data());
  double worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double e = ulps(y[i], std::log(static_cast<long double>(x[i])));
    worst = std::max(worst, e);
    ASSERT_LE(e, bound) << "log(" << std::hexfloat << x[i] << ")";
  }
  RecordProperty("worst_ulps", std::to_string(worst));
}

/// sinpi / cospi of x in [0, 2] in long double, with exact reduction.
void exact_sincospi(double x, long double& s, long double& c) {
  const long double pi = 3.141592653589793238462643383279502884L;
  const long double q = std::nearbyint(2.0L * x);
  const long double y = static_cast<long double>(x) - q / 2;
  const long double sy = std::sin(pi * y);
  const long double cy = std::cos(pi * y);
  const long double sv[4] = {sy, cy, -sy, -cy};
  const long double cv[4] = {cy, -sy, -cy, sy};
  const int qi = static_cast<int>(static_cast<long long>(q) & 3);
  s = sv[qi];
  c = cv[qi];
}

TEST_P(Kernels, SincospiWithinItsUlpBound) {
  // own: bound with a margin over its worst case (the worst_ulps property); SLEEF's u05: 0.506.
  const double bound = GetParam().math == simd::Math::own ? 0.8 : 0.6;
  std::vector<double> x;
  for (int q = 0; q <= 8; ++q) {
    const double b = q / 4.0;
    for (double v : {std::nextafter(b, -1.0), b, std::nextafter(b, 3.0), b + 0x1p-40, b - 0x1p-40})
      if (v >= 0 && v <= 2) x.push_back(v);
  }
  for (double v : {0x1p-53, 0x1p-30, 0.1, 0.2}) x.push_back(v);
  std::mt19937_64 rng(4);
  for (int i = 0; i < 300000; ++i) x.push_back(2.0 * static_cast<double>(rng() >> 11) * 0x1p-53);
  std::vector<double> s(x.size());
  std::vector<double> c(x.size());
  k().sincospi(x.data(), x.size(), s.data(), c.data());
  double worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    long double es;
    long double ec;
    exact_sincospi(x[i], es, ec);
    const double e = std::max(ulps(s[i], es), ulps(c[i], ec));
    worst = std::max(worst, e);
    ASSERT_LE(e, bound) << "sincospi(" << std::hexfloat << x[i] << ")";
  }
  RecordProperty("worst_ulps", std::to_string(worst));
}

TEST_P(Kernels, SumsAddTheKernelsOwnNormals) {
  for (const Range& r : ranges()) {
    std::vector<double> z(2 * r.count);
    k().normals(r.seed, r.stream, r.first, r.count, z.data());
    long double s0 = 0;
    long double s1 = 0;
    for (std::size_t i = 0; i < r.count; ++i) {
      s0 += z[2 * i];
      s1 += z[2 * i + 1];
    }
    // The fused sums may take cheaper paths (exact to a few 1e-16 per element, see
    // philox_simd_impl.hpp): compare with a tolerance of 1e-15 per term.
    const simd::NormalSums s = k().normal_sums(r.seed, r.stream, r.first, r.count);
    const double tol = 1e-15 * static_cast<double>(r.count);
    EXPECT_NEAR(s.z0, static_cast<double>(s0), tol) << "first " << r.first;
    EXPECT_NEAR(s.z1, static_cast<double>(s1), tol) << "first " << r.first;
    const double t = k().normal_pair_total(r.seed, r.stream, r.first, r.count);
    EXPECT_NEAR(t, static_cast<double>(s0 + s1), 2 * tol) << "first " << r.first;
  }
}

TEST_P(Kernels, ZeroCountDoesNothing) {
  const simd::NormalSums s = k().normal_sums(1, 0, 0, 0);
  EXPECT_EQ(s.z0, 0.0);
  EXPECT_EQ(s.z1, 0.0);
  EXPECT_EQ(k().normal_pair_total(1, 0, 0, 0), 0.0);
}

INSTANTIATE_TEST_SUITE_P(AllVariants, Kernels, testing::ValuesIn(variants()), name_of);

TEST(Dispatch, ScalarAlwaysAvailableAndBestIsAvailable) {
  const auto isas = simd::available_isas();
  ASSERT_FALSE(isas.empty());
  EXPECT_EQ(isas.front(), simd::Isa::scalar);
  EXPECT_TRUE(simd::available(simd::best_isa()));
  EXPECT_EQ(simd::best_kernels().isa, simd::best_isa());
  EXPECT_EQ(simd::best_kernels().math,
            simd::best_isa() == simd::Isa::scalar ? simd::Math::sleef : simd::Math::own);
  for (simd::Isa isa : {simd::Isa::scalar, simd::Isa::avx2, simd::Isa::avx512})
    if (!simd::available(isa)) {
      EXPECT_THROW((void)simd::kernels(isa), sb::EnvironmentError);
    }
}

TEST(Fill, ElementRangesWithAnyStartMatchTheReference) {
  const std::uint64_t seed = 99;
  for (std::uint64_t first : {0ull, 1ull, 2ull, 7ull, 0x1FFFFFFFFull}) {
    for (std::size_t count : {0u, 1u, 2u, 3u, 16u, 33u}) {
      std::vector<double> u(count + 1, -1.0);
      std::vector<double> z(count + 1, -1.0);
      simd::fill_uniform(seed, 3, first, count, u.data());
      simd::fill_normal(seed, 3, first, count, z.data());
      for (std::size_t i = 0; i < count; ++i) {
        EXPECT_EQ(u[i], sb::data::uniform(seed, first + i, 3));
        EXPECT_LE(ulps(z[i], sb::data::normal(seed, first + i, 3)), 4.0);
        // ... and exactly the best kernel's value for that element.
        double pair[2];
        simd::best_kernels().normals(seed, 3, (first + i) / 2, 1, pair);
        EXPECT_EQ(z[i], pair[(first + i) % 2]);
      }
      EXPECT_EQ(u[count], -1.0);  // nothing written past the end
      EXPECT_EQ(z[count], -1.0);
    }
  }
}

}  // namespace
