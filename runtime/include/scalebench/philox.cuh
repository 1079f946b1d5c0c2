#pragma once
/// @file philox.cuh
/// The GPU twin of philox.hpp: Philox4x32-10 words, 53-bit uniforms and Box-Muller normals
/// in device code, with the bit layout documented there:
///
///   key     = { lo32(seed), hi32(seed) }
///   counter = { lo32(block), hi32(block), stream, 0 }      block = element index / 2
///   ua = u01(w0, w1), ub = u01(w2, w3);  z0 = r cos(2 pi ub), z1 = r sin(2 pi ub),
///   r = sqrt(-2 ln ua)
///
/// Words and uniforms are bit-identical to the CPU reference (tests/gpu/test_philox_gpu.cu).
/// Box-Muller flavours:
///   - box_muller(): CUDA's fp64 log, sqrt and sincospi (like the CPU's SLEEF log_u10 and
///     sincospi_u05: within a few ulps of the CPU normals);
///   - box_muller_fast(): the same function with fewer fp64 instructions (exact quadrant
///     reduction of the 53-bit uniform, minimax polynomials, no special-case branches because
///     the uniforms lie in [2^-54, 1 - 2^-53]); also within a few ulps of the CPU;
///   - box_muller_tab() (box_muller_tables.cuh): fewer instructions still, from lookup tables in
///     shared memory; the fused subset-mean kernel runs its forms before the last
///     multiplication (box_muller_tab_polar, and box_muller_tab_sum_polar in odd rows).
///
/// cuRAND: curand_init(seed, subsequence = stream, offset = 4 * block, &state) on a
/// curandStatePhilox4_32_10_t followed by curand4(&state) returns exactly the words
/// philox4x32_10(counter, key) above (cuRAND's subsequence is counter words 2-3, its offset
/// counts 32-bit outputs, 4 per counter). The test checks this too.

#include <cuda_runtime.h>

#include <cstdint>

namespace sb::data::gpu {

/// Philox4x32 constants (Random123 / cuRAND).
inline constexpr std::uint32_t kPhiloxM0 = 0xD2511F53u;
inline constexpr std::uint32_t kPhiloxM1 = 0xCD9E8D57u;
inline constexpr std::uint32_t kPhiloxW0 = 0x9E3779B9u;
inline constexpr std::uint32_t kPhiloxW1 = 0xBB67AE85u;

/// The 10 round keys of a seed, precomputed on the host so that kernels read them as constants.
struct RoundKeys {
  std::uint32_t k0[10];
  std::uint32_t k1[10];
};

__host__ __device__ inline RoundKeys round_keys(std::uint64_t seed) {
  RoundKeys rk{};
  std::uint32_t a = static_cast<std::uint32_t>(seed);
  std::uint32_t b = static_cast<std::uint32_t>(seed >> 32);
  for (int r = 0; r < 10; ++r) {
    rk.k0[r] = a;
    rk.k1[r] = b;
    a += kPhiloxW0;
    b += kPhiloxW1;
  }
  return rk;
}

__host__ __device__ __forceinline__ void mulhilo32(std::uint32_t a, std::uint32_t b,
                                                   std::uint32_t& hi, std::uint32_t& lo) {
#if defined(__CUDA_ARCH__)
  hi = __umulhi(a, b);
  lo = a * b;
#else
  const std::uint64_t p = static_cast<std::uint64_t>(a) * b;
  hi = static_cast<std::uint32_t>(p >> 32);
  lo = static_cast<std::uint32_t>(p);
#endif
}

/// One Philox4x32 round (Random123's philox4x32round).
__host__ __device__ __forceinline__ uint4 philox_round(uint4 c, std::uint32_t k0,
                                                       std::uint32_t k1) {
  std::uint32_t hi0, lo0, hi1, lo1;
  mulhilo32(kPhiloxM0, c.x, hi0, lo0);
  mulhilo32(kPhiloxM1, c.z, hi1, lo1);
  return make_uint4(hi1 ^ c.y ^ k0, lo1, hi0 ^ c.w ^ k1, lo0);
}

/// Philox4x32-10 with precomputed round keys.
__host__ __device__ __forceinline__ uint4 philox4x32_10(uint4 ctr, const RoundKeys& rk) {
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int r = 0; r < 10; ++r) ctr = philox_round(ctr, rk.k0[r], rk.k1[r]);
  return ctr;
}

