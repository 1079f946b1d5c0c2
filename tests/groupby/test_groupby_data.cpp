// groupby data: Philox and generator bits against the Random123 reference, determinism,
// column ranges, and the Poisson(1000) table.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "groupby/generate.hpp"
#include "groupby/poisson.hpp"
#include "groupby/table.hpp"
#include "scalebench/philox.hpp"

namespace gb = sb::groupby;

namespace {

struct Cols {
  explicit Cols(std::int64_t n) : ts(n), id(n), name(n), x(n), y(n), key(n) {}
  gb::ColumnPtrs ptrs() {
    return {ts.data(), id.data(), name.data(), x.data(), y.data(), key.data()};
  }
  std::vector<std::int64_t> ts, id;
  std::vector<std::int32_t> name;
  std::vector<double> x, y;
  std::vector<std::int64_t> key;
};

bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

}  // namespace

TEST(GroupbyData, PhiloxMatchesRandom123) {
  for (std::uint64_t seed : {0ull, 42ull, 0x123456789abcdefull}) {
    for (std::uint64_t block : {0ull, 1ull, 86399ull, (1ull << 32) + 5, ~0ull}) {
      for (std::uint32_t stream : {0u, gb::kStreamXName, gb::kStreamYKey}) {
        const auto ref = sb::data::philox_words(seed, block, stream);
        const auto mine = gb::philox4x32_10(block, stream, seed);
        for (int i = 0; i < 4; ++i) EXPECT_EQ(mine.w[i], ref[static_cast<std::size_t>(i)]);
      }
    }
  }
  EXPECT_EQ(gb::unit_double(0xffffffffu, 0xffffffffu), sb::data::u01(0xffffffffu, 0xffffffffu));
  EXPECT_EQ(gb::unit_double(0u, 0u), sb::data::u01(0u, 0u));
}

TEST(GroupbyData, UniformEdgesMatchU01AndStayInside) {
  // Words of k = 0, 1, 2^52 - 1, 2^52, 2^53 - 2, 2^53 - 1 (u01 clamps the last to 1 - 2^-53), and
  // random ones, through table.hpp's scalar functions and the generator's vector conversion.
  std::vector<std::uint32_t> hi = {0u, 0u, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFFu, 0xFFFFFFFFu};
  std::vector<std::uint32_t> lo = {0u, 0x800u, 0xFFFFFFFFu, 0u, 0xFFFFF000u, 0xFFFFFFFFu};
  std::uint64_t state = 12345;
  for (int i = 0; i < 1000; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    hi.push_back(static_cast<std::uint32_t>(state >> 32));
    lo.push_back(static_cast<std::uint32_t>(state));
  }
  for (int i = 0; i < 20; ++i) {  // the clamped words again, at every lane position
    hi.push_back(0xFFFFFFFFu);
    lo.push_back(0xFFFFFFFFu);
  }
  std::vector<double> fast(hi.size());
  gb::centered_uniform_lanes(hi.data(), lo.data(), hi.size(), fast.data());
  for (std::size_t i = 0; i < hi.size(); ++i) {
    const double u = sb::data::u01(hi[i], lo[i]);
    ASSERT_TRUE(same_bits(gb::unit_double(hi[i], lo[i]), u)) << i;
    ASSERT_TRUE(same_bits(gb::centered_uniform(hi[i], lo[i]), 2.0 * u - 1.0)) << i;
    ASSERT_TRUE(same_bits(fast[i], gb::centered_uniform(hi[i], lo[i]))) << i;
    ASSERT_GT(fast[i], -1.0) << i;
    ASSERT_LT(fast[i], 1.0) << i;
  }
  EXPECT_EQ(gb::unit_double(0xFFFFFFFFu, 0xFFFFFFFFu), 0x1.fffffffffffffp-1);
  EXPECT_EQ(gb::centered_uniform(0xFFFFFFFFu, 0xFFFFFFFFu), 1.0 - 0x1p-52);
  EXPECT_EQ(gb::centered_uniform(0u, 0u), -1.0 + 0x1p-53);
}

