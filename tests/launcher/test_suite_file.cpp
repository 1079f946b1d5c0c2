#include <gtest/gtest.h>

#include "case_plan.hpp"
#include "scalebench/error.hpp"
#include "suite_file.hpp"

namespace {

TEST(SuiteFile, ReadsEveryKey) {
  sb::RunRequest r;
  sb::load_suite_text(R"(
preset = "tiny"
repeats = 7
warmup = 0
paths = ["cpu1", "multi-cpu"]
[params]
"subset-mean.n" = 4000
[[case]]
workload = "subset-mean"
paths = ["single-cpu"]
params = { chunk = 1000 }
)",
                      "suite.toml", r);
  EXPECT_EQ(r.preset, "tiny");
  EXPECT_EQ(r.repeats, 7);
  EXPECT_EQ(r.warmup, 0);
  ASSERT_EQ(r.paths.size(), 2u);
  ASSERT_EQ(r.cases.size(), 1u);
  EXPECT_EQ(r.cases[0].params.front(), "chunk=1000");
  const auto cases = sb::plan_cases(r);
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(cases[0].params.str("n"), "4000");
  EXPECT_EQ(cases[0].params.str("chunk"), "1000");
  EXPECT_EQ(cases[0].repeats, 7);
}

TEST(SuiteFile, RejectsTyposAndBadTypes) {
  const char* bad[] = {
      "presett = \"tiny\"",            // unknown key
      "repeats = \"five\"",            // wrong type
      "repeats = -1",                  // out of range
      "paths = [\"cpu1\", 3]",         // not strings
      "paths = [\"tpu\"]",             // unknown path
      "[[case]]\npaths = [\"cpu1\"]",  // case without workload
      "[[case]]\nworkload = \"subset-mean\"\ncolour = 1",
      "preset = ",  // syntax error
  };
  for (const char* text : bad) {
    sb::RunRequest r;
    EXPECT_THROW(sb::load_suite_text(text, "bad.toml", r), sb::UsageError) << text;
  }
}

TEST(SuiteFile, MissingFileIsAUsageError) {
  sb::RunRequest r;
  EXPECT_THROW(sb::load_suite("/nonexistent/suite.toml", r), sb::UsageError);
}

}  // namespace