/// Philox4x32-10 of the counter (block, stream) under the key made from seed (philox.hpp).
__host__ __device__ __forceinline__ uint4 philox_words(std::uint64_t seed, std::uint64_t block,
                                                       std::uint32_t stream = 0) {
  const uint4 ctr = make_uint4(static_cast<std::uint32_t>(block),
                               static_cast<std::uint32_t>(block >> 32), stream, 0u);
  uint4 c = ctr;
  std::uint32_t k0 = static_cast<std::uint32_t>(seed);
  std::uint32_t k1 = static_cast<std::uint32_t>(seed >> 32);
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int r = 0; r < 10; ++r) {
    c = philox_round(c, k0, k1);
    k0 += kPhiloxW0;
    k1 += kPhiloxW1;
  }
  return c;
}

/// u01(hi, lo) = min(k 2^-53 + 2^-54, 1 - 2^-53), k = (hi << 21) | (lo >> 11): bit-identical
/// to philox.hpp's (one correctly rounded fp64 operation on the exact value, as the CPU does,
/// then the clamp), built from bits and a single FMA instead of an integer-to-double conversion:
///   t = 1 + m 2^-52 (m = low 52 bits of k, exact; bit 52 of k lands on the exponent's low bit,
///   already set), u = fma(t, 1/2, c), c = 2^-54 when bit 52 of k is set, 2^-54 - 1/2 otherwise
///   (both exact). c's words come from that bit b without a compare or select:
///   c_lo = 0xFFFFFFFF + b, c_hi = 0x3C900000 + c_lo * 0x7CB00001 (mod 2^32), i.e.
///   (0x3C900000, 0) = 2^-54 for b = 1 and (0xBFDFFFFF, 0xFFFFFFFF) = 2^-54 - 1/2 for b = 0.
/// The clamp is two integer instructions on u's words (h, l), no fp64 compare or select:
///   h' = min(h, 0x3FEFFFFF), l' = l + (h' - h).
/// u lies in [2^-54, 1], so h <= 0x3FF00000 (the high word of 1.0), with equality only for
/// u = 1.0, whose low word is 0: then h' - h = -1 and (h', l') = (0x3FEFFFFF, 0xFFFFFFFF),
/// i.e. 1 - 2^-53; for every u < 1, h' = h and l' = l (the same bits). On sm_90 the whole
/// u01 is 8 SASS instructions (the clamp's integer min and add included), one more than the
/// unclamped form with a compare and two selects for c had (7). No form of this construction
/// clamps for free: every value of the top half is a tie that rounds by the parity of k, so no
/// constant c or multiplier can break k = 2^53 - 1's tie alone; and the clamp changes both
/// words of u.
__device__ __forceinline__ double u01(std::uint32_t hi, std::uint32_t lo) {
  const std::uint32_t t_hi = 0x3FF00000u | (hi >> 11);
  const std::uint32_t t_lo = __funnelshift_r(lo, hi, 11);
  const std::uint32_t c_lo = 0xFFFFFFFFu + (hi >> 31);
  const std::uint32_t c_hi = 0x3C900000u + c_lo * 0x7CB00001u;
  const double t = __hiloint2double(static_cast<int>(t_hi), static_cast<int>(t_lo));
  const double c = __hiloint2double(static_cast<int>(c_hi), static_cast<int>(c_lo));
  const double u = fma(t, 0.5, c);
  const int h = __double2hiint(u);
  const int h_clamped = min(h, 0x3FEFFFFF);  // high word of 1 - 2^-53
  return __hiloint2double(h_clamped, __double2loint(u) + (h_clamped - h));
}

struct Normals {
  double z0;  ///< r cos(2 pi ub): element 2*block
  double z1;  ///< r sin(2 pi ub): element 2*block + 1
};

/// Box-Muller with CUDA's fp64 log, sqrt and sincospi.
__device__ __forceinline__ Normals box_muller(double ua, double ub) {
  const double r = sqrt(-2.0 * log(ua));
  double s, c;
  sincospi(2.0 * ub, &s, &c);
  return {r * c, r * s};
}

namespace detail {

__device__ __forceinline__ double rcp_approx(double x) {
  double y;
  asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(x));
  return y;
}

