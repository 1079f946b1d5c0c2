#pragma once
/// @file philox_simd_impl.hpp
/// The data kernels once, for any vector width (internal: see IMPORTANT below).
///
/// A variant supplies an ops struct (philox_simd_avx512.cpp, philox_simd_avx2.cpp, and the
/// scalar one in philox_simd.cpp) with 64-bit integer lanes `vi` and double lanes `vd`; X2<V>
/// runs two of them in lock step (the AVX-512 variant: 16 blocks per step).
///
///   Philox4x32-10: each 32-bit word lives in the low half of a 64-bit lane, so one unsigned
///   32x32->64 multiply (vpmuludq) gives both halves of a product; the high half is moved down
///   with a 32-bit shuffle (port 5, beside the multiplier's port 0). Upper halves of the lanes are
///   left as garbage: the multiplier reads only the low halves, and outputs are masked once.
///   Bits are identical to Random123's philox4x32 (tests check with the published vectors).
///
///   u01: exactly philox.hpp's min(k 2^-53 + 2^-54, 1 - 2^-53), k = (hi << 21) | (lo >> 11)
///   (the product is exact, so the fused multiply-add rounds the same way as the reference's
///   multiply then add; the clamp is one vector min), with the last Philox round fused in
///   (uniforms_of_blocks).
///
///   -2 log (Math::own): x = 2^k z, z in [0.734375, 1.46875) by integer arithmetic on the bits;
///   16 sub-intervals with c_i ~ their centres and invc_i = fl(1/c_i); r = z invc_i - 1 exactly
///   as a double-double (Sterbenz); log x = k ln2 + (-log invc_i) + r + r^2 P(r), |r| <= 1/32,
///   P of degree 8 (mpmath chebyfit, relative error 3e-19); k Ln2Hi + logc_hi is exact and
///   + r is a Fast2Sum, so the one rounding that matters is the last: 0.51 ulp on (0, 1].
///
///   sincospi (Math::own): x = q/2 + y exactly with |y| <= 1/4; sinpi(y) = pi y + y^3 Q(y^2)
///   (pi as a double-double), cospi(y) = 1 + y^2 R(y^2) with the leading terms as
///   double-doubles, Q and R of degrees 6 and 7 (chebyfit); the quadrant q picks and negates.
///   0.72 ulp; the reduction is exact, so values near the zeros keep full relative accuracy.
///
///   Box-Muller as philox.hpp: r = sqrt(-2 log ua) (correctly rounded sqrt),
///   z0 = r cospi(2 ub), z1 = r sinpi(2 ub): within 2.3 ulps of the exact values, 3 of the
///   reference's (which has its own 2.2).
///
///   Sums (the fused kernels): -2 log and cospi without their double-double steps (~1 ulp), and
///   z0 + z1 = r sqrt(2) sinpi(2 ub + 1/4) by one polynomial on |y| <= 1/2 (the shifted argument
///   rounds by <= 2^-53): each term is exact to a few 1e-16 absolute. The loops are
///   software-pipelined: the next step's Philox is issued before this step's Box-Muller, so the
///   two ~100-cycle dependency chains overlap in the out-of-order window.
///
/// Coefficients were generated with (mpmath, prec 256):
///   P = chebyfit(lambda r: (log1p(r) - r) / r^2, [-1/32, 1/32], 9)
///   Q = chebyfit(lambda t: (sin(pi sqrt t) / sqrt t - pi) / t, [0, 1/16], 7)
///   R = chebyfit(lambda t: (cos(pi sqrt t) - 1) / t, [0, 1/16], 8)
///   S2 = chebyfit(lambda t: sqrt(2) sin(pi sqrt t) / sqrt t, [0, 1/4], 9)
///   for sums: -2 P refitted with degree 7; -2 log(invc_i) as one double
///   invc_i = fl(1 / c_i), c_i = (24 + i)/32 (i < 8), 1 (i = 8), (8 + i)/16 (i > 8);
///   -log(invc_i) = hi (a multiple of 2^-43) + lo; ln2 = Ln2Hi (42 bits) + Ln2Lo.
///
/// IMPORTANT: include this header only from a variant's .cpp, after defining that variant's ops
/// in an anonymous namespace, and instantiate it only there. Everything here is in an anonymous
/// namespace so that no code compiled with wide instructions has external linkage (the linker
/// could otherwise pick an AVX-512 copy of an inline function for code that runs anywhere).

#include <cstddef>
#include <cstdint>

#include "subset_mean/philox_simd_table.hpp"

