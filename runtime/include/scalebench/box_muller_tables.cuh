#pragma once
/// @file box_muller_tables.cuh
/// Table-driven Box-Muller on the GPU: the function of philox.cuh's box_muller() with fewer
/// instructions than box_muller_fast(). Table lookups (box_muller_tables.hpp, in shared memory)
/// replace most of the polynomial work and all of the quadrant logic:
///   -2 ln ua: one table entry, a degree-5 polynomial in |s| <= 2^-10 (8 fp64 instructions);
///   sin, cos of 2 pi ub: one table entry, degree-5/6 polynomials in |d| <= pi/512 and the
///   angle-addition formulas (16 fp64 instructions, no selects).
/// Five coefficients need 53 bits (TableConstants: 10 registers in a hot loop); the rest are
/// immediates.
/// Within a few ulps of the CPU reference, like box_muller_fast (tests/gpu/test_philox_gpu.cu).

#include <cuda_runtime.h>

#include "scalebench/box_muller_tables.hpp"
#include "scalebench/philox.cuh"

namespace sb::data::gpu {

/// The polynomial coefficients of box_muller_tab() that need all 53 bits. Hot loops keep them in
/// registers. The others have their low 32 bits zero (rounded to 21 bits: their terms are small
/// enough, checked in tests/gpu/test_philox_gpu.cu) and are fp64 immediates of the instructions.
struct TableConstants {
  double log_q1;         ///< 1/12: -2 log1p(-s/2) = s + s^2 (1/4 + s/12 + s^2/32 + s^3/80)
  double sin_s0;         ///< 2 pi: sin(2 pi t) = t (S0 + S1 t^2 + S2 t^4), |t| <= 1/1024 (Taylor)
  double sin_s1;         ///< -(2 pi)^3 / 6
  double cos_c1;         ///< -(2 pi)^2 / 2: cos(2 pi t) - 1 = t^2 (C1 + C2 t^2 + C3 t^4)
  double minus_two_ln2;  ///< -2 ln 2
};

inline constexpr TableConstants kTableConstants = {0x1.5555555555555p-4, 0x1.921fb54442d18p+2,
                                                   -0x1.4abbce625be53p+5, -0x1.3bd3cc9be45dep+4,
                                                   -0x1.62e42fefa39efp+0};

namespace detail {
[[maybe_unused]] static __constant__ TableConstants kTable = kTableConstants;
}  // namespace detail

/// Copies the tables from global memory into `shared` (a __shared__ object), all kBlock threads
/// of the CTA taking part; the caller synchronises (__syncthreads) before use. Every load is
/// issued before the first store: one memory latency per grid start instead of one per 4 KB
/// (see bench_subset_mean_gpu BM_SubsetMeanFused).
template <unsigned kBlock>
__device__ __forceinline__ void load_box_muller_tables(const BoxMullerTables* global,
                                                       BoxMullerTables* shared) {
  constexpr unsigned kWords = sizeof(BoxMullerTables) / sizeof(double2);
  constexpr unsigned kPer = (kWords + kBlock - 1) / kBlock;
  const auto* src = reinterpret_cast<const double2*>(global);
  auto* dst = reinterpret_cast<double2*>(shared);
  double2 v[kPer];
#pragma unroll
  for (unsigned k = 0; k < kPer; ++k) {
    const unsigned i = threadIdx.x + k * kBlock;
    if (i < kWords) v[k] = __ldg(&src[i]);
  }
#pragma unroll
  for (unsigned k = 0; k < kPer; ++k) {
    const unsigned i = threadIdx.x + k * kBlock;
    if (i < kWords) dst[i] = v[k];
  }
}

namespace detail {

/// r = sqrt(-2 ln ua) for ua in [2^-54, 1 - 2^-53] (u01's range; ua = 1 would give NaN).
__device__ __forceinline__ double tab_radius(double ua, const BoxMullerTables& t,
                                             const TableConstants& k) {
  // ua = 2^e m, m in [sqrt(1/2), sqrt(2)) (as detail::minus_two_log)
  const int hi = __double2hiint(ua);
  const int tmp = hi - 0x3FE6A09E;  // high word of sqrt(1/2)
  const int e = tmp >> 20;
  const double m = __hiloint2double(hi - (e << 20), __double2loint(ua));
  constexpr int kShift = 20 - BoxMullerTables::kLogBits;
  const double2 lg =
      reinterpret_cast<const double2*>(t.log)[(tmp >> kShift) & (BoxMullerTables::kLogEntries - 1)];
  const double s = fma(m, lg.x, 2.0);               // -2 (m / c - 1)
  double q = fma(0x1.9999a00000000p-7, s, 0x1p-5);  // ~1/80, 1/32
  q = fma(q, s, k.log_q1);
  q = fma(q, s, 0x1p-2);
  const double y = fma(static_cast<double>(e), k.minus_two_ln2, lg.y) + fma(s * s, q, s);
  return sqrt_positive(y);
}

/// 2 pi ub = a + d, a = 2 pi j / 512 (the table row j), |d| <= pi / 512: j, sin d, cos d - 1.
struct TabAngle {
  int j;
  double sd;  ///< sin d
  double cd;  ///< cos d - 1
};

__device__ __forceinline__ TabAngle tab_angle(double ub, const TableConstants& k) {
  // ub = (j + t') / 512, j = rint(512 ub), tt = t' / 512 in [-2^-10, 2^-10] (all exact: adding
  // 1.5 2^43 rounds ub to a multiple of 2^-9, whose low word is then j)
  constexpr double kRound = 0x1.8p43;
  const double js = ub + kRound;
  const double tt = ub - (js - kRound);
  const double x = tt * tt;
  const double sd = tt * fma(fma(0x1.466bc00000000p+6, x, k.sin_s1), x, k.sin_s0);  // sin(d)
  const double cd =
      x * fma(fma(-0x1.55d3c00000000p+6, x, 0x1.03c1f00000000p+6), x, k.cos_c1);  // cos(d) - 1
  return {__double2loint(js), sd, cd};
}

/// What both table Box-Mullers begin with: the radius, the angle and its row of `table` (the
/// sincos or the sum table of `t`).
struct TabStart {
  double r;
  TabAngle g;
  double2 row;
};

__device__ __forceinline__ TabStart tab_start(double ua, double ub, const BoxMullerTables& t,
                                              const TableConstants& k, const TableEntry* table) {
  const double r = tab_radius(ua, t, k);
  const TabAngle g = tab_angle(ub, k);
  return {r, g, reinterpret_cast<const double2*>(table)[g.j]};
}

}  // namespace detail

/// A pair of normals before their last multiplication: z0 = r c, z1 = r s. A reduction folds
/// each product into its sum with one fma (s0 = fma(r, c, s0)) instead of a multiply and an add.
struct PolarPair {
  double r;  ///< sqrt(-2 ln ua)
  double c;  ///< cos(2 pi ub)
  double s;  ///< sin(2 pi ub)
};

/// The sum of a pair of normals before its last multiplication: z0 + z1 = r f.
struct PolarSum {
  double r;  ///< sqrt(-2 ln ua)
  double f;  ///< cos(2 pi ub) + sin(2 pi ub)
};

/// Box-Muller of uniforms ua in [2^-54, 1 - 2^-53] (u01's range; ua = 1 would give NaN) and ub
/// in [2^-54, 1], with the tables `t` (in shared memory), before the last multiplication.
__device__ __forceinline__ PolarPair box_muller_tab_polar(double ua, double ub,
                                                          const BoxMullerTables& t,
                                                          const TableConstants& k) {
  const detail::TabStart b = detail::tab_start(ua, ub, t, k, t.sincos);
  const double2 sc = b.row;  // sin a, cos a
  // sin(a + d) = sin a + (cos a sin d + sin a (cos d - 1)), the small correction rounded first
  // (1.65 ulp worst instead of 2.5 with two nested FMAs)
  const double sn = sc.x + fma(sc.y, b.g.sd, sc.x * b.g.cd);
  const double cs = sc.y + fma(-sc.x, b.g.sd, sc.y * b.g.cd);  // cos(a + d)
  return {b.r, cs, sn};
}

/// z0 + z1 of box_muller_tab_polar, before the last multiplication, from the table of
/// sin a + cos a and cos a - sin a:
///   cos(a + d) + sin(a + d) = (sin a + cos a) + (cos a - sin a) sin d
///                             + (sin a + cos a)(cos d - 1),
/// three fp64 instructions after the shared radius and angle instead of six for both normals.
__device__ __forceinline__ PolarSum box_muller_tab_sum_polar(double ua, double ub,
                                                             const BoxMullerTables& t,
                                                             const TableConstants& k) {
  const detail::TabStart b = detail::tab_start(ua, ub, t, k, t.sum);
  const double2 pm = b.row;  // sin a + cos a, cos a - sin a
  return {b.r, pm.x + fma(pm.y, b.g.sd, pm.x * b.g.cd)};
}

/// The two normals of box_muller_tab_polar.
__device__ __forceinline__ Normals box_muller_tab(double ua, double ub, const BoxMullerTables& t,
                                                  const TableConstants& k) {
  const PolarPair z = box_muller_tab_polar(ua, ub, t, k);
  return {z.r * z.c, z.r * z.s};
}

/// z0 + z1 of box_muller_tab(ua, ub, t, k) (box_muller_tab_sum_polar): within a few ulps of the
/// larger normal.
__device__ __forceinline__ double box_muller_tab_sum(double ua, double ub, const BoxMullerTables& t,
                                                     const TableConstants& k) {
  const PolarSum z = box_muller_tab_sum_polar(ua, ub, t, k);
  return z.r * z.f;
}

/// box_muller_tab with the coefficients from constant memory.
__device__ __forceinline__ Normals box_muller_tab(double ua, double ub, const BoxMullerTables& t) {
  return box_muller_tab(ua, ub, t, detail::kTable);
}

/// box_muller_tab_sum with the coefficients from constant memory.
__device__ __forceinline__ double box_muller_tab_sum(double ua, double ub,
                                                     const BoxMullerTables& t) {
  return box_muller_tab_sum(ua, ub, t, detail::kTable);
}

}  // namespace sb::data::gpu
