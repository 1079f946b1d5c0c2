#include "groupby/generate.hpp"

#include <cstring>

#include "scalebench/philox.hpp"
#include "scalebench/philox_lanes.hpp"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__SANITIZE_ADDRESS__)
#define SB_GB_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define SB_GB_CLONES
#endif

namespace sb::groupby {

namespace {

constexpr int kLanes = 8;

/// Exact uint32 -> double without a (slow, unvectorised) int64 conversion: the bits
/// 0x43300000'xxxxxxxx are the double 2^52 + u.
inline double u32_to_double(std::uint32_t u) {
  const std::uint64_t b = 0x4330000000000000ull | u;
  double d;
  std::memcpy(&d, &b, sizeof d);
  return d - 0x1p52;
}

/// centered_uniform(hi, lo) of table.hpp, written so it vectorises; the same bits: the
/// 53-bit integer k = hi * 2^21 + (lo >> 11) is exact in double; the clamp is a compare and select.
inline double centered_fast(std::uint32_t hi, std::uint32_t lo) {
  const double k = u32_to_double(hi) * 0x1p21 + u32_to_double(lo >> 11);
  const double u = k * 0x1p-53 + 0x1p-54;
  return 2.0 * (u < 0x1.fffffffffffffp-1 ? u : 0x1.fffffffffffffp-1) - 1.0;
}

/// Philox words of kLanes consecutive rows of one stream: w[word][lane].
struct Lanes {
  alignas(64) std::uint32_t w[4][kLanes];
};

/// Philox4x32-10 of kLanes consecutive counters (row0 .. row0 + kLanes - 1) of one stream,
/// written lane-parallel (`omp simd`) so it vectorises with pmuludq / vpmuludq.
inline void philox_lanes(std::uint64_t row0, std::uint32_t stream, std::uint64_t seed, Lanes& out) {
  alignas(64) std::uint32_t c0[kLanes], c1[kLanes], c2[kLanes], c3[kLanes];
#pragma omp simd
  for (int l = 0; l < kLanes; ++l) {
    const std::uint64_t r = row0 + static_cast<std::uint64_t>(l);
    c0[l] = static_cast<std::uint32_t>(r);
    c1[l] = static_cast<std::uint32_t>(r >> 32);
    c2[l] = stream;
    c3[l] = 0u;
  }
  sb::data::philox_rounds_lanes(c0, c1, c2, c3, static_cast<std::uint32_t>(seed),
                                static_cast<std::uint32_t>(seed >> 32));
#pragma omp simd
  for (int l = 0; l < kLanes; ++l) {
    out.w[0][l] = c0[l];
    out.w[1][l] = c1[l];
    out.w[2][l] = c2[l];
    out.w[3][l] = c3[l];
  }
}

/// Rows [row0, row0 + n) with n a multiple of kLanes, written at out + offset.
SB_GB_CLONES void generate_lanes(const TableSpec& spec, const PoissonTable& pt, std::int64_t row0,
                                 std::int64_t n, unsigned columns, const ColumnPtrs& out,
                                 std::int64_t offset) {
  Lanes a;
  const bool want_xn = (columns & (kColX | kColName | kColId)) != 0;
  const bool want_yk = (columns & (kColY | kColKey)) != 0;
  for (std::int64_t i = 0; i < n; i += kLanes) {
    const auto r = static_cast<std::uint64_t>(row0 + i);
    const std::int64_t o = offset + i;
    if (want_xn) {
      philox_lanes(r, kStreamXName, spec.seed, a);
      if (columns & kColX) {
        double* x = out.x + o;
#pragma omp simd
        for (int l = 0; l < kLanes; ++l) x[l] = centered_fast(a.w[0][l], a.w[1][l]);
      }
      if (columns & kColName) {
        std::int32_t* nm = out.name + o;
#pragma omp simd
        for (int l = 0; l < kLanes; ++l) nm[l] = name_code(a.w[2][l]);
      }
      if (columns & kColId)
        for (int l = 0; l < kLanes; ++l) out.id[o + l] = id_of_word(pt, a.w[3][l]);
    }
    if (want_yk) {
      philox_lanes(r, kStreamYKey, spec.seed, a);
      if (columns & kColY) {
        double* y = out.y + o;
#pragma omp simd
        for (int l = 0; l < kLanes; ++l) y[l] = centered_fast(a.w[0][l], a.w[1][l]);
      }
      if (columns & kColKey)
        for (int l = 0; l < kLanes; ++l)
          out.key[o + l] = bounded_key(a.w[2][l], a.w[3][l], spec.cardinality);
    }
    if (columns & kColTimestamp)
      for (int l = 0; l < kLanes; ++l) out.timestamp[o + l] = timestamp_ns(row0 + i + l);
  }
}

}  // namespace

SB_GB_CLONES void centered_uniform_lanes(const std::uint32_t* hi, const std::uint32_t* lo,
                                         std::size_t n, double* out) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) out[i] = centered_fast(hi[i], lo[i]);
}