namespace sb::data::simd {
namespace {  // NOLINT(google-build-namespaces): see IMPORTANT above

// Philox4x32 constants (Random123's PHILOX_M4x32_0/1 and PHILOX_W32_0/1).
constexpr std::uint64_t kPhiloxM0 = 0xD2511F53u;
constexpr std::uint64_t kPhiloxM1 = 0xCD9E8D57u;
constexpr std::uint32_t kPhiloxW0 = 0x9E3779B9u;
constexpr std::uint32_t kPhiloxW1 = 0xBB67AE85u;
constexpr int kRounds = 10;

// log: reduction tables, indexed by the top 4 mantissa bits of (bits(x) - bits(0.734375)).
constexpr std::uint64_t kLogOff = 0x3FE7800000000000ull;  // bits of 0.734375
constexpr double kLogInvC[16] = {
    0x1.5555555555555p+0, 0x1.47ae147ae147bp+0, 0x1.3b13b13b13b14p+0, 0x1.2f684bda12f68p+0,
    0x1.2492492492492p+0, 0x1.1a7b9611a7b96p+0, 0x1.1111111111111p+0, 0x1.0842108421084p+0,
    0x1.0000000000000p+0, 0x1.e1e1e1e1e1e1ep-1, 0x1.c71c71c71c71cp-1, 0x1.af286bca1af28p-1,
    0x1.999999999999ap-1, 0x1.8618618618618p-1, 0x1.745d1745d1746p-1, 0x1.642c8590b2164p-1};
// -log(invc_i) rounded to a multiple of 2^-43 (so that k Ln2Hi + it is exact) ...
constexpr double kLogCHi[16] = {-0x1.269621134d800p-2, -0x1.f991c6cb3b000p-3, -0x1.a93ed3c8ae000p-3,
                                -0x1.5bf406b544000p-3, -0x1.1178e8227e000p-3, -0x1.9335e5d594000p-4,
                                -0x1.08598b59e4000p-4, -0x1.0415d89e74000p-5, 0x0.0p+0,
                                0x1.f0a30c0118000p-5,  0x1.e27076e2b0000p-4,  0x1.5ff3070a79000p-3,
                                0x1.c8ff7c79aa000p-3,  0x1.1675cababa800p-2,  0x1.4618bc21c6000p-2,
                                0x1.739d7f6bbd000p-2};
// ... and -2 times the rest (Box-Muller's factor -2 folded in).
constexpr double kLogCLoM2[16] = {
    -2 * -0x1.c8bc1df5bb3b6p-45, -2 * -0x1.bd1ecca0cdf30p-46, -2 * 0x1.86a4350562169p-45,
    -2 * 0x1.28023eb68981cp-46,  -2 * -0x1.1e778ce2d07f2p-45, -2 * -0x1.30f5c3abd47dap-45,
    -2 * 0x1.7e9dd7009902cp-46,  -2 * -0x1.101c05cf1d753p-47, 0x0.0p+0,
    -2 * -0x1.d579e83368e91p-45, -2 * -0x1.a2c2c2af0003cp-45, -2 * 0x1.eae439f105039p-46,
    -2 * -0x1.7814f689f8434p-45, -2 * -0x1.f0fc63382a8f0p-46, -2 * -0x1.3e02f484c84ccp-46,
    -2 * 0x1.c7389314feb50p-52};
constexpr double kLn2Hi = 0x1.62e42fefa3800p-1;  // 42 bits
constexpr double kLn2Lo = 0x1.ef35793c76730p-45;
// -2 P, where log1p(r) = r + r^2 P(r) on |r| <= 1/32.
constexpr double kLogPm2[9] = {0x1.0000000000000p+0,  -0x1.5555555555521p-1, 0x1.fffffffffffa0p-2,
                               -0x1.9999999af751bp-2, 0x1.5555555695eabp-2,  -0x1.2492357975d4dp-2,
                               0x1.ffffdbf0c4765p-3,  -0x1.c7ee28ac92f04p-3, 0x1.9a59d76189686p-3};

// For sums: -2 log(invc_i) as one double, -2 ln2, and -2 P of degree 7 (relative error 4.6e-17).
constexpr double kLogCM2[16] = {0x1.269621134db91p-1,  0x1.f991c6cb3b37ap-2,  0x1.a93ed3c8ad9e5p-2,
                                0x1.5bf406b543db0p-2,  0x1.1178e8227e47ap-2,  0x1.9335e5d594988p-3,
                                0x1.08598b59e3a06p-3,  0x1.0415d89e74440p-4,  0x0.0p+0,
                                -0x1.f0a30c01162a8p-4, -0x1.e27076e2af2eap-3, -0x1.5ff3070a793d6p-2,
                                -0x1.c8ff7c79a9a20p-2, -0x1.1675cababa60fp-1, -0x1.4618bc21c5ec2p-1,
                                -0x1.739d7f6bbd007p-1};
constexpr double kM2Ln2 = -0x1.62e42fefa39efp+0;
constexpr double kLogPm2Sum[8] = {
    0x1.ffffffffffff3p-1, -0x1.555555555554ap-1, 0x1.0000000066907p-1, -0x1.9999999a5415cp-2,
    0x1.5555454f53a61p-2, -0x1.24923a9363f54p-2, 0x1.006683c32b3a0p-2, -0x1.c7d6d6880307cp-3};

// sincospi.
constexpr double kPiHi = 0x1.921fb54442d18p+1;
constexpr double kPiLo = 0x1.1a62633145c07p-53;
constexpr double kSinQ[7] = {-0x1.4abbce625be53p+2, 0x1.466bc6775aae1p+1,  -0x1.32d2cce62b872p-1,
                             0x1.50783486facaap-4,  -0x1.e3074d2614b2dp-8, 0x1.e8f036bcd3237p-12,
                             -0x1.6cc577dadd922p-16};
constexpr double kCosR0Lo = -0x1.692b272ecdaeep-52;  // kCosR[0] + kCosR0Lo = fitted R0
constexpr double kCosR[8] = {-0x1.3bd3cc9be45dep+2,  0x1.03c1f081b5ac4p+2,  -0x1.55d3c7e3cbff7p+0,
                             0x1.e1f506891ae95p-3,   -0x1.a6d1f2a086c90p-6, 0x1.f9d3870871194p-10,
                             -0x1.b6de8b8e9ba08p-14, 0x1.1e745e5e09f6dp-18};
// sqrt(2) sinpi(y) = y S2(y^2) on |y| <= 1/2 (degree 8 in y^2, relative error 3.4e-17; mpmath
// chebyfit of sqrt(2) sin(pi sqrt t) / sqrt t on [0, 1/4]).
constexpr double kSqrt2SinP[9] = {
    0x1.1c5831add62e4p+2,  -0x1.d3ba5c1c5f47dp+2,  0x1.cda1063820d89p+1,
    -0x1.b1e9f34ca3605p-1, 0x1.dbd6fd52fddd6p-4,   -0x1.558d8121aa8a4p-7,
    0x1.59bd8c66052dbp-11, -0x1.03d8ee7b2a7b5p-15, 0x1.243a926d4c14fp-20};

/// Two vectors of V processed in lock step, so that the out-of-order core always has two
/// independent dependency chains (each step is ~150 instructions with a ~170-cycle critical path:
/// Philox's ten multiplies, then log's and sincospi's polynomials).
template <class V>
struct X2 {
  static constexpr int kLanes = 2 * V::kLanes;
  struct vi {
    typename V::vi a, b;
  };
  struct vd {
    typename V::vd a, b;
  };
  using Table16 = typename V::Table16;

