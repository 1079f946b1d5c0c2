// The regression gate: verdicts, exit code, formats (JUnit XML well-formed) and its
// statistics on synthetic samples with fixed seeds.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "scalebench/compare.hpp"
#include "scalebench/error.hpp"
#include "synthetic_model.hpp"

namespace {

using nlohmann::json;
using sb::results::compare_reports;
using sb::results::compare_samples;
using sb::results::CompareOptions;
using sb::results::Verdict;
using sb::results::test::make_case;
using sb::results::test::TempDir;

std::vector<double> scaled(const std::vector<double>& x, double f) {
  std::vector<double> out;
  for (double v : x) out.push_back(v * f);
  return out;
}

const std::vector<double> kBase{1.00, 1.01, 0.99, 1.02, 0.98, 1.00, 1.01, 0.995};

json model_of(std::vector<json> cases) {
  json m;
  m["attrs"] = {{"schema_version", 1}};
  m["cases"] = json::array();
  for (auto& c : cases) m["cases"].push_back(std::move(c));
  return m;
}

json case_(const std::string& wl, const std::string& path, const std::vector<double>& t,
           const std::string& status = "ok") {
  return make_case(0, wl, path, "cpu", 1, t, 100, 800, 0, status);
}

std::pair<json, json> verdict_models() {
  json failed = case_("w", "multi-gpu", kBase);
  failed["validation"][0]["pass"] = false;
  json skipped = case_("w", "single-gpu", {}, "skipped");
  json base_bad = case_("w", "path-x", kBase, "timeout");
  const json base =
      model_of({case_("same", "single-cpu", kBase), case_("slow", "single-cpu", kBase),
                case_("fast", "single-cpu", kBase), case_("noisy", "single-cpu", {1, 2, 3, 4, 5}),
                case_("few", "single-cpu", {1, 1, 1}), case_("w", "multi-gpu", kBase),
                case_("w", "single-gpu", kBase), case_("gone", "single-cpu", kBase), base_bad});
  const json cur = model_of({case_("same", "single-cpu", scaled(kBase, 1.001)),
                             case_("slow", "single-cpu", scaled(kBase, 1.2)),
                             case_("fast", "single-cpu", scaled(kBase, 0.8)),
                             case_("noisy", "single-cpu", {1.2, 2.2, 3.3, 4.1, 5.5}),
                             case_("few", "single-cpu", scaled(kBase, 2.0)), failed, skipped,
                             case_("fresh", "single-cpu", kBase), case_("w", "path-x", kBase)});
  return {base, cur};
}

Verdict verdict_of(const sb::results::Comparison& c, const std::string& workload,
                   const std::string& path = "single-cpu") {
  for (const auto& r : c.cases)
    if (r.workload == workload && r.path == path) return r.verdict;
  ADD_FAILURE() << "no case " << workload << "/" << path;
  return Verdict::same;
}

TEST(Compare, Verdicts) {
  const auto [base, cur] = verdict_models();
  const auto c = compare_reports(base, cur);
  EXPECT_EQ(verdict_of(c, "same"), Verdict::same);
  EXPECT_EQ(verdict_of(c, "slow"), Verdict::slower);
  EXPECT_EQ(verdict_of(c, "fast"), Verdict::faster);
  EXPECT_EQ(verdict_of(c, "noisy"), Verdict::noisy);
  EXPECT_EQ(verdict_of(c, "few"), Verdict::too_few_repeats);
  EXPECT_EQ(verdict_of(c, "w", "multi-gpu"), Verdict::failed);
  EXPECT_EQ(verdict_of(c, "w", "single-gpu"), Verdict::missing);  // ok in baseline, skipped now
  EXPECT_EQ(verdict_of(c, "fresh"), Verdict::new_case);
  EXPECT_EQ(verdict_of(c, "gone"), Verdict::missing);
  EXPECT_EQ(verdict_of(c, "w", "path-x"), Verdict::new_case);  // baseline timed out
  EXPECT_EQ(c.cases.size(), 10u);
  EXPECT_TRUE(c.regressed());
  EXPECT_EQ(sb::results::comparison_exit_code(c), 1);

  for (const auto& r : c.cases) {
    if (r.workload == "slow") {
      EXPECT_NEAR(r.change, 0.2, 1e-12);
      EXPECT_LT(r.p_value, 0.01);
      EXPECT_EQ(r.baseline_repeats, kBase.size());
    }
  }
}

TEST(Compare, NoRegressionGivesExitCodeZero) {
  const json base = model_of({case_("a", "single-cpu", kBase), case_("b", "single-cpu", kBase)});
  const json cur =
      model_of({case_("a", "single-cpu", scaled(kBase, 0.7)),
                case_("b", "single-cpu", scaled(kBase, 1.03)), case_("c", "single-cpu", {1, 1})});
  const auto c = compare_reports(base, cur);
  EXPECT_FALSE(c.regressed());
  EXPECT_EQ(sb::results::comparison_exit_code(c), 0);
  EXPECT_EQ(verdict_of(c, "b"), Verdict::same);  // 3% is under the 5% threshold
  // a tighter threshold turns the 3% slowdown into a regression
  CompareOptions tight;
  tight.threshold = 0.02;
  EXPECT_EQ(verdict_of(compare_reports(base, cur, tight), "b"), Verdict::slower);
}

TEST(Compare, MatchesByParameters) {
  json other = case_("a", "single-cpu", scaled(kBase, 2.0));
  other["params"]["n"] = "9999";
  const auto c = compare_reports(model_of({case_("a", "single-cpu", kBase)}), model_of({other}));
  EXPECT_EQ(verdict_of(c, "a"), Verdict::new_case);
  EXPECT_EQ(c.cases.size(), 2u);  // new + missing
}

/// Fraction of trials flagged as regressions: baseline ~ N(1, noise), current ~ factor x that.
double regression_rate(double factor, std::uint64_t seed, int trials = 1000) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0.0, 1.0);
  int flagged = 0;
  for (int t = 0; t < trials; ++t) {
    std::vector<double> a(10), b(10);
    for (auto& x : a) x = 1.0 * (1.0 + 0.02 * z(rng));
    for (auto& x : b) x = factor * (1.0 + 0.02 * z(rng));
    if (sb::results::is_regression(compare_samples(a, b).verdict)) ++flagged;
  }
  return flagged / static_cast<double>(trials);
}