TEST(GroupbyData, GeneratorEqualsScalarReference) {
  const gb::TableSpec spec{7, 12345};
  const std::int64_t row0 = 86400 * 3 + 5;  // odd start: lanes and tail both exercised
  const std::int64_t n = 10007;
  Cols c(n);
  gb::generate_rows(spec, row0, n, gb::kColAll, c.ptrs());
  for (std::int64_t i = 0; i < n; ++i) {
    const gb::RowValues r = gb::reference_row(spec, row0 + i);
    ASSERT_EQ(c.ts[i], r.timestamp) << i;
    ASSERT_EQ(c.id[i], r.id) << i;
    ASSERT_EQ(c.name[i], r.name) << i;
    ASSERT_TRUE(same_bits(c.x[i], r.x)) << i;
    ASSERT_TRUE(same_bits(c.y[i], r.y)) << i;
    ASSERT_EQ(c.key[i], r.key) << i;
  }
}

TEST(GroupbyData, DeterministicAndIndependentOfChunking) {
  const gb::TableSpec spec{42, 10'000'000};
  const std::int64_t n = 50'000;
  Cols whole(n), parts(n), threaded(n);
  gb::generate_rows(spec, 1000, n, gb::kColAll, whole.ptrs());
  for (std::int64_t b = 0; b < n; b += 3001) {
    const std::int64_t len = std::min<std::int64_t>(3001, n - b);
    gb::ColumnPtrs p = parts.ptrs();
    p.timestamp += b;
    p.id += b;
    p.name += b;
    p.x += b;
    p.y += b;
    p.key += b;
    gb::generate_rows(spec, 1000 + b, len, gb::kColAll, p);
  }
  gb::generate_rows_parallel(spec, 1000, n, gb::kColAll, threaded.ptrs(), 3);
  for (const Cols* o : {&parts, &threaded}) {
    EXPECT_EQ(whole.ts, o->ts);
    EXPECT_EQ(whole.id, o->id);
    EXPECT_EQ(whole.name, o->name);
    EXPECT_EQ(whole.key, o->key);
    EXPECT_EQ(0, std::memcmp(whole.x.data(), o->x.data(), sizeof(double) * n));
    EXPECT_EQ(0, std::memcmp(whole.y.data(), o->y.data(), sizeof(double) * n));
  }
  // Only the requested columns are written.
  Cols some(n);
  std::fill(some.y.begin(), some.y.end(), 7.0);
  gb::generate_rows(spec, 1000, n, gb::kColName | gb::kColX, some.ptrs());
  EXPECT_EQ(whole.name, some.name);
  EXPECT_EQ(7.0, some.y[17]);
  // Another seed gives other data.
  Cols other(n);
  gb::generate_rows({43, 10'000'000}, 1000, n, gb::kColAll, other.ptrs());
  EXPECT_NE(whole.x, other.x);
}

TEST(GroupbyData, ColumnRanges) {
  const gb::TableSpec spec{42, 1000};
  const std::int64_t n = 200'000;
  Cols c(n);
  gb::generate_rows(spec, 0, n, gb::kColAll, c.ptrs());
  std::vector<int> names(26, 0);
  std::vector<int> keys(1000, 0);
  double sx = 0, sy = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    ASSERT_GT(c.x[i], -1.0);
    ASSERT_LE(c.x[i], 1.0);
    ASSERT_GT(c.y[i], -1.0);
    ASSERT_LE(c.y[i], 1.0);
    ASSERT_GE(c.name[i], 0);
    ASSERT_LT(c.name[i], 26);
    ASSERT_GE(c.key[i], 0);
    ASSERT_LT(c.key[i], 1000);
    ASSERT_GE(c.id[i], gb::id_poisson_table().kmin);
    ASSERT_LE(c.id[i], gb::id_poisson_table().kmax());
    ++names[static_cast<std::size_t>(c.name[i])];
    ++keys[static_cast<std::size_t>(c.key[i])];
    sx += c.x[i];
    sy += c.y[i];
  }
  EXPECT_EQ(c.ts[0], 946684800LL * 1000000000LL);  // 2000-01-01T00:00:00Z
  EXPECT_EQ(c.ts[86400] - c.ts[0], 86400LL * 1000000000LL);
  // Uniformity, 6-sigma bounds: every name and key appears about n/26, n/1000 times.
  for (int k : names) EXPECT_NEAR(k, n / 26.0, 6 * std::sqrt(n / 26.0));
  for (int k : keys) EXPECT_NEAR(k, n / 1000.0, 6 * std::sqrt(n / 1000.0));
  // x, y uniform(-1, 1): mean 0, sd of the mean sqrt(1/3 / n).
  EXPECT_NEAR(sx / n, 0.0, 6 * std::sqrt(1.0 / 3.0 / n));
  EXPECT_NEAR(sy / n, 0.0, 6 * std::sqrt(1.0 / 3.0 / n));
}