  static vi set1(std::uint64_t v) { return {V::set1(v), V::set1(v)}; }
  static vd set1d(double v) { return {V::set1d(v), V::set1d(v)}; }
  static vi iota(std::uint64_t base) { return {V::iota(base), V::iota(base + V::kLanes)}; }
  static vi load(const std::uint64_t* p) { return {V::load(p), V::load(p + V::kLanes)}; }
  static void store(std::uint64_t* p, vi v) {
    V::store(p, v.a);
    V::store(p + V::kLanes, v.b);
  }
  static vd loadd(const double* p) { return {V::loadd(p), V::loadd(p + V::kLanes)}; }
  static void stored(double* p, vd v) {
    V::stored(p, v.a);
    V::stored(p + V::kLanes, v.b);
  }
#define SB_X2_UNARY(R, name, T)          \
  static R name(T x) {                   \
    return {V::name(x.a), V::name(x.b)}; \
  }
#define SB_X2_BINARY(R, name, T)                   \
  static R name(T x, T y) {                        \
    return {V::name(x.a, y.a), V::name(x.b, y.b)}; \
  }
#define SB_X2_TERNARY(R, name, T)                            \
  static R name(T x, T y, T z) {                             \
    return {V::name(x.a, y.a, z.a), V::name(x.b, y.b, z.b)}; \
  }
  SB_X2_BINARY(vi, add, vi)
  SB_X2_BINARY(vi, sub, vi)
  SB_X2_BINARY(vi, and_, vi)
  SB_X2_BINARY(vi, or_, vi)
  SB_X2_BINARY(vi, xor_, vi)
  SB_X2_TERNARY(vi, xor3, vi)
  SB_X2_UNARY(vi, srli11, vi)
  SB_X2_UNARY(vi, slli32, vi)
  SB_X2_UNARY(vi, srli32, vi)
  SB_X2_UNARY(vi, srli48, vi)
  SB_X2_UNARY(vi, srli52, vi)
  SB_X2_UNARY(vi, slli62, vi)
  SB_X2_BINARY(vi, mul32, vi)
  SB_X2_UNARY(vi, hi32, vi)
  SB_X2_UNARY(vd, as_d, vi)
  SB_X2_UNARY(vi, as_i, vd)
  SB_X2_UNARY(vd, cvt_u53, vi)
  SB_X2_UNARY(vd, cvt_small, vi)
  SB_X2_BINARY(vd, add, vd)
  SB_X2_BINARY(vd, sub, vd)
  SB_X2_BINARY(vd, mul, vd)
  SB_X2_BINARY(vd, min, vd)
  SB_X2_TERNARY(vd, fma, vd)
  SB_X2_TERNARY(vd, fms, vd)
  SB_X2_UNARY(vd, sqrt, vd)
  SB_X2_UNARY(vd, sleef_log, vd)
#undef SB_X2_UNARY
#undef SB_X2_BINARY
#undef SB_X2_TERNARY
  static Table16 load_table(const double* t) {
    return V::load_table(t);
  }
  static vd lookup16(const Table16& t, vi idx) {
    return {V::lookup16(t, idx.a), V::lookup16(t, idx.b)};
  }
  static vd negate_if_bit0(vi q, vd v) {
    return {V::negate_if_bit0(q.a, v.a), V::negate_if_bit0(q.b, v.b)};
  }
  static vd negate_if_bit1(vi q, vd v) {
    return {V::negate_if_bit1(q.a, v.a), V::negate_if_bit1(q.b, v.b)};
  }
  static vd select_odd(vi q, vd x, vd y) {
    return {V::select_odd(q.a, x.a, y.a), V::select_odd(q.b, x.b, y.b)};
  }
  static vd keep_first(vd z, int n) {
    return {V::keep_first(z.a, n < V::kLanes ? n : V::kLanes),
            V::keep_first(z.b, n > V::kLanes ? n - V::kLanes : 0)};
  }
  static double reduce_add(vd x) {
    return V::reduce_add(x.a) + V::reduce_add(x.b);
  }
  static void store_interleaved(double* out, vd x, vd y) {
    V::store_interleaved(out, x.a, y.a);
    V::store_interleaved(out + 2 * V::kLanes, x.b, y.b);
  }
  static void sleef_sincospi(vd x, vd& s, vd& c) {
    V::sleef_sincospi(x.a, s.a, c.a);
    V::sleef_sincospi(x.b, s.b, c.b);
  }
};

/// Round keys of one seed: round r uses {k0 + r W0, k1 + r W1} (mod 2^32).
struct RoundKeys {
  std::uint32_t k0[kRounds];
  std::uint32_t k1[kRounds];
};

inline RoundKeys round_keys(std::uint32_t key0, std::uint32_t key1) {
  RoundKeys rk{};
  for (int r = 0; r < kRounds; ++r) {
    rk.k0[r] = key0 + static_cast<std::uint32_t>(r) * kPhiloxW0;
    rk.k1[r] = key1 + static_cast<std::uint32_t>(r) * kPhiloxW1;
  }
  return rk;
}

/// Four Philox words per lane (low 32 bits of each 64-bit lane are meaningful).
template <class V>
struct Words4 {
  typename V::vi w0, w1, w2, w3;
};

/// One Philox round: {hi(M1 x2) ^ x1 ^ k0, lo(M1 x2), hi(M0 x0) ^ x3 ^ k1, lo(M0 x0)}.
template <class V>
inline void philox_round(Words4<V>& x, std::uint32_t k0, std::uint32_t k1) {
  using vi = typename V::vi;
  const vi p0 = V::mul32(x.w0, V::set1(kPhiloxM0));
  const vi p1 = V::mul32(x.w2, V::set1(kPhiloxM1));
  x.w0 = V::xor3(V::hi32(p1), x.w1, V::set1(k0));
  x.w1 = p1;
  x.w2 = V::xor3(V::hi32(p0), x.w3, V::set1(k1));
  x.w3 = p0;
}

/// Philox4x32-10 of general counters.
template <class V>
inline Words4<V> philox10(Words4<V> x, const RoundKeys& rk) {
  for (int r = 0; r < kRounds; ++r) philox_round<V>(x, rk.k0[r], rk.k1[r]);
  return x;
}

/// The first R rounds of Philox4x32-10 of the counters {lo32(b), hi32(b), stream, 0} for lanes
/// b: the first round is specialised (its second product is a constant, its x3 is zero).
template <class V, int R = kRounds>
inline Words4<V> philox10_blocks(typename V::vi b, std::uint32_t stream, const RoundKeys& rk) {
  using vi = typename V::vi;
  const vi p0 = V::mul32(b, V::set1(kPhiloxM0));
  const std::uint64_t p1s = static_cast<std::uint64_t>(stream) * kPhiloxM1;
  Words4<V> x;
  x.w0 = V::xor_(V::srli32(b), V::set1(static_cast<std::uint32_t>(p1s >> 32) ^ rk.k0[0]));
  x.w1 = V::set1(p1s & 0xFFFFFFFFu);
  x.w2 = V::xor_(V::hi32(p0), V::set1(rk.k1[0]));
  x.w3 = p0;
  for (int r = 1; r < R; ++r) philox_round<V>(x, rk.k0[r], rk.k1[r]);
  return x;
}

/// -2 log(x) for positive normal finite x (used on (0, 1]); about 0.5 ulp. The factor -2 of
/// Box-Muller is folded into the constants (scaling by -2 is exact).
template <class V>
inline typename V::vd own_m2log(typename V::vd x, const typename V::Table16& invc_t,
                                const typename V::Table16& lch_t,
                                const typename V::Table16& lcl_t) {
  using vi = typename V::vi;
  using vd = typename V::vd;
  const vi ix = V::as_i(x);
  const vi tmp = V::sub(ix, V::set1(kLogOff));
  const vi idx = V::srli48(tmp);                                 // low 4 bits: sub-interval
  const vi kb = V::srli52(V::add(tmp, V::set1(1024ull << 52)));  // k + 1024
  const vd kd = V::sub(V::cvt_small(kb), V::set1d(1024.0));
  const vd z = V::as_d(V::sub(ix, V::and_(tmp, V::set1(0xFFF0000000000000ull))));
  const vd invc = V::lookup16(invc_t, idx);
  const vd lch = V::lookup16(lch_t, idx);
  const vd lcl = V::lookup16(lcl_t, idx);
  // r = z invc - 1 = r_hi + p_lo exactly.
  const vd p = V::mul(z, invc);
  const vd p_lo = V::fms(z, invc, p);
  const vd r = V::sub(p, V::set1d(1.0));
  const vd r2 = V::mul(r, r);
  vd poly = V::set1d(kLogPm2[8]);
  for (int i = 7; i >= 0; --i) poly = V::fma(poly, r, V::set1d(kLogPm2[i]));
  // w = k Ln2Hi + logc_hi is exact (both multiples of 2^-43, |w| < 2^6); hi = w + r by Fast2Sum
  // (|w| >= |r|, or w == 0 on the interval around 1).
  const vd w = V::fma(kd, V::set1d(kLn2Hi), lch);
  const vd hi = V::add(w, r);
  const vd ehi = V::add(V::sub(w, hi), r);
  const vd m2 = V::set1d(-2.0);
  vd lo = V::fma(kd, V::set1d(-2.0 * kLn2Lo), lcl);  // lcl holds -2 logc_lo
  // log1p(r + p_lo) = log1p(r) + p_lo (1 - r) + O(p_lo r^2): |p_lo r| reaches half an ulp.
  lo = V::fma(p_lo, V::fma(r, V::set1d(2.0), m2), lo);
  lo = V::fma(ehi, m2, lo);
  lo = V::fma(r2, poly, lo);
  return V::fma(hi, m2, lo);
}

/// -2 log(x) for sums: the same reduction without the double-double steps and with a shorter
/// polynomial; about 1 ulp, and relative accuracy kept near x = 1 (there r = x - 1 exactly).
template <class V>
inline typename V::vd own_m2log_sum(typename V::vd x, const typename V::Table16& invc_t,
                                    const typename V::Table16& lcm2_t) {
  using vi = typename V::vi;
  using vd = typename V::vd;
  const vi ix = V::as_i(x);
  const vi tmp = V::sub(ix, V::set1(kLogOff));
  const vi idx = V::srli48(tmp);
  const vi kb = V::srli52(V::add(tmp, V::set1(1024ull << 52)));
  const vd kd = V::sub(V::cvt_small(kb), V::set1d(1024.0));
  const vd z = V::as_d(V::sub(ix, V::and_(tmp, V::set1(0xFFF0000000000000ull))));
  const vd r = V::fms(z, V::lookup16(invc_t, idx), V::set1d(1.0));
  vd poly = V::set1d(kLogPm2Sum[7]);
  for (int i = 6; i >= 0; --i) poly = V::fma(poly, r, V::set1d(kLogPm2Sum[i]));
  const vd base = V::fma(kd, V::set1d(kM2Ln2), V::lookup16(lcm2_t, idx));
  return V::fma(V::mul(r, r), poly, V::fma(r, V::set1d(-2.0), base));
}

/// sinpi and cospi of x in [0, 2^51): x = q/2 + y exactly, |y| <= 1/4. Accurate = false drops
/// the double-double steps of cospi (1.05 ulp instead of 0.69; for sums).
template <class V, bool Accurate = true>
inline void own_sincospi(typename V::vd x, typename V::vd& sin_out, typename V::vd& cos_out) {
  using vi = typename V::vi;
  using vd = typename V::vd;
  const vd magic = V::set1d(0x1.8p52);
  const vd t = V::add(V::add(x, x), magic);  // 2x rounded to an integer q in the low bits
  const vd qd = V::sub(t, magic);
  const vd y = V::fma(qd, V::set1d(-0.5), x);  // exact
  const vi q = V::as_i(t);
  const vd y2 = V::mul(y, y);
  vd sq = V::set1d(kSinQ[6]);
  for (int i = 5; i >= 0; --i) sq = V::fma(sq, y2, V::set1d(kSinQ[i]));
  const vd s = V::fma(y, V::set1d(kPiHi), V::mul(y, V::fma(y2, sq, V::set1d(kPiLo))));
  vd c;
  if constexpr (!Accurate) {
    vd cr = V::set1d(kCosR[7]);
    for (int i = 6; i >= 0; --i) cr = V::fma(cr, y2, V::set1d(kCosR[i]));
    c = V::fma(y2, cr, V::set1d(1.0));
  } else {
    // cospi(y) = 1 + y^2 R0 + y^4 R'(y^2); y^2 R0 reaches 0.31, so y^2, y^2 R0 and 1 + y^2 R0 are
    // kept as double-doubles (otherwise their roundings add up to 1.05 ulp near |y| = 1/4).
    const vd one = V::set1d(1.0);
    const vd r0 = V::set1d(kCosR[0]);
    const vd y2l = V::fms(y, y, y2);
    vd cr = V::set1d(kCosR[7]);
    for (int i = 6; i >= 1; --i) cr = V::fma(cr, y2, V::set1d(kCosR[i]));
    const vd a = V::mul(y2, r0);
    const vd ae = V::fms(y2, r0, a);
    const vd c1 = V::add(one, a);
    const vd ec1 = V::add(V::sub(one, c1), a);
    vd tail = V::fma(V::mul(y2, y2), cr, ec1);
    tail = V::add(tail, ae);
    tail = V::fma(y2l, r0, tail);
    tail = V::fma(y2, V::set1d(kCosR0Lo), tail);
    c = V::add(c1, tail);
  }
  // Quadrant q mod 4: sin = (s, c, -s, -c), cos = (c, -s, -c, s).
  sin_out = V::negate_if_bit1(q, V::select_odd(q, c, s));
  cos_out = V::negate_if_bit1(V::add(q, V::set1(1)), V::select_odd(q, s, c));
}

/// c sinpi(x) for x in [0, 2^51) by one polynomial on |y| <= 1/2 (x = q + y exactly), with
/// coef = y-polynomial of c sinpi(y) / y in y^2 (kSqrt2SinP: c = sqrt(2)). About 1 ulp.
template <class V>
inline typename V::vd sinpi_wide(typename V::vd x, const double (&coef)[9]) {
  using vd = typename V::vd;
  const vd magic = V::set1d(0x1.8p52);
  const vd t = V::add(x, magic);  // q = round(x) in the low bits
  const vd y = V::sub(x, V::sub(t, magic));
  const vd y2 = V::mul(y, y);
  vd p = V::set1d(coef[8]);
  for (int i = 7; i >= 0; --i) p = V::fma(p, y2, V::set1d(coef[i]));
  return V::negate_if_bit0(V::as_i(t), V::mul(y, p));
}

/// The elementary functions of one Math choice.
template <class V, Math M>
struct BoxMuller {
  typename V::Table16 invc = V::load_table(kLogInvC);
  typename V::Table16 lch = V::load_table(kLogCHi);
  typename V::Table16 lcl = V::load_table(kLogCLoM2);
  typename V::Table16 lcm2 = V::load_table(kLogCM2);