__device__ __forceinline__ double rsqrt_approx(double x) {
  double y;
  asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(x));
  return y;
}

/// Polynomial coefficients of the fast Box-Muller. Kernels that call it in a hot loop pass them
/// as a kernel parameter (constant bank 0: the fp64 FMAs take them as operands; as immediates
/// each costs two uniform-register moves per loop iteration once registers run short).
struct FastConstants {
  double log_p[7];  ///< P(x) = Q(x/16)/16, Q: atanh(s) = s + s^3 Q(s^2), |s| <= 0.1716 (minimax)
  double sin_p[7];  ///< sin(pi/2 w) = w S(w^2), |w| <= 1/2 (minimax)
  double cos_p[8];  ///< cos(pi/2 w) = C(w^2)
};

inline constexpr FastConstants kFastConstants = {
    {0x1.5555555555558p-6, 0x1.9999999995273p-11, 0x1.2492492dfd86cp-15, 0x1.c71c62d5e53e0p-20,
     0x1.7462b91b8df65p-24, 0x1.39fdcceb4bb45p-28, 0x1.2b5f68a50d903p-32},
    {0x1.921fb54442d18p+0, -0x1.4abbce625be41p-1, 0x1.466bc677587f8p-4, -0x1.32d2cce2e5b19p-8,
     0x1.50782fda12d96p-13, -0x1.e30071afc3e59p-19, 0x1.e3f38399551bfp-25},
    {1.0, -0x1.3bd3cc9be45dep+0, 0x1.03c1f081b5aacp-2, -0x1.55d3c7e3c90f8p-6, 0x1.e1f5068355e15p-11,
     -0x1.a6d1ec7906c20p-16, 0x1.f9cc41140bb60p-22, -0x1.b264ba152378ap-28}};

[[maybe_unused]] static __constant__ FastConstants kFast = kFastConstants;

/// -2 ln(u) for u in [2^-54, 1]: u = 2^E m, m in [sqrt(1/2), sqrt(2)),
/// ln m = 2 atanh(s), s = (m-1)/(m+1), atanh(s) = s + s^3 Q(s^2) (minimax, |s| <= 0.1716).
/// Computed with s' = -4 s (so -4 atanh(s) = s' + s' x' P(x'), x' = s'^2), which saves the
/// final scaling: -2 ln u = -2 E ln2 + s' + s' x' P(x').
__device__ __forceinline__ double minus_two_log(double u, const FastConstants k) {
  const int hi = __double2hiint(u);
  const int lo = __double2loint(u);
  const int tmp = hi - 0x3FE6A09E;  // hi word of sqrt(1/2)
  const int e = tmp >> 20;          // arithmetic shift: the exponent after reduction
  const double m = __hiloint2double(hi - (e << 20), lo);
  const double f4 = fma(m, -4.0, 4.0);  // -4 (m - 1), exact
  const double g = m + 1.0;
  const double y0 = rcp_approx(g);
  const double err = fma(-g, y0, 1.0);
  const double y = fma(y0, fma(err, err, err), y0);  // cubic refinement: full precision
  const double s4 = f4 * y;                          // -4 s
  const double x4 = s4 * s4;                         // 16 s^2
  const double* c = k.log_p;
  double q = c[6];
  q = fma(q, x4, c[5]);
  q = fma(q, x4, c[4]);
  q = fma(q, x4, c[3]);
  q = fma(q, x4, c[2]);
  q = fma(q, x4, c[1]);
  q = fma(q, x4, c[0]);
  const double h4 = fma(s4 * x4, q, s4);  // -4 atanh(s) = -2 ln m
  return fma(static_cast<double>(e), -0x1.62e42fefa39efp+0, h4);
}

/// sqrt(a) for normal a > 0 from the estimate y0 of 1/sqrt(a): one Goldschmidt step and a final
/// Newton correction; within an ulp.
__device__ __forceinline__ double sqrt_from_rsqrt(double a, double y0) {
  const double r0 = a * y0;
  const double h0 = 0.5 * y0;
  const double e = fma(-r0, h0, 0.5);
  const double r1 = fma(r0, e, r0);
  const double d = fma(-r1, r1, a);
  return fma(d, h0, r1);
}

