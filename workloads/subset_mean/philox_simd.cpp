// Run-time choice of the data-kernel variant, the scalar variant, and element-wise fills.
#include "subset_mean/philox_simd.hpp"

#include <sleef.h>

#include <cmath>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "scalebench/error.hpp"

namespace sb::data::simd {
namespace {

/// One lane of plain integers and doubles: runs on any CPU (and is the template's reference).
struct Scalar {
  static constexpr int kLanes = 1;
  using vi = std::uint64_t;
  using vd = double;
  struct Table16 {
    const double* p;
  };

  static vi set1(std::uint64_t v) { return v; }
  static vd set1d(double v) { return v; }
  static vi iota(std::uint64_t base) { return base; }
  static vi load(const std::uint64_t* p) { return *p; }
  static void store(std::uint64_t* p, vi v) { *p = v; }
  static vd loadd(const double* p) { return *p; }
  static void stored(double* p, vd v) { *p = v; }

  static vi add(vi a, vi b) { return a + b; }
  static vi sub(vi a, vi b) { return a - b; }
  static vi and_(vi a, vi b) { return a & b; }
  static vi or_(vi a, vi b) { return a | b; }
  static vi xor_(vi a, vi b) { return a ^ b; }
  static vi xor3(vi a, vi b, vi c) { return a ^ b ^ c; }
  static vi srli11(vi a) { return a >> 11; }
  static vi slli32(vi a) { return a << 32; }
  static vi srli32(vi a) { return a >> 32; }
  static vi srli48(vi a) { return a >> 48; }
  static vi srli52(vi a) { return a >> 52; }
  static vi slli62(vi a) { return a << 62; }
  static vi mul32(vi a, vi b) { return (a & 0xFFFFFFFFull) * (b & 0xFFFFFFFFull); }
  static vi hi32(vi p) { return p >> 32; }

  static vd as_d(vi a) {
    double d;
    std::memcpy(&d, &a, sizeof d);
    return d;
  }
  static vi as_i(vd a) {
    vi i;
    std::memcpy(&i, &a, sizeof i);
    return i;
  }
  static vd cvt_u53(vi k) { return static_cast<double>(k); }
  static vd cvt_small(vi k) { return static_cast<double>(k); }

  static vd add(vd a, vd b) { return a + b; }
  static vd sub(vd a, vd b) { return a - b; }
  static vd mul(vd a, vd b) { return a * b; }
  static vd min(vd a, vd b) { return b < a ? b : a; }
  static vd fma(vd a, vd b, vd c) { return std::fma(a, b, c); }
  static vd fms(vd a, vd b, vd c) { return std::fma(a, b, -c); }
  static vd sqrt(vd a) { return std::sqrt(a); }

  static Table16 load_table(const double* t) { return {t}; }
  static vd lookup16(const Table16& t, vi idx) { return t.p[idx & 15u]; }
  static vd negate_if_bit0(vi q, vd v) { return (q & 1u) ? -v : v; }
  static vd negate_if_bit1(vi q, vd v) { return (q & 2u) ? -v : v; }
  static vd select_odd(vi q, vd a, vd b) { return (q & 1u) ? a : b; }
  static vd keep_first(vd z, int n) { return n > 0 ? z : 0.0; }
  static double reduce_add(vd a) { return a; }
  static void store_interleaved(double* out, vd a, vd b) {
    out[0] = a;
    out[1] = b;
  }

  static vd sleef_log(vd x) { return Sleef_log_u10(x); }
  static void sleef_sincospi(vd x, vd& s, vd& c) {
    const Sleef_double2 sc = Sleef_sincospi_u05(x);
    s = sc.x;
    c = sc.y;
  }
};

}  // namespace
}  // namespace sb::data::simd

#include "subset_mean/philox_simd_impl.hpp"

