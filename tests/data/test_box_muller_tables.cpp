/// The lookup tables of the GPU's table-driven Box-Muller (box_muller_tables.hpp), built on the
/// host: exact quadrant values, entries (sin and cos, and their sum and difference) against long
/// double, and the bound on the log's reduced argument that the device polynomial's degree rests
/// on. The device function itself is tested against the CPU normals in
/// tests/gpu/test_philox_gpu.cu.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>

#include "scalebench/box_muller_tables.hpp"

namespace {

TEST(BoxMullerTables, ExactWhereTheyMustBe) {
  const auto& t = sb::data::box_muller_tables();
  constexpr int kSteps = sb::data::BoxMullerTables::kSinCosSteps;
  const double quadrant[5][2] = {{0, 1}, {1, 0}, {0, -1}, {-1, 0}, {0, 1}};
  for (int q = 0; q <= 4; ++q) {
    EXPECT_EQ(t.sincos[q * kSteps / 4].a, quadrant[q][0]) << q;
    EXPECT_EQ(t.sincos[q * kSteps / 4].b, quadrant[q][1]) << q;
  }
  for (int j = 0; j <= kSteps; ++j) {
    const long double a = 2 * 3.141592653589793238462643383279502884L * j / kSteps;
    EXPECT_NEAR(t.sincos[j].a, static_cast<double>(std::sin(a)), 0x1p-52) << j;
    EXPECT_NEAR(t.sincos[j].b, static_cast<double>(std::cos(a)), 0x1p-52) << j;
    // the sum table: sin + cos and cos - sin of the same angle, each rounded once
    EXPECT_NEAR(t.sum[j].a, static_cast<double>(std::sin(a) + std::cos(a)), 0x1p-52) << j;
    EXPECT_NEAR(t.sum[j].b, static_cast<double>(std::cos(a) - std::sin(a)), 0x1p-52) << j;
  }
  const double sum_quadrant[5][2] = {{1, 1}, {1, -1}, {-1, -1}, {-1, 1}, {1, 1}};
  for (int q = 0; q <= 4; ++q) {
    EXPECT_EQ(t.sum[q * kSteps / 4].a, sum_quadrant[q][0]) << q;
    EXPECT_EQ(t.sum[q * kSteps / 4].b, sum_quadrant[q][1]) << q;
  }
  // log: the entry of m = 1 is {-2, 0}; every m of an interval has |s| = |fma(m, -2/c, 2)| <=
  // 2^-kLogBits, and the entry's second half is 2 ln(1/c) of the same 1/c.
  int ones = 0;
  for (int j = 0; j < sb::data::BoxMullerTables::kLogEntries; ++j) {
    const auto& e = t.log[j];
    if (e.a == -2.0) {
      ++ones;
      EXPECT_EQ(e.b, 0.0);
    }
    EXPECT_NEAR(e.b, static_cast<double>(2.0L * std::log(e.a / -2.0L)), 0x1p-53);
  }
  EXPECT_EQ(ones, 1);
  std::mt19937_64 rng(5);
  for (int i = 0; i < 1 << 20; ++i) {
    // m in [sqrt(1/2), sqrt(2)) as the device reduces it; the entry from the same bits
    const std::uint64_t off = rng() % ((std::uint64_t{1} << 52));
    const std::uint64_t bits = (std::uint64_t{0x3FE6A09E} << 32) + off;
    double m = 0;
    std::memcpy(&m, &bits, sizeof m);
    constexpr int kBits = sb::data::BoxMullerTables::kLogBits;
    const auto& e = t.log[off >> (52 - kBits)];
    const double s = std::fma(m, e.a, 2.0);
    ASSERT_LE(std::fabs(s), std::ldexp(1.0, -kBits)) << std::hexfloat << m;
  }
}

}  // namespace
