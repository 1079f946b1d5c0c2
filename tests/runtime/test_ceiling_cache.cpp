// Ceilings kept per machine (ceiling_cache.hpp): measured once, reused with their date, measured
// anew when asked, when too old or when the cache is damaged; implausible figures not kept.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "../support/scratch_dir.hpp"
#include "scalebench/ceiling_cache.hpp"

namespace {

using sb::test_support::TempDir;

nlohmann::json record(double value) {
  return nlohmann::json::array({{{"kind", "dgemm"}, {"unit", "flop/s"}, {"value", value}}});
}

/// A cache file of `version` holding one entry `key` measured at `epoch` (s since 1970).
void write_entry(const std::string& file, int version, const std::string& key, double epoch) {
  std::ofstream(file) << nlohmann::json{{"version", version},
                                        {"entries",
                                         {{key,
                                           {{"epoch", epoch},
                                            {"measured_utc", "from the test"},
                                            {"ceilings", record(5e9)}}}}}}
                             .dump();
}

TEST(CeilingCache, MeasuredOnceThenCachedWithItsDate) {
  TempDir dir("sbceil");
  const std::string file = (dir.path / "c" / "ceilings.json").string();
  int measured = 0;
  auto measure = [&] { return record(++measured * 1e9); };
  const auto first = sb::cached_ceilings(file, "cpu|a|1", false, measure);
  EXPECT_EQ(first[0]["source"], "measured");
  const auto second = sb::cached_ceilings(file, "cpu|a|1", false, measure);
  EXPECT_EQ(measured, 1);
  EXPECT_EQ(second[0]["source"], "cached");
  EXPECT_EQ(second[0]["value"], 1e9);
  EXPECT_EQ(second[0]["measured_utc"], first[0]["measured_utc"]);
  // Another key is its own entry; --fresh-ceilings measures anew and replaces the entry.
  (void)sb::cached_ceilings(file, "cpu|a|2", false, measure);
  EXPECT_EQ(measured, 2);
  const auto fresh = sb::cached_ceilings(file, "cpu|a|1", true, measure);
  EXPECT_EQ(fresh[0]["source"], "measured");
  EXPECT_EQ(sb::cached_ceilings(file, "cpu|a|1", false, measure)[0]["value"], 3e9);
}

TEST(CeilingCache, OldDamagedOrImplausibleEntriesAreMeasured) {
  TempDir dir("sbceil");
  const std::string file = (dir.path / "ceilings.json").string();
  int measured = 0;
  auto measure = [&] { return record(++measured * 1e9); };
  write_entry(file, 1, "k", 1.0);  // measured in 1970
  EXPECT_EQ(sb::cached_ceilings(file, "k", false, measure)[0]["source"], "measured");
  std::ofstream(file) << "{ not json";
  EXPECT_EQ(sb::cached_ceilings(file, "k", false, measure)[0]["source"], "measured");
  auto never = [](const nlohmann::json&) { return false; };
  (void)sb::cached_ceilings(file, "doubtful", false, measure, never);
  EXPECT_EQ(sb::cached_ceilings(file, "doubtful", false, measure)[0]["source"], "measured");
  EXPECT_EQ(measured, 4);
  // A recent entry of an older cache version (kept without today's checks): measured again.
  write_entry(file, 1, "k", 4.0e9);  // not yet old
  EXPECT_EQ(sb::cached_ceilings(file, "k", false, measure)[0]["source"], "measured");
  EXPECT_EQ(measured, 5);
  // No cache: always measured.
  EXPECT_EQ(sb::cached_ceilings("", "k", false, measure)[0]["source"], "measured");
}

}  // namespace