namespace sb::data::simd {

namespace detail {

const Kernels* kernels_scalar(Math math) noexcept {
  static const Kernels own = make_kernels<Scalar, Math::own>(Isa::scalar);
  static const Kernels sleef = make_kernels<Scalar, Math::sleef>(Isa::scalar);
  return math == Math::own ? &own : &sleef;
}

#if !SB_SIMD_X86
const Kernels* kernels_avx2(Math) noexcept {
  return nullptr;
}
const Kernels* kernels_avx512(Math) noexcept {
  return nullptr;
}
#endif

}  // namespace detail

namespace {

bool cpu_can(Isa isa) noexcept {
  switch (isa) {
    case Isa::scalar:
      return true;
#if SB_SIMD_X86
    case Isa::avx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case Isa::avx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
#else
    default:
      return false;
#endif
  }
  return false;
}

}  // namespace

std::string_view to_string(Isa isa) noexcept {
  switch (isa) {
    case Isa::scalar:
      return "scalar";
    case Isa::avx2:
      return "avx2";
    case Isa::avx512:
      return "avx512";
  }
  return "?";
}

std::string_view to_string(Math math) noexcept {
  return math == Math::own ? "own" : "sleef";
}

bool compiled(Isa isa) noexcept {
  switch (isa) {
    case Isa::scalar:
      return true;
    case Isa::avx2:
      return detail::kernels_avx2(Math::own) != nullptr;
    case Isa::avx512:
      return detail::kernels_avx512(Math::own) != nullptr;
  }
  return false;
}

bool available(Isa isa) noexcept {
  return compiled(isa) && cpu_can(isa);
}

std::vector<Isa> available_isas() {
  std::vector<Isa> v;
  for (Isa i : {Isa::scalar, Isa::avx2, Isa::avx512})
    if (available(i)) v.push_back(i);
  return v;
}

Isa best_isa(Isa cap) noexcept {
  for (Isa i : {Isa::avx512, Isa::avx2})
    if (static_cast<int>(i) <= static_cast<int>(cap) && available(i)) return i;
  return Isa::scalar;
}

bool parse_isa(std::string_view name, Isa& isa) noexcept {
  for (Isa i : {Isa::scalar, Isa::avx2, Isa::avx512}) {
    if (name == to_string(i)) {
      isa = i;
      return true;
    }
  }
  return false;
}

const Kernels& kernels(Isa isa, Math math) {
  if (!available(isa))
    throw EnvironmentError(fmt::format("data kernels: the {} variant is not {} on this machine",
                                       to_string(isa), compiled(isa) ? "supported" : "compiled"));
  switch (isa) {
    case Isa::avx512:
      return *detail::kernels_avx512(math);
    case Isa::avx2:
      return *detail::kernels_avx2(math);
    case Isa::scalar:
      break;
  }
  return *detail::kernels_scalar(math);
}

const Kernels& best_kernels(Isa cap) {
  // The scalar variant takes SLEEF's math (the reference itself): its own math leans on fused
  // multiply-adds, which baseline x86-64 lacks (std::fma in software).
  const Isa isa = best_isa(cap);
  return kernels(isa, isa == Isa::scalar ? Math::sleef : Math::own);
}

namespace {

/// Element-wise fill through a block kernel (uniforms or normals): a lone odd first element and a
/// lone even last element come from a one-block call, so every value is the kernel's own.
template <class BlockFill>
void fill_elements(BlockFill fill, std::uint64_t seed, std::uint32_t stream, std::uint64_t first,
                   std::size_t count, double* out) {
  if (count == 0) return;
  std::size_t done = 0;
  std::uint64_t e = first;
  double pair[2];
  if (e & 1u) {
    fill(seed, stream, e >> 1, 1, pair);
    out[done++] = pair[1];
    ++e;
  }
  const std::size_t blocks = (count - done) / 2;
  if (blocks > 0) {
    fill(seed, stream, e >> 1, blocks, out + done);
    done += 2 * blocks;
    e += 2 * blocks;
  }
  if (done < count) {
    fill(seed, stream, e >> 1, 1, pair);
    out[done] = pair[0];
  }
}

}  // namespace

void fill_uniform(std::uint64_t seed, std::uint32_t stream, std::uint64_t first, std::size_t count,
                  double* out) {
  fill_elements(best_kernels().uniforms, seed, stream, first, count, out);
}

void fill_normal(std::uint64_t seed, std::uint32_t stream, std::uint64_t first, std::size_t count,
                 double* out) {
  fill_elements(best_kernels().normals, seed, stream, first, count, out);
}

}  // namespace sb::data::simd
