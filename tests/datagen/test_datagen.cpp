// `scalebench datagen`'s pieces: byte sizes, the exporters' sizes, and that every exported array
// holds the numbers of the workloads' reference generators (philox.hpp, generate.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "datagen_command.hpp"
#include "groupby/config.hpp"
#include "groupby/generate.hpp"
#include "scalebench/error.hpp"
#include "scalebench/input_export.hpp"
#include "scalebench/philox.hpp"
#include "subset_mean/config.hpp"
#include "subset_mean/worker_cpu.hpp"

namespace {

sb::Params params(std::initializer_list<std::pair<const char*, const char*>> kv) {
  sb::Params p;
  for (const auto& [k, v] : kv) p.set(k, v);
  return p;
}

TEST(Datagen, ParsesByteSizes) {
  EXPECT_EQ(sb::parse_byte_size("2147483648"), 2147483648LL);
  EXPECT_EQ(sb::parse_byte_size("2GiB"), 2147483648LL);
  EXPECT_EQ(sb::parse_byte_size("2 GiB"), 2147483648LL);
  EXPECT_EQ(sb::parse_byte_size("500MB"), 500000000LL);
  EXPECT_EQ(sb::parse_byte_size("1e9"), 1000000000LL);
  EXPECT_EQ(sb::parse_byte_size("1.5kb"), 1500LL);
  EXPECT_EQ(sb::parse_byte_size("64KiB"), 65536LL);
  EXPECT_THROW((void)sb::parse_byte_size("lots"), sb::UsageError);
  EXPECT_THROW((void)sb::parse_byte_size("0"), sb::UsageError);
  EXPECT_THROW((void)sb::parse_byte_size("-5"), sb::UsageError);
  EXPECT_THROW((void)sb::parse_byte_size("5 parsecs"), sb::UsageError);
  EXPECT_THROW((void)sb::parse_byte_size("GiB"), sb::UsageError);
}

TEST(Datagen, SizesAreKnownBeforeGenerating) {
  // The large presets describe terabytes without allocating anything.
  const auto sm = sb::export_inputs("subset-mean", {params({{"n", "500000"}, {"chunk", "10000"}})});
  EXPECT_EQ(sm.arrays.at(0).bytes(), 8LL * 500000 * 500000);
  const auto svd = sb::export_inputs(
      "svd", {params({{"m", "2000000"}, {"n", "1000"}, {"chunk", "100000"}, {"seed", "42"}})});
  EXPECT_EQ(svd.arrays.at(0).bytes(), 8LL * 2000000 * 1000);
  EXPECT_FALSE(svd.answer);  // above the size where the workload runs its LAPACK reference
  const auto gb =
      sb::export_inputs("groupby", sb::groupby::expand_params(sb::groupby::preset_params("large")));
  EXPECT_EQ(gb.arrays.size(), 6u);
  EXPECT_GE(gb.bytes(), 44LL * 100000000);
  EXPECT_THROW((void)sb::export_inputs("fft", {sb::Params{}}), sb::UsageError);
}

TEST(Datagen, SubsetMeanMatchesTheReference) {
  const auto p = params({{"n", "64"}, {"chunk", "16"}, {"seed", "7"}, {"mu", "3"}, {"sigma", "2"}});
  const auto e = sb::export_inputs("subset-mean", {p});
  const auto& x = e.arrays.at(0);
  ASSERT_EQ(x.shape, (std::vector<std::int64_t>{64, 64}));
  std::vector<double> rows(3 * 64);
  x.fill(5, 3, rows.data(), 1);
  for (std::int64_t r = 0; r < 3; ++r)
    for (std::int64_t j = 0; j < 64; ++j) {
      const double want = 3.0 + 2.0 * sb::data::normal(7, (5 + r) * 64 + j);
      EXPECT_NEAR(rows[r * 64 + j], want, 1e-14 * std::fabs(want)) << r << "," << j;
    }
  // The answer folds the reference block sums as the scheduler does.
  const auto cfg = sb::subset_mean::parse(p);
  double sub = 0, all = 0;
  for (std::int64_t t = 0; t < cfg.tasks; ++t) {
    const auto s = sb::subset_mean::reference_block_sums(cfg, t);
    sub += s.subset;
    all += s.full;
  }
  const auto a = e.answer(1);
  EXPECT_NEAR(a["answer"].get<double>(), 3.0 + 1.0 + 2.0 * sub / cfg.count(), 1e-13);
  EXPECT_NEAR(a["full_mean"].get<double>(), 3.0 + 2.0 * all / cfg.draws(), 1e-13);
  EXPECT_EQ(a["count"].get<std::int64_t>(), 32 * 32);
}

TEST(Datagen, SvdMatchesTheReferenceBitForBit) {
  for (const char* n : {"6", "5"}) {  // even n: one Philox call per two columns; odd: straddles
    const auto e =
        sb::export_inputs("svd", {params({{"m", "40"}, {"n", n}, {"chunk", "20"}, {"seed", "9"}})});
    const auto& a = e.arrays.at(0);
    const std::int64_t cols = a.shape[1];
    std::vector<double> rows(7 * cols);
    a.fill(11, 7, rows.data(), 1);
    for (std::int64_t r = 0; r < 7; ++r)
      for (std::int64_t j = 0; j < cols; ++j)
        EXPECT_EQ(rows[r * cols + j], sb::data::uniform(9, (11 + r) * cols + j)) << r << "," << j;
    const auto ans = e.answer(1);
    ASSERT_EQ(ans["singular_values"].size(), static_cast<std::size_t>(cols));
    EXPECT_GT(ans["sigma_max"].get<double>(), ans["sigma_min"].get<double>());
  }
}

TEST(Datagen, GroupbyColumnsMatchTheReferenceRow) {
  auto variants = sb::groupby::expand_params(
      params({{"rows", "1000"}, {"partition", "300"}, {"cardinality", "50"}, {"seed", "3"}}));
  const auto e = sb::export_inputs("groupby", variants);
  ASSERT_EQ(e.arrays.size(), 6u);
  const sb::groupby::TableSpec spec{3, 50};
  std::vector<std::int64_t> i64(100);
  std::vector<std::int32_t> i32(100);
  std::vector<double> f64(100);
  for (const auto& a : e.arrays) {
    void* out = a.dtype == sb::InputDtype::i32   ? static_cast<void*>(i32.data())
                : a.dtype == sb::InputDtype::i64 ? static_cast<void*>(i64.data())
                                                 : static_cast<void*>(f64.data());
    a.fill(450, 100, out, 2);
    for (std::int64_t r = 0; r < 100; ++r) {
      const auto ref = sb::groupby::reference_row(spec, 450 + r);
      if (a.path == "table/timestamp") {
        EXPECT_EQ(i64[r], ref.timestamp);
      }
      if (a.path == "table/id") {
        EXPECT_EQ(i64[r], ref.id);
      }
      if (a.path == "table/name") {
        EXPECT_EQ(i32[r], ref.name);
      }
      if (a.path == "table/x") {
        EXPECT_EQ(f64[r], ref.x);
      }
      if (a.path == "table/y") {
        EXPECT_EQ(f64[r], ref.y);
      }
      if (a.path == "table/key") {
        EXPECT_EQ(i64[r], ref.key);
      }
    }
  }
  // Every query answered at this size; counts add up to the rows.
  const auto ans = e.answer(2);
  for (const char* q : {"by-name", "by-id", "by-key"}) {
    ASSERT_TRUE(ans.contains(q)) << q;
    EXPECT_EQ(ans[q]["sum_count"].get<double>(), 1000.0) << q;
  }
  EXPECT_LE(ans["by-key"]["key"].size(), 50u);
}

}  // namespace