TEST(CompareStatistics, AAComparisonsRarelyFlagARegression) {
  for (std::uint64_t seed : {1u, 2u, 3u}) EXPECT_LE(regression_rate(1.0, seed), 0.01) << seed;
}

TEST(CompareStatistics, TenPercentSlowdownIsCaught) {
  for (std::uint64_t seed : {4u, 5u, 6u}) EXPECT_GE(regression_rate(1.10, seed), 0.95) << seed;
}

TEST(CompareStatistics, FiveRepeatsAreEnough) {
  const std::vector<double> a{1.0, 1.01, 0.99, 1.02, 0.98}, b{1.2, 1.21, 1.19, 1.22, 1.18};
  EXPECT_EQ(compare_samples(a, b).verdict, Verdict::slower);
  EXPECT_EQ(compare_samples(std::vector<double>(a.begin(), a.end() - 1), b).verdict,
            Verdict::too_few_repeats);
}

TEST(Compare, Formats) {
  const auto [base, cur] = verdict_models();
  const auto c = compare_reports(base, cur);
  const std::string table = sb::results::format_comparison(c, "table");
  EXPECT_NE(table.find("slower"), std::string::npos);
  EXPECT_NE(table.find("+20.0%"), std::string::npos) << table;
  EXPECT_NE(table.find("REGRESSION"), std::string::npos);
  const std::string md = sb::results::format_comparison(c, "markdown");
  EXPECT_NE(md.find("| case | verdict |"), std::string::npos);
  EXPECT_NE(md.find("too-few-repeats"), std::string::npos);
  EXPECT_THROW((void)sb::results::format_comparison(c, "xml"), sb::UsageError);
}

TEST(Compare, JunitXmlIsWellFormed) {
  auto [base, cur] = verdict_models();
  cur["cases"][0]["id"] = "odd <name> & \"quotes\" \x01";
  const auto c = compare_reports(base, cur);
  const std::string xml = sb::results::format_comparison(c, "junit");
  EXPECT_EQ(xml.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>", 0), 0u);
  // failed, slower, and the two missing cases (--allow-missing not given)
  EXPECT_NE(xml.find("failures=\"4\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("tests=\"10\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("odd &lt;name&gt; &amp; &quot;quotes&quot; "), std::string::npos);

  const std::string python = SB_PYTHON3;
  if (python.empty() || !std::filesystem::exists(python)) GTEST_SKIP() << "no python3 to parse XML";
  TempDir dir("compare-junit");
  const std::string path = dir.file("junit.xml");
  std::ofstream(path) << xml;
  const std::string script =
      "import sys, xml.etree.ElementTree as ET\n"
      "r = ET.parse(sys.argv[1]).getroot()\n"
      "cases = r.findall('./testsuite/testcase')\n"
      "assert r.tag == 'testsuites', r.tag\n"
      "assert len(cases) == int(r.get('tests')) == 10\n"
      "assert sum(1 for c in cases if c.find('failure') is not None) == int(r.get('failures')) == "
      "4\n"
      "assert sum(1 for c in cases if c.find('skipped') is not None) == int(r.get('skipped'))\n";
  const std::string py = dir.file("check.py");
  std::ofstream(py) << script;
  const std::string cmd = python + " '" + py + "' '" + path + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << xml;
}

TEST(Compare, Threshold) {
  EXPECT_DOUBLE_EQ(sb::results::parse_threshold("5%"), 0.05);
  EXPECT_DOUBLE_EQ(sb::results::parse_threshold("2.5%"), 0.025);
  EXPECT_DOUBLE_EQ(sb::results::parse_threshold("0.05"), 0.05);
  for (const char* bad : {"", "%", "abc", "5", "150%", "-1%", "5%%", "1e400"})
    EXPECT_THROW((void)sb::results::parse_threshold(bad), sb::UsageError) << bad;
}

}  // namespace
