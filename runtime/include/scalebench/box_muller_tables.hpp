#pragma once
/// @file box_muller_tables.hpp
/// Lookup tables of the table-driven Box-Muller on the GPU (box_muller_tables.cuh), built once
/// on the host in long double and copied to the device; kernels keep them in shared memory.
///
/// -2 ln u: u = 2^E m with m in [sqrt(1/2), sqrt(2)) (the bit trick of philox.cuh); the top 10
/// bits of m's offset from sqrt(1/2) in the bit pattern pick an interval of m and an entry
///   log[j] = { -2 / c_j, 2 ln(1 / c_j) }      (1 / c_j rounded to double first; both exact
///                                              functions of that double)
/// where c_j is the interval's centre (exactly 1 for the interval holding 1), so that
///   s = fma(m, -2 / c_j, 2) = -2 (m / c_j - 1), |s| <= 2^-10, and
///   -2 ln u = -2 E ln 2 + 2 ln(1 / c_j) + (s + s^2/4 + s^3/12 + s^4/32 + s^5/80)
/// (the next term, s^6/192, is below 2^-57 of s). 1024 entries rather than 256 save the
/// polynomial one degree (one fp64 instruction per pair) for 12 KB more shared memory.
/// sin and cos of 2 pi ub: ub 512 = j + t with j = rint(ub 512), |t| <= 1/2 (both exact);
///   sincos[j] = { sin(2 pi j / 512), cos(2 pi j / 512) }   (exact 0 and +-1 at the quadrants)
/// and sin/cos of the remainder d = t pi / 256 (|d| <= pi / 512) from short polynomials.
/// sum[j] = { sin a + cos a, cos a - sin a } (a = 2 pi j / 512) gives z0 + z1 = r (cos + sin)
/// of the pair in half the work when only the sum of the two normals is needed:
///   cos(a + d) + sin(a + d) = sum.a + sum.b sin d + sum.a (cos d - 1).

namespace sb::data {

/// One table entry: two doubles, 16-byte aligned so that a kernel reads it with one load.
struct alignas(16) TableEntry {
  double a;
  double b;
};

struct BoxMullerTables {
  static constexpr int kLogBits = 10;
  static constexpr int kLogEntries = 1 << kLogBits;
  static constexpr int kSinCosSteps = 512;  ///< intervals of the circle (j = 0 .. 512)

  TableEntry log[kLogEntries];          ///< { -2 / c_j, 2 ln(1 / c_j) }
  TableEntry sincos[kSinCosSteps + 1];  ///< { sin, cos } of 2 pi j / 512
  TableEntry sum[kSinCosSteps + 1];     ///< { sin + cos, cos - sin } of 2 pi j / 512
};

/// The tables (built on first use, then the same object).
const BoxMullerTables& box_muller_tables();

}  // namespace sb::data