TEST(GroupbyData, PoissonMeanAndVariance) {
  const std::int64_t n = 1'000'000;
  std::vector<std::int64_t> id(n);
  gb::ColumnPtrs p;
  p.id = id.data();
  gb::generate_rows({42, 1}, 0, n, gb::kColId, p);
  double s = 0, s2 = 0;
  for (std::int64_t v : id) {
    s += static_cast<double>(v);
    s2 += static_cast<double>(v) * static_cast<double>(v);
  }
  const double mean = s / n;
  const double var = (s2 - s * s / n) / (n - 1);
  // Fixed 6-sigma bounds: sd(mean) = sqrt(1000 / n) = 0.0316; sd(var) ~ 1000 sqrt(2 / n) = 1.41.
  EXPECT_NEAR(mean, 1000.0, 0.19);
  EXPECT_NEAR(var, 1000.0, 8.5);
}

TEST(GroupbyData, PoissonTableInversion) {
  const gb::PoissonTable& t = gb::id_poisson_table();
  ASSERT_GT(t.entries, 100);
  ASSERT_LE(t.entries, gb::PoissonTable::kMaxEntries);
  EXPECT_GT(t.kmin, 600);
  EXPECT_LT(t.kmax(), 1400);
  EXPECT_EQ(t.threshold[t.entries - 1], ~0ull);
  for (int j = 1; j < t.entries; ++j) ASSERT_LE(t.threshold[j - 1], t.threshold[j]);
  // The guided bisection equals a plain linear search.
  auto linear = [&](std::uint64_t u) {
    int j = 0;
    while (j < t.entries - 1 && t.threshold[j] <= u) ++j;
    return t.kmin + j;
  };
  std::vector<std::uint64_t> us = {0ull, 1ull, ~0ull, ~0ull - 1, 1ull << 63};
  for (int j = 0; j < t.entries; ++j) {
    us.push_back(t.threshold[j]);
    if (t.threshold[j] > 0) us.push_back(t.threshold[j] - 1);
    if (t.threshold[j] < ~0ull) us.push_back(t.threshold[j] + 1);
  }
  for (int g = 0; g < gb::PoissonTable::kGuideSize; ++g) {
    const std::uint64_t b = static_cast<std::uint64_t>(g) << 54;
    us.push_back(b);
    if (b > 0) us.push_back(b - 1);
  }
  for (std::uint64_t i = 0; i < 100000; ++i) {
    const auto w = gb::philox4x32_10(i, 99, 1);
    us.push_back((static_cast<std::uint64_t>(w.w[0]) << 32) | w.w[1]);
  }
  for (std::uint64_t u : us) ASSERT_EQ(t.sample(u), linear(u)) << u;
  // Built from IEEE arithmetic only: rebuilding gives the same table.
  const gb::PoissonTable again = gb::make_poisson_table(1000.0);
  EXPECT_EQ(0, std::memcmp(&again, &t, sizeof t));
  // Small lambda: P(0) = e^-2.
  const gb::PoissonTable two = gb::make_poisson_table(2.0);
  EXPECT_EQ(two.kmin, 0);
  EXPECT_NEAR(static_cast<double>(two.threshold[0]) / 0x1p64, std::exp(-2.0), 1e-15);
}
