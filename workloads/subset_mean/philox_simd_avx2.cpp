// AVX2 + FMA variant of the data kernels: 4 Philox blocks per step.
// Compiled with -mavx2 -mfma (CMakeLists.txt); called only after __builtin_cpu_supports says so
// (philox_simd.cpp). Include nothing with inline functions here.
#include <immintrin.h>
#include <sleef.h>

#include <cstddef>
#include <cstdint>

#include "subset_mean/philox_simd_table.hpp"

namespace sb::data::simd {
namespace {

struct Avx2 {
  static constexpr int kLanes = 4;
  using vi = __m256i;
  using vd = __m256d;
  struct Table16 {
    const double* p;
  };

  static vi set1(std::uint64_t v) { return _mm256_set1_epi64x(static_cast<long long>(v)); }
  static vd set1d(double v) { return _mm256_set1_pd(v); }
  static vi iota(std::uint64_t base) {
    return _mm256_add_epi64(set1(base), _mm256_set_epi64x(3, 2, 1, 0));
  }
  static vi load(const std::uint64_t* p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  }
  static void store(std::uint64_t* p, vi v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v);
  }
  static vd loadd(const double* p) { return _mm256_loadu_pd(p); }
  static void stored(double* p, vd v) { _mm256_storeu_pd(p, v); }

  static vi add(vi a, vi b) { return _mm256_add_epi64(a, b); }
  static vi sub(vi a, vi b) { return _mm256_sub_epi64(a, b); }
  static vi and_(vi a, vi b) { return _mm256_and_si256(a, b); }
  static vi or_(vi a, vi b) { return _mm256_or_si256(a, b); }
  static vi xor_(vi a, vi b) { return _mm256_xor_si256(a, b); }
  static vi xor3(vi a, vi b, vi c) { return _mm256_xor_si256(_mm256_xor_si256(a, b), c); }
  static vi srli11(vi a) { return _mm256_srli_epi64(a, 11); }
  static vi slli32(vi a) { return _mm256_slli_epi64(a, 32); }
  static vi srli32(vi a) { return _mm256_srli_epi64(a, 32); }
  static vi srli48(vi a) { return _mm256_srli_epi64(a, 48); }
  static vi srli52(vi a) { return _mm256_srli_epi64(a, 52); }
  static vi slli62(vi a) { return _mm256_slli_epi64(a, 62); }
  static vi mul32(vi a, vi b) { return _mm256_mul_epu32(a, b); }
  static vi hi32(vi p) { return _mm256_shuffle_epi32(p, 0xF5); }

  static vd as_d(vi a) { return _mm256_castsi256_pd(a); }
  static vi as_i(vd a) { return _mm256_castpd_si256(a); }
  /// Exact double of k < 2^53 by halves: (k >> 32) 2^32 + (k & (2^32 - 1)).
  static vd cvt_u53(vi k) {
    const vi exp52 = set1(0x4330000000000000ull);  // 2^52
    const vd two52 = set1d(0x1p52);
    const vd hi = _mm256_sub_pd(as_d(_mm256_or_si256(srli32(k), exp52)), two52);
    const vd lo = _mm256_sub_pd(as_d(_mm256_or_si256(and_(k, set1(0xFFFFFFFFull)), exp52)), two52);
    return _mm256_fmadd_pd(hi, set1d(0x1p32), lo);
  }
  /// Exact double of 0 <= k < 2^52.
  static vd cvt_small(vi k) {
    return _mm256_sub_pd(as_d(_mm256_or_si256(k, set1(0x4330000000000000ull))), set1d(0x1p52));
  }

  static vd add(vd a, vd b) { return _mm256_add_pd(a, b); }
  static vd sub(vd a, vd b) { return _mm256_sub_pd(a, b); }
  static vd mul(vd a, vd b) { return _mm256_mul_pd(a, b); }
  static vd min(vd a, vd b) { return _mm256_min_pd(a, b); }
  static vd fma(vd a, vd b, vd c) { return _mm256_fmadd_pd(a, b, c); }
  static vd fms(vd a, vd b, vd c) { return _mm256_fmsub_pd(a, b, c); }
  static vd sqrt(vd a) { return _mm256_sqrt_pd(a); }

  static Table16 load_table(const double* t) { return {t}; }
  static vd lookup16(const Table16& t, vi idx) {
    return _mm256_i64gather_pd(t.p, and_(idx, set1(15)), 8);
  }
  static vd negate_if_bit0(vi q, vd v) { return _mm256_xor_pd(v, as_d(_mm256_slli_epi64(q, 63))); }
  static vd negate_if_bit1(vi q, vd v) { return _mm256_xor_pd(v, as_d(slli62(and_(q, set1(2))))); }
  static vd select_odd(vi q, vd a, vd b) {
    const vi one = set1(1);
    const vd m = as_d(_mm256_cmpeq_epi64(and_(q, one), one));
    return _mm256_blendv_pd(b, a, m);
  }
  static vd keep_first(vd z, int n) {
    const vd m = as_d(
        _mm256_cmpgt_epi64(set1(static_cast<std::uint64_t>(n)), _mm256_set_epi64x(3, 2, 1, 0)));
    return _mm256_and_pd(z, m);
  }
  static double reduce_add(vd a) {
    const __m128d s = _mm_add_pd(_mm256_castpd256_pd128(a), _mm256_extractf128_pd(a, 1));
    return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
  }
  static void store_interleaved(double* out, vd a, vd b) {
    const vd lo = _mm256_unpacklo_pd(a, b);  // a0 b0 a2 b2
    const vd hi = _mm256_unpackhi_pd(a, b);  // a1 b1 a3 b3
    _mm256_storeu_pd(out, _mm256_permute2f128_pd(lo, hi, 0x20));
    _mm256_storeu_pd(out + 4, _mm256_permute2f128_pd(lo, hi, 0x31));
  }

  static vd sleef_log(vd x) { return Sleef_logd4_u10avx2(x); }
  static void sleef_sincospi(vd x, vd& s, vd& c) {
    const Sleef___m256d_2 sc = Sleef_sincospid4_u05avx2(x);
    s = sc.x;
    c = sc.y;
  }
};

}  // namespace
}  // namespace sb::data::simd

#include "subset_mean/philox_simd_impl.hpp"

namespace sb::data::simd::detail {

const Kernels* kernels_avx2(Math math) noexcept {
  static const Kernels own = make_kernels<Avx2, Math::own>(Isa::avx2);
  static const Kernels sleef = make_kernels<Avx2, Math::sleef>(Isa::avx2);
  return math == Math::own ? &own : &sleef;
}

}  // namespace sb::data::simd::detail