  /// -2 log(x).
  inline typename V::vd m2log(typename V::vd x) const {
    if constexpr (M == Math::own) {
      return own_m2log<V>(x, invc, lch, lcl);
    } else {
      return V::mul(V::set1d(-2.0), V::sleef_log(x));
    }
  }

  inline void sincospi(typename V::vd x, typename V::vd& s, typename V::vd& c) const {
    if constexpr (M == Math::own) {
      own_sincospi<V>(x, s, c);
    } else {
      V::sleef_sincospi(x, s, c);
    }
  }

  /// The normal pair of the uniforms (ua, ub).
  inline void operator()(typename V::vd ua, typename V::vd ub, typename V::vd& z0,
                         typename V::vd& z1) const {
    using vd = typename V::vd;
    vd s;
    vd c;
    sincospi(V::add(ub, ub), s, c);
    const vd r = V::sqrt(m2log(ua));
    z0 = V::mul(r, c);
    z1 = V::mul(r, s);
  }

  // For sums only (the fused kernels), with Math::own: -2 log without its double-double steps
  // (~1 ulp), cospi without its double-double steps (1.05 ulp), and for z0 + z1 alone
  // cospi(x) + sinpi(x) = sqrt(2) sinpi(x + 1/4) by one polynomial (x + 1/4 rounds by at most
  // 2^-53): each term is exact to a few 1e-16 absolute; sums of 1e8 of them move by ~1e-15
  // relative, far inside the 1e-12 agreement asked of paths.

