#include <gtest/gtest.h>

#include <filesystem>

#include "case_plan.hpp"
#include "scalebench/error.hpp"
#include "scalebench/job_plan.hpp"
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

TEST(SuiteFile, AutoRepeatsWithTheirLimits) {
  sb::RunRequest r;
  r.preset = "tiny";
  sb::load_suite_text(
      "repeats = \"auto\"\nmax_repeats = 30\nmin_repeats = 4\nmax_time = 2.5\n"
      "target_spread = 0.02\nworkloads = [\"subset-mean\"]\npaths = [\"cpu1\"]\n",
      "auto.toml", r);
  EXPECT_TRUE(r.auto_repeats);
  const auto cases = sb::plan_cases(r);
  ASSERT_EQ(cases.size(), 1u);
  const sb::RepeatRule rule = cases[0].repeat_rule();
  EXPECT_TRUE(rule.adaptive());
  EXPECT_EQ(rule.min_repeats, 4);
  EXPECT_EQ(rule.max_repeats, 30);
  EXPECT_DOUBLE_EQ(rule.max_time_s, 2.5);
  EXPECT_DOUBLE_EQ(rule.target_spread, 0.02);
  // The job plan carries the rule to the ranks.
  const sb::CaseSpec back = sb::case_spec_from_json(sb::case_spec_to_json(cases[0]));
  EXPECT_EQ(back.repeat_rule().min_repeats, 4);
  EXPECT_DOUBLE_EQ(back.repeat_rule().target_spread, 0.02);

  // Limits without "auto", and out-of-range limits, are refused.
  sb::RunRequest fixed;
  EXPECT_THROW(sb::load_suite_text("repeats = 5\nmax_time = 3\n", "f.toml", fixed), sb::UsageError);
  for (const char* bad : {"min_repeats = 1", "min_repeats = 50\nmax_repeats = 10",
                          "target_spread = 1.5", "max_time = 0"}) {
    sb::RunRequest b;
    b.preset = "tiny";
    sb::load_suite_text(std::string("repeats = \"auto\"\n") + bad, "b.toml", b);
    EXPECT_THROW((void)sb::plan_cases(b), sb::UsageError) << bad;
  }
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

TEST(SuiteFile, PluginsAreRelativeToTheSuiteFilesFolder) {
  sb::RunRequest r;
  sb::load_suite_text(R"(plugins = ["build/libtiled_dgemm.so", "/opt/sb/libmine.so"])",
                      "/work/suites/gpu.toml", r);
  EXPECT_EQ(r.plugins, (std::vector<std::string>{"/work/suites/build/libtiled_dgemm.so",
                                                 "/opt/sb/libmine.so"}));
  sb::RunRequest here;
  sb::load_suite_text(R"(plugins = ["libx.so"])", "gpu.toml", here);
  EXPECT_EQ(here.plugins, (std::vector<std::string>{"libx.so"}));
  for (const char* text : {"plugins = \"libx.so\"", "plugins = [\"\"]", "plugins = [1]"}) {
    sb::RunRequest bad;
    EXPECT_THROW(sb::load_suite_text(text, "bad.toml", bad), sb::UsageError) << text;
  }
}

TEST(SuiteFile, MissingFileIsAUsageError) {
  sb::RunRequest r;
  EXPECT_THROW(sb::load_suite("/nonexistent/suite.toml", r), sb::UsageError);
}

TEST(SuiteFile, TheShippedSuitesPlan) {
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(SB_SOURCE_DIR) /
                                                           "examples/suites")) {
    sb::RunRequest r;
    ASSERT_NO_THROW(sb::load_suite(e.path().string(), r)) << e.path();
    EXPECT_FALSE(sb::plan_cases(r).empty()) << e.path();
  }
  sb::RunRequest r;
  sb::load_suite(
      (std::filesystem::path(SB_SOURCE_DIR) / "examples/suites/acceptance.toml").string(), r);
  EXPECT_EQ(r.paths, (std::vector<sb::ExecPath>{sb::ExecPath::each_gpu, sb::ExecPath::each_node}));
}

// The same-work suite's pairs run in both orders (the [[case]] tables in file order), so that a
// host drifting between cases is not taken for a path's cost.
TEST(SuiteFile, TheSameWorkSuiteAlternatesThePaths) {
  sb::RunRequest r;
  sb::load_suite(
      (std::filesystem::path(SB_SOURCE_DIR) / "examples/suites/svd-seed-same-work.toml").string(),
      r);
  std::vector<std::string> got;
  for (const auto& c : sb::plan_cases(r)) {
    EXPECT_EQ(c.repeats, 20) << c.id;
    got.push_back(std::string(sb::to_string(c.path)) + " seed=" + c.params.str("seed"));
  }
  EXPECT_EQ(got, (std::vector<std::string>{"single-gpu seed=42", "multi-gpu seed=42",
                                           "multi-gpu seed=43", "single-gpu seed=43",
                                           "multi-gpu seed=44", "single-gpu seed=44"}));
}

}  // namespace
