#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "scalebench/error.hpp"
#include "scalebench/params.hpp"

namespace {

TEST(ParseInt, AcceptsCommonSpellings) {
  EXPECT_EQ(sb::parse_int("20000", "n"), 20000);
  EXPECT_EQ(sb::parse_int("2_000_000", "n"), 2000000);
  EXPECT_EQ(sb::parse_int("1e6", "n"), 1000000);
  EXPECT_EQ(sb::parse_int("10^7", "n"), 10000000);
  EXPECT_EQ(sb::parse_int("-5", "n"), -5);
}

TEST(ParseInt, RejectsJunkAndOverflow) {
  for (const char* bad : {"", "abc", "12x", "1.5", "1e30", "99999999999999999999", "10^40", "2^-1"})
    EXPECT_THROW((void)sb::parse_int(bad, "n"), sb::UsageError) << bad;
}

TEST(Params, TypedGettersCheckRanges) {
  sb::Params p;
  p.set("n", "100");
  p.set("seed", "18446744073709551615");
  p.set("mu", "10.5");
  EXPECT_EQ(p.i64("n"), 100);
  EXPECT_EQ(p.u64("seed"), 18446744073709551615ULL);
  EXPECT_DOUBLE_EQ(p.f64("mu"), 10.5);
  EXPECT_THROW((void)p.i64("n", 1000), sb::UsageError);
  EXPECT_THROW((void)p.str("missing"), sb::UsageError);
  p.set("seed", "-1");
  EXPECT_THROW((void)p.u64("seed"), sb::UsageError);
  p.set("mu", "nan");
  EXPECT_THROW((void)p.f64("mu"), sb::UsageError);
}

TEST(Params, CanonicalIsSortedAndRoundTripsThroughJson) {
  sb::Params p;
  p.set("n", "4");
  p.set("chunk", "2");
  EXPECT_EQ(p.canonical(), "chunk=2,n=4");
  EXPECT_EQ(sb::Params::from_json(p.to_json()), p);
}

}  // namespace