  /// z0 and z1 of the uniforms (ua, ub), for sums.
  inline void sum_terms(typename V::vd ua, typename V::vd ub, typename V::vd& z0,
                        typename V::vd& z1) const {
    using vd = typename V::vd;
    if constexpr (M == Math::own) {
      vd s;
      vd c;
      own_sincospi<V, false>(V::add(ub, ub), s, c);
      const vd r = V::sqrt(own_m2log_sum<V>(ua, invc, lcm2));
      z0 = V::mul(r, c);
      z1 = V::mul(r, s);
    } else {
      (*this)(ua, ub, z0, z1);
    }
  }

  /// z0 + z1 of the uniforms (ua, ub), for sums.
  inline typename V::vd pair_total(typename V::vd ua, typename V::vd ub) const {
    using vd = typename V::vd;
    if constexpr (M == Math::own) {
      const vd r = V::sqrt(own_m2log_sum<V>(ua, invc, lcm2));
      const vd x = V::add(ub, ub);
      return V::mul(r, sinpi_wide<V>(V::add(x, V::set1d(0.25)), kSqrt2SinP));
    } else {
      const vd r = V::sqrt(m2log(ua));
      vd s;
      vd c;
      sincospi(V::add(ub, ub), s, c);
      return V::add(V::mul(r, c), V::mul(r, s));
    }
  }
};

inline RoundKeys seed_keys(std::uint64_t seed) {
  return round_keys(static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32));
}

/// philox.hpp's u01 of 53-bit integers k (< 2^53): k 2^-53 + 2^-54 (the product is exact, so
/// the FMA rounds once, as the reference does), then min with 1 - 2^-53 (only k = 2^53 - 1,
/// whose sum rounds up to 1.0, changes).
template <class V>
inline typename V::vd u01_of_k(typename V::vi k) {
  return V::min(V::fma(V::cvt_u53(k), V::set1d(0x1p-53), V::set1d(0x1p-54)),
                V::set1d(0x1.fffffffffffffp-1));
}

// ---- The exported kernels ------------------------------------------------------------------

/// The uniform pair (ua, ub) of blocks b, with Philox's last round fused into u01. In that round
/// word 1 is the whole product p1 = M1 x2 (its low half) and word 0 is hi(p1) ^ x1 ^ k0, so
/// (word0 << 21) | (word1 >> 11) = (p1 ^ ((x1 ^ k0) << 32)) >> 11; likewise ub from p0.
template <class V>
inline void uniforms_of_blocks(typename V::vi b, std::uint32_t stream, const RoundKeys& rk,
                               typename V::vd& ua, typename V::vd& ub) {
  using vi = typename V::vi;
  const Words4<V> x = philox10_blocks<V, kRounds - 1>(b, stream, rk);
  const vi p0 = V::mul32(x.w0, V::set1(kPhiloxM0));
  const vi p1 = V::mul32(x.w2, V::set1(kPhiloxM1));
  const vi ka =
      V::srli11(V::xor3(p1, V::slli32(x.w1), V::set1(std::uint64_t{rk.k0[kRounds - 1]} << 32)));
  const vi kb =
      V::srli11(V::xor3(p0, V::slli32(x.w3), V::set1(std::uint64_t{rk.k1[kRounds - 1]} << 32)));
  ua = u01_of_k<V>(ka);
  ub = u01_of_k<V>(kb);
}

template <class V>
void k_u01(const std::uint64_t* k, std::size_t count, double* out) {
  constexpr int L = V::kLanes;
  for (std::size_t i = 0; i < count; i += L) {
    std::uint64_t in[L] = {};
    double res[L];
    for (int l = 0; l < L && i + l < count; ++l) in[l] = k[i + l] & ((std::uint64_t{1} << 53) - 1);
    V::stored(res, u01_of_k<V>(V::load(in)));
    for (int l = 0; l < L && i + l < count; ++l) out[i + l] = res[l];
  }
}

template <class V>
void k_philox(const std::uint32_t* key, const std::uint32_t* ctr, std::size_t count,
              std::uint32_t* out) {
  constexpr int L = V::kLanes;
  const RoundKeys rk = round_keys(key[0], key[1]);
  for (std::size_t i = 0; i < count; i += L) {
    std::uint64_t in[4][L] = {};
    for (int l = 0; l < L && i + l < count; ++l)
      for (int w = 0; w < 4; ++w) in[w][l] = ctr[4 * (i + l) + w];
    Words4<V> x{V::load(in[0]), V::load(in[1]), V::load(in[2]), V::load(in[3])};
    x = philox10<V>(x, rk);
    std::uint64_t res[4][L];
    V::store(res[0], x.w0);
    V::store(res[1], x.w1);
    V::store(res[2], x.w2);
    V::store(res[3], x.w3);
    for (int l = 0; l < L && i + l < count; ++l)
      for (int w = 0; w < 4; ++w) out[4 * (i + l) + w] = static_cast<std::uint32_t>(res[w][l]);
  }
}

template <class V>
void k_words(std::uint64_t seed, std::uint32_t stream, std::uint64_t first, std::size_t count,
             std::uint32_t* out) {
  constexpr int L = V::kLanes;
  const RoundKeys rk = seed_keys(seed);
  for (std::size_t i = 0; i < count; i += L) {
    const Words4<V> x = philox10_blocks<V>(V::iota(first + i), stream, rk);
    std::uint64_t res[4][L];
    V::store(res[0], x.w0);
    V::store(res[1], x.w1);
    V::store(res[2], x.w2);
    V::store(res[3], x.w3);
    for (int l = 0; l < L && i + l < count; ++l)
      for (int w = 0; w < 4; ++w) out[4 * (i + l) + w] = static_cast<std::uint32_t>(res[w][l]);
  }
}

template <class V>
void k_uniforms(std::uint64_t seed, std::uint32_t stream, std::uint64_t first, std::size_t count,
                double* out) {
  constexpr int L = V::kLanes;
  const RoundKeys rk = seed_keys(seed);
  std::size_t i = 0;
  typename V::vd ua;
  typename V::vd ub;
  for (; i + L <= count; i += L) {
    uniforms_of_blocks<V>(V::iota(first + i), stream, rk, ua, ub);
    V::store_interleaved(out + 2 * i, ua, ub);
  }
  if (i < count) {
    uniforms_of_blocks<V>(V::iota(first + i), stream, rk, ua, ub);
    double tmp[2 * L];
    V::store_interleaved(tmp, ua, ub);
    for (std::size_t j = 0; j < 2 * (count - i); ++j) out[2 * i + j] = tmp[j];
  }
}

template <class V, Math M>
void k_normals(std::uint64_t seed, std::uint32_t stream, std::uint64_t first, std::size_t count,
               double* out) {
  using vd = typename V::vd;
  constexpr int L = V::kLanes;
  const RoundKeys rk = seed_keys(seed);
  const BoxMuller<V, M> bm;
  std::size_t i = 0;
  vd z0;
  vd z1;
  vd ua;
  vd ub;
  for (; i + L <= count; i += L) {
    uniforms_of_blocks<V>(V::iota(first + i), stream, rk, ua, ub);
    bm(ua, ub, z0, z1);
    V::store_interleaved(out + 2 * i, z0, z1);
  }
  if (i < count) {
    uniforms_of_blocks<V>(V::iota(first + i), stream, rk, ua, ub);
    bm(ua, ub, z0, z1);
    double tmp[2 * L];
    V::store_interleaved(tmp, z0, z1);
    for (std::size_t j = 0; j < 2 * (count - i); ++j) out[2 * i + j] = tmp[j];
  }
}

template <class V, Math M>
NormalSums k_normal_sums(std::uint64_t seed, std::uint32_t stream, std::uint64_t first,
                         std::size_t count) {
  using vd = typename V::vd;
  constexpr int L = V::kLanes;
  if (count == 0) return {};
  const RoundKeys rk = seed_keys(seed);
  const BoxMuller<V, M> bm;
  vd acc0 = V::set1d(0.0);
  vd acc1 = V::set1d(0.0);
  vd z0;
  vd z1;
  // Software-pipelined: the next step's Philox and u01 are issued before this step's
  // Box-Muller, so the two long dependency chains overlap in the out-of-order window.
  const std::size_t steps = (count + L - 1) / L;
  vd ua;
  vd ub;
  typename V::vi b = V::iota(first);
  const typename V::vi step = V::set1(L);
  uniforms_of_blocks<V>(b, stream, rk, ua, ub);
  for (std::size_t s = 0; s + 1 < steps; ++s) {
    const vd ca = ua;
    const vd cb = ub;
    b = V::add(b, step);
    uniforms_of_blocks<V>(b, stream, rk, ua, ub);
    bm.sum_terms(ca, cb, z0, z1);
    acc0 = V::add(acc0, z0);
    acc1 = V::add(acc1, z1);
  }
  bm.sum_terms(ua, ub, z0, z1);
  const int n = static_cast<int>(count - (steps - 1) * L);  // 1..L lanes of the last step
  acc0 = V::add(acc0, V::keep_first(z0, n));
  acc1 = V::add(acc1, V::keep_first(z1, n));
  return {V::reduce_add(acc0), V::reduce_add(acc1)};
}

template <class V, Math M>
double k_normal_pair_total(std::uint64_t seed, std::uint32_t stream, std::uint64_t first,
                           std::size_t count) {
  using vd = typename V::vd;
  constexpr int L = V::kLanes;
  if (count == 0) return 0;
  const RoundKeys rk = seed_keys(seed);
  const BoxMuller<V, M> bm;
  vd acc = V::set1d(0.0);
  const std::size_t steps = (count + L - 1) / L;
  vd ua;
  vd ub;
  typename V::vi b = V::iota(first);
  const typename V::vi step = V::set1(L);
  uniforms_of_blocks<V>(b, stream, rk, ua, ub);
  for (std::size_t s = 0; s + 1 < steps; ++s) {  // software-pipelined as k_normal_sums
    const vd ca = ua;
    const vd cb = ub;
    b = V::add(b, step);
    uniforms_of_blocks<V>(b, stream, rk, ua, ub);
    acc = V::add(acc, bm.pair_total(ca, cb));
  }
  const int n = static_cast<int>(count - (steps - 1) * L);
  acc = V::add(acc, V::keep_first(bm.pair_total(ua, ub), n));
  return V::reduce_add(acc);
}

template <class V, Math M>
void k_log(const double* x, std::size_t count, double* out) {
  constexpr int L = V::kLanes;
  const BoxMuller<V, M> bm;
  for (std::size_t i = 0; i < count; i += L) {
    double in[L];
    double res[L];
    for (int l = 0; l < L; ++l) in[l] = (i + l < count) ? x[i + l] : 0.5;
    V::stored(res, V::mul(V::set1d(-0.5), bm.m2log(V::loadd(in))));
    for (int l = 0; l < L && i + l < count; ++l) out[i + l] = res[l];
  }
}

template <class V, Math M>
void k_sincospi(const double* x, std::size_t count, double* sin_out, double* cos_out) {
  using vd = typename V::vd;
  constexpr int L = V::kLanes;
  const BoxMuller<V, M> bm;
  for (std::size_t i = 0; i < count; i += L) {
    double in[L];
    double rs[L];
    double rc[L];
    for (int l = 0; l < L; ++l) in[l] = (i + l < count) ? x[i + l] : 0.5;
    vd s;
    vd c;
    bm.sincospi(V::loadd(in), s, c);
    V::stored(rs, s);
    V::stored(rc, c);
    for (int l = 0; l < L && i + l < count; ++l) {
      sin_out[i + l] = rs[l];
      cos_out[i + l] = rc[l];
    }
  }
}

template <class V, Math M>
constexpr Kernels make_kernels(Isa isa) {
  Kernels k;
  k.isa = isa;
  k.math = M;
  k.philox = &k_philox<V>;
  k.words = &k_words<V>;
  k.uniforms = &k_uniforms<V>;
  k.u01 = &k_u01<V>;
  k.normals = &k_normals<V, M>;
  k.normal_sums = &k_normal_sums<V, M>;
  k.normal_pair_total = &k_normal_pair_total<V, M>;
  k.log = &k_log<V, M>;
  k.sincospi = &k_sincospi<V, M>;
  return k;
}

}  // namespace
}  // namespace sb::data::simd