namespace {

/// One row by the shared per-row functions (tails that do not fill a lane group).
void generate_one(const TableSpec& spec, const PoissonTable& pt, std::int64_t row, unsigned columns,
                  const ColumnPtrs& out, std::int64_t o) {
  const auto r = static_cast<std::uint64_t>(row);
  if (columns & (kColX | kColName | kColId)) {
    const Words4 a = philox4x32_10(r, kStreamXName, spec.seed);
    if (columns & kColX) out.x[o] = centered_uniform(a.w[0], a.w[1]);
    if (columns & kColName) out.name[o] = name_code(a.w[2]);
    if (columns & kColId) out.id[o] = id_of_word(pt, a.w[3]);
  }
  if (columns & (kColY | kColKey)) {
    const Words4 b = philox4x32_10(r, kStreamYKey, spec.seed);
    if (columns & kColY) out.y[o] = centered_uniform(b.w[0], b.w[1]);
    if (columns & kColKey) out.key[o] = bounded_key(b.w[2], b.w[3], spec.cardinality);
  }
  if (columns & kColTimestamp) out.timestamp[o] = timestamp_ns(row);
}

void generate_range(const TableSpec& spec, std::int64_t row0, std::int64_t n, unsigned columns,
                    const ColumnPtrs& out, std::int64_t offset) {
  const PoissonTable& pt = id_poisson_table();
  const std::int64_t bulk = n - n % kLanes;
  if (bulk > 0) generate_lanes(spec, pt, row0, bulk, columns, out, offset);
  for (std::int64_t i = bulk; i < n; ++i)
    generate_one(spec, pt, row0 + i, columns, out, offset + i);
}

}  // namespace

void generate_rows(const TableSpec& spec, std::int64_t row0, std::int64_t n, unsigned columns,
                   const ColumnPtrs& out) {
  generate_range(spec, row0, n, columns, out, 0);
}

void generate_rows_parallel(const TableSpec& spec, std::int64_t row0, std::int64_t n,
                            unsigned columns, const ColumnPtrs& out, int threads) {
  if (threads <= 1 || n < 4096) {
    generate_range(spec, row0, n, columns, out, 0);
    return;
  }
  (void)id_poisson_table();  // built once, before the threads race to it
  // Slices aligned to lanes so every thread runs the vector body.
  const std::int64_t per = ((n / threads) / kLanes) * kLanes;
#pragma omp parallel for num_threads(threads) schedule(static, 1)
  for (int t = 0; t < threads; ++t) {
    const std::int64_t b = per * t;
    const std::int64_t e = (t == threads - 1) ? n : b + per;
    generate_range(spec, row0 + b, e - b, columns, out, b);
  }
}

RowValues reference_row(const TableSpec& spec, std::int64_t row) {
  const auto r = static_cast<std::uint64_t>(row);
  const data::Words a = data::philox_words(spec.seed, r, kStreamXName);
  const data::Words b = data::philox_words(spec.seed, r, kStreamYKey);
  RowValues v{};
  v.timestamp = kEpochNs + row * kNsPerRow;
  v.x = 2.0 * data::u01(a[0], a[1]) - 1.0;
  v.name = static_cast<std::int32_t>((static_cast<std::uint64_t>(a[2]) * 26u) >> 32);
  v.y = 2.0 * data::u01(b[0], b[1]) - 1.0;
  v.key = bounded_key(b[2], b[3], spec.cardinality);
  v.id = id_poisson_table().sample((static_cast<std::uint64_t>(a[3]) << 32) | 0x80000000u);
  return v;
}

}  // namespace sb::groupby
