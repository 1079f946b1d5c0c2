// AVX-512 (F + DQ) variant of the data kernels: 8 Philox blocks per step.
// Compiled with -mavx512f -mavx512dq -mavx2 -mfma (CMakeLists.txt); called only after
// __builtin_cpu_supports says so (philox_simd.cpp). Include nothing with inline functions here.
// GCC 12's avx512fintrin.h self-initialises its "undefined" pass-through operands, which
// -Wuninitialized reports once they are inlined here (GCC bug 105593, fixed in GCC 13).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#include <sleef.h>

#include <cstddef>
#include <cstdint>

#include "subset_mean/philox_simd_table.hpp"

namespace sb::data::simd {
namespace {

struct Avx512 {
  static constexpr int kLanes = 8;
  using vi = __m512i;
  using vd = __m512d;
  struct Table16 {
    vd lo;
    vd hi;
  };

  static vi set1(std::uint64_t v) { return _mm512_set1_epi64(static_cast<long long>(v)); }
  static vd set1d(double v) { return _mm512_set1_pd(v); }
  static vi iota(std::uint64_t base) {
    return _mm512_add_epi64(set1(base), _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0));
  }
  static vi load(const std::uint64_t* p) { return _mm512_loadu_si512(p); }
  static void store(std::uint64_t* p, vi v) { _mm512_storeu_si512(p, v); }
  static vd loadd(const double* p) { return _mm512_loadu_pd(p); }
  static void stored(double* p, vd v) { _mm512_storeu_pd(p, v); }

  static vi add(vi a, vi b) { return _mm512_add_epi64(a, b); }
  static vi sub(vi a, vi b) { return _mm512_sub_epi64(a, b); }
  static vi and_(vi a, vi b) { return _mm512_and_si512(a, b); }
  static vi or_(vi a, vi b) { return _mm512_or_si512(a, b); }
  static vi xor_(vi a, vi b) { return _mm512_xor_si512(a, b); }
  static vi xor3(vi a, vi b, vi c) { return _mm512_ternarylogic_epi64(a, b, c, 0x96); }
  static vi srli11(vi a) { return _mm512_srli_epi64(a, 11); }
  static vi slli32(vi a) { return _mm512_slli_epi64(a, 32); }
  static vi srli32(vi a) { return _mm512_srli_epi64(a, 32); }
  static vi srli48(vi a) { return _mm512_srli_epi64(a, 48); }
  static vi srli52(vi a) { return _mm512_srli_epi64(a, 52); }
  static vi slli62(vi a) { return _mm512_slli_epi64(a, 62); }
  /// Unsigned product of the low 32-bit halves (vpmuludq).
  static vi mul32(vi a, vi b) { return _mm512_mul_epu32(a, b); }
  /// The high half moved to the low half (vpshufd on port 5; upper half left as garbage).
  static vi hi32(vi p) { return _mm512_shuffle_epi32(p, static_cast<_MM_PERM_ENUM>(0xF5)); }

  static vd as_d(vi a) { return _mm512_castsi512_pd(a); }
  static vi as_i(vd a) { return _mm512_castpd_si512(a); }
  static vd cvt_u53(vi k) { return _mm512_cvtepi64_pd(k); }
  static vd cvt_small(vi k) { return _mm512_cvtepi64_pd(k); }

  static vd add(vd a, vd b) { return _mm512_add_pd(a, b); }
  static vd sub(vd a, vd b) { return _mm512_sub_pd(a, b); }
  static vd mul(vd a, vd b) { return _mm512_mul_pd(a, b); }
  static vd min(vd a, vd b) { return _mm512_min_pd(a, b); }
  static vd fma(vd a, vd b, vd c) { return _mm512_fmadd_pd(a, b, c); }
  static vd fms(vd a, vd b, vd c) { return _mm512_fmsub_pd(a, b, c); }
  static vd sqrt(vd a) { return _mm512_sqrt_pd(a); }

  static Table16 load_table(const double* t) {
    return {_mm512_loadu_pd(t), _mm512_loadu_pd(t + 8)};
  }
  /// table[idx & 15] (vpermt2pd uses the low 4 bits of each index).
  static vd lookup16(const Table16& t, vi idx) { return _mm512_permutex2var_pd(t.lo, idx, t.hi); }
  /// -v where bit 0 (bit 1) of q is set.
  static vd negate_if_bit0(vi q, vd v) {
    return _mm512_mask_xor_pd(v, _mm512_test_epi64_mask(q, set1(1)), v, set1d(-0.0));
  }
  static vd negate_if_bit1(vi q, vd v) {
    return _mm512_mask_xor_pd(v, _mm512_test_epi64_mask(q, set1(2)), v, set1d(-0.0));
  }
  /// Lanes where q is odd take a, the others b.
  static vd select_odd(vi q, vd a, vd b) {
    return _mm512_mask_blend_pd(_mm512_test_epi64_mask(q, set1(1)), b, a);
  }
  /// Lanes 0..n-1 kept, the others zero.
  static vd keep_first(vd z, int n) {
    return _mm512_maskz_mov_pd(static_cast<__mmask8>((1u << n) - 1u), z);
  }
  /// Lanes added in a fixed order (GCC 12 warns falsely inside _mm512_reduce_add_pd).
  static double reduce_add(vd a) {
    alignas(64) double l[8];
    _mm512_store_pd(l, a);
    return ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]));
  }
  /// out[2l] = a[l], out[2l + 1] = b[l].
  static void store_interleaved(double* out, vd a, vd b) {
    const vi lo = _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0);
    const vi hi = _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4);
    _mm512_storeu_pd(out, _mm512_permutex2var_pd(a, lo, b));
    _mm512_storeu_pd(out + 8, _mm512_permutex2var_pd(a, hi, b));
  }

  static vd sleef_log(vd x) { return Sleef_logd8_u10avx512f(x); }
  static void sleef_sincospi(vd x, vd& s, vd& c) {
    const Sleef___m512d_2 sc = Sleef_sincospid8_u05avx512f(x);
    s = sc.x;
    c = sc.y;
  }
};

}  // namespace
}  // namespace sb::data::simd

#include "subset_mean/philox_simd_impl.hpp"

namespace sb::data::simd::detail {

const Kernels* kernels_avx512(Math math) noexcept {
  static const Kernels own = make_kernels<X2<Avx512>, Math::own>(Isa::avx512);
  static const Kernels sleef = make_kernels<Avx512, Math::sleef>(Isa::avx512);
  return math == Math::own ? &own : &sleef;
}

}  // namespace sb::data::simd::detail
