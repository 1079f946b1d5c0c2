#include "scalebench/box_muller_tables.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace sb::data {
namespace {

/// The double whose high word is `hi` and low word 0.
double from_hi(std::uint32_t hi) {
  const std::uint64_t bits = static_cast<std::uint64_t>(hi) << 32;
  double d = 0;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

BoxMullerTables build() {
  BoxMullerTables t{};
  // Intervals of m: 2^12 consecutive high words from that of sqrt(1/2) each.
  constexpr std::uint32_t kBase = 0x3FE6A09Eu;
  constexpr int kShift = 20 - BoxMullerTables::kLogBits;
  for (int j = 0; j < BoxMullerTables::kLogEntries; ++j) {
    const long double lo = from_hi(kBase + (static_cast<std::uint32_t>(j) << kShift));
    const long double hi = from_hi(kBase + (static_cast<std::uint32_t>(j + 1) << kShift));
    const long double c = (lo <= 1.0L && 1.0L < hi) ? 1.0L : (lo + hi) / 2;
    const double inv = static_cast<double>(1.0L / c);
    t.log[j] = {-2.0 * inv, static_cast<double>(2.0L * std::log(static_cast<long double>(inv)))};
  }
  // sin and cos of the first quadrant, then rotated by whole quadrants (exact signs and zeros).
  constexpr int kQuarter = BoxMullerTables::kSinCosSteps / 4;
  const long double pi = 3.141592653589793238462643383279502884L;
  for (int j = 0; j <= BoxMullerTables::kSinCosSteps; ++j) {
    const int q = j / kQuarter;
    const long double a = 2 * pi * (j % kQuarter) / BoxMullerTables::kSinCosSteps;
    const long double sl = std::sin(a);
    const long double cl = std::cos(a);
    const double s = static_cast<double>(sl);
    const double c = static_cast<double>(cl);
    // sin + cos and cos - sin of the whole angle, rotated like sin and cos
    const double plus = static_cast<double>(sl + cl);
    const double minus = static_cast<double>(cl - sl);
    switch (q % 4) {
      case 0:
        t.sum[j] = {plus, minus};
        break;
      case 1:  // sin = c, cos = -s
        t.sum[j] = {minus, -plus};
        break;
      case 2:
        t.sum[j] = {-plus, -minus};
        break;
      default:  // sin = -c, cos = s
        t.sum[j] = {-minus, plus};
        break;
    }
    switch (q % 4) {
      case 0:
        t.sincos[j] = {s, c};
        break;
      case 1:
        t.sincos[j] = {c, -s};
        break;
      case 2:
        t.sincos[j] = {-s, -c};
        break;
      default:
        t.sincos[j] = {-c, s};
        break;
    }
  }
  return t;
}

}  // namespace

const BoxMullerTables& box_muller_tables() {
  static const BoxMullerTables tables = build();
  return tables;
}

}  // namespace sb::data