/// sqrt(a) for a >= 0 (a = 0 gives 0); within an ulp.
__device__ __forceinline__ double sqrt_fast(double a) {
  // a = 0 would give rsqrt = inf and 0 * inf: raise the estimate's input to the smallest normal
  const int a_hi = __double2hiint(a);
  return sqrt_from_rsqrt(a,
                         rsqrt_approx(__hiloint2double(max(a_hi, 0x00100000), __double2loint(a))));
}

/// sqrt(a) for normal a > 0 (no guard for 0: one integer instruction fewer); within an ulp.
__device__ __forceinline__ double sqrt_positive(double a) {
  return sqrt_from_rsqrt(a, rsqrt_approx(a));
}

}  // namespace detail

/// Box-Muller for uniforms in [2^-54, 1] (u01 yields [2^-54, 1 - 2^-53]) with fewer fp64
/// instructions than box_muller(): within a few ulps of the CPU reference (tested). `k` is
/// kFastConstants, taken from wherever the caller keeps it (a kernel parameter in hot loops).
__device__ __forceinline__ Normals box_muller_fast(double ua, double ub,
                                                   const detail::FastConstants k) {
  const double r = detail::sqrt_fast(detail::minus_two_log(ua, k));
  // 2 pi ub = q pi/2 + (pi/2) w with q = rint(4 ub), w = 4 ub - q in [-1/2, 1/2]; exact.
  constexpr double kRound = 0x1.8p52;
  const double qs = fma(ub, 4.0, kRound);
  const int q = __double2loint(qs);
  const double w = fma(ub, 4.0, -(qs - kRound));
  const double x = w * w;
  const double* sc = k.sin_p;
  double sp = sc[6];
  sp = fma(sp, x, sc[5]);
  sp = fma(sp, x, sc[4]);
  sp = fma(sp, x, sc[3]);
  sp = fma(sp, x, sc[2]);
  sp = fma(sp, x, sc[1]);
  sp = fma(sp, x, sc[0]);
  const double* cc = k.cos_p;
  double cp = cc[7];
  cp = fma(cp, x, cc[6]);
  cp = fma(cp, x, cc[5]);
  cp = fma(cp, x, cc[4]);
  cp = fma(cp, x, cc[3]);
  cp = fma(cp, x, cc[2]);
  cp = fma(cp, x, cc[1]);
  cp = fma(cp, x, cc[0]);
  const double sa = w * sp;  // sin((pi/2) w)
  // quadrant: (sin, cos) of q pi/2 + a = (s, c), (c, -s), (-s, -c), (-c, s) for q mod 4
  const bool swap = (q & 1) != 0;
  const double sn = swap ? cp : sa;
  const double cs = swap ? sa : cp;
  // signs: sin negative for q mod 4 in {2, 3}, cos for {1, 2}; put on r's sign bit (integer op)
  const unsigned uq = static_cast<unsigned>(q);
  const int r_hi = __double2hiint(r);
  const int r_lo = __double2loint(r);
  const double rs = __hiloint2double(r_hi ^ static_cast<int>((uq << 30) & 0x80000000u), r_lo);
  const double rc =
      __hiloint2double(r_hi ^ static_cast<int>(((uq + 1u) << 30) & 0x80000000u), r_lo);
  return {rc * cs, rs * sn};
}

/// box_muller_fast with the coefficients from constant memory.
__device__ __forceinline__ Normals box_muller_fast(double ua, double ub) {
  return box_muller_fast(ua, ub, detail::kFast);
}

/// Element e of the uniform stream (philox.hpp's sb::data::uniform).
__device__ __forceinline__ double uniform(std::uint64_t seed, std::uint64_t e,
                                          std::uint32_t stream = 0) {
  const uint4 w = philox_words(seed, e >> 1, stream);
  return (e & 1u) ? u01(w.z, w.w) : u01(w.x, w.y);
}

/// Element e of the standard-normal stream (philox.hpp's sb::data::normal), CUDA math.
__device__ __forceinline__ double normal(std::uint64_t seed, std::uint64_t e,
                                         std::uint32_t stream = 0) {
  const uint4 w = philox_words(seed, e >> 1, stream);
  const Normals z = box_muller(u01(w.x, w.y), u01(w.z, w.w));
  return (e & 1u) ? z.z1 : z.z0;
}

}  // namespace sb::data::gpu
