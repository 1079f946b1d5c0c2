// The A/B gate's side of the results library: the minimum detectable effect of every verdict,
// when a change is decided, a busy baseline that could hide a slowdown, the /ab section of a
// report (written and read back) and compare on one A/B report.

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "scalebench/bootstrap.hpp"
#include "scalebench/compare.hpp"
#include "scalebench/error.hpp"
#include "scalebench/report.hpp"
#include "synthetic_model.hpp"

namespace {

using nlohmann::json;
using sb::results::CaseComparison;
using sb::results::compare_ab_report;
using sb::results::compare_reports;
using sb::results::compare_samples;
using sb::results::CompareOptions;
using sb::results::Verdict;
using sb::results::test::make_case;
using sb::results::test::make_model;
using sb::results::test::TempDir;

std::vector<double> noisy(double base, double sd, int n, unsigned seed) {
  std::mt19937 g(seed);
  std::normal_distribution<double> d(0.0, sd);
  std::vector<double> out;
  for (int i = 0; i < n; ++i) out.push_back(base * (1.0 + d(g)));
  return out;
}

TEST(MinimumDetectableEffect, EveryComparedVerdictStatesIt) {
  const auto b = noisy(1.0, 0.01, 15, 1);
  const auto c = noisy(1.0, 0.01, 15, 2);
  const CaseComparison r = compare_samples(b, c);
  ASSERT_TRUE(std::isfinite(r.mde));
  // At least the threshold, and a little more: the spread's share of power.
  EXPECT_GT(r.mde, 0.05);
  EXPECT_LT(r.mde, 0.07);
  EXPECT_NE(r.detail.find(fmt::format("MDE {:.1f}%", r.mde * 100)), std::string::npos) << r.detail;
  // A wide spread: the interval, not the threshold, bounds what the run could see.
  const CaseComparison wide = compare_samples(noisy(1.0, 0.15, 15, 3), noisy(1.0, 0.15, 15, 4));
  EXPECT_GT(wide.mde, r.mde);
  EXPECT_GT(wide.mde, (wide.change_high - wide.change_low) / 2);
  // More repeats, smaller effect.
  const CaseComparison many = compare_samples(noisy(1.0, 0.15, 120, 3), noisy(1.0, 0.15, 120, 4));
  EXPECT_LT(many.mde, wide.mde);
  // Too few repeats: nothing compared, no MDE.
  EXPECT_TRUE(std::isnan(compare_samples(std::vector<double>{1, 1}, b).mde));
}

TEST(MinimumDetectableEffect, FollowsTheFormula) {
  // se 0.02, alpha 0.01: z = 2.5758, z(0.8) = 0.8416 -> max(0.05, 0.0515) + 0.0168
  EXPECT_NEAR(sb::results::minimum_detectable_effect(0.02, 0.05, 0.01), 0.0515 + 0.0168, 2e-4);
  // a tight spread: the threshold plus a little
  EXPECT_NEAR(sb::results::minimum_detectable_effect(0.001, 0.05, 0.01), 0.05 + 0.00084, 1e-5);
  EXPECT_TRUE(std::isnan(sb::results::minimum_detectable_effect(NAN, 0.05, 0.01)));
}

TEST(Decided, SlowerFasterOrAnIntervalWithinTheThreshold) {
  const CompareOptions o;
  const auto b = noisy(1.0, 0.01, 30, 5);
  const CaseComparison slow = compare_samples(b, noisy(1.2, 0.01, 30, 6), o);
  EXPECT_EQ(slow.verdict, Verdict::slower);
  EXPECT_TRUE(is_decided(slow, o));
  const CaseComparison fast = compare_samples(b, noisy(0.8, 0.01, 30, 7), o);
  EXPECT_TRUE(is_decided(fast, o));
  const CaseComparison same = compare_samples(b, noisy(1.0, 0.01, 30, 8), o);
  EXPECT_EQ(same.verdict, Verdict::same);
  EXPECT_TRUE(is_decided(same, o));
  // `same` by its point, but the interval reaches past the threshold: not decided yet.
  const CaseComparison open = compare_samples(noisy(1.0, 0.2, 6, 9), noisy(1.0, 0.2, 6, 10), o);
  if (open.verdict == Verdict::same) {
    EXPECT_TRUE(open.change_high > o.threshold || open.change_low < -o.threshold);
    EXPECT_FALSE(is_decided(open, o));
  }
  const CaseComparison noisy_one = compare_samples(std::vector<double>{1, 2, 3, 4, 5},
                                                   std::vector<double>{1.2, 2.2, 3.3, 4.1, 5.5}, o);
  EXPECT_EQ(noisy_one.verdict, Verdict::noisy);
  EXPECT_FALSE(is_decided(noisy_one, o));
}

TEST(AbRounds, RepeatsThatSharedAMomentCountOnce) {
  // Four rounds of turns of 8 repeats: in rounds 0 and 2 the current side's turn fell on a
  // quiet moment of the machine (10% faster than all else), the baseline's did not. Pooled
  // repeat by repeat, that looks like a decided 9% speed-up; resampling rounds, four of them
  // cannot tell a speed-up from two lucky moments.
  std::vector<std::vector<double>> base, cur;
  for (int round = 0; round < 4; ++round) {
    const double quiet = round % 2 == 0 ? 1.0 / 1.1 : 1.0;
    base.push_back(noisy(1.1, 0.005, 8, 100 + round));
    cur.push_back(noisy(1.1 * quiet, 0.005, 8, 200 + round));
  }
  std::vector<double> b, c;
  for (int i = 0; i < 4; ++i) {
    b.insert(b.end(), base[i].begin(), base[i].end());
    c.insert(c.end(), cur[i].begin(), cur[i].end());
  }
  const CaseComparison pooled = compare_samples(b, c);
  EXPECT_EQ(pooled.verdict, Verdict::faster);
  const CaseComparison rounds = sb::results::compare_rounds(base, cur);
  EXPECT_EQ(rounds.rounds, 4u);
  EXPECT_NEAR(rounds.change, pooled.change, 1e-12);  // the same fastest thirds
  EXPECT_EQ(rounds.verdict, Verdict::noisy);
  EXPECT_GT(rounds.change_high, 0.0);
  // Four rounds are too few for a 99% signed-rank interval: no change could be decided, and the
  // MDE is unknown.
  EXPECT_TRUE(std::isinf(rounds.paired_high));
  EXPECT_TRUE(std::isnan(rounds.mde));
  // Sixteen rounds of a real 9% speed-up, every turn alike: decided either way.
  base.clear();
  cur.clear();
  for (int round = 0; round < 16; ++round) {
    base.push_back(noisy(1.1, 0.005, 8, 300 + round));
    cur.push_back(noisy(1.0, 0.005, 8, 400 + round));
  }
  EXPECT_EQ(sb::results::compare_rounds(base, cur).verdict, Verdict::faster);
  // Reproducible, as the gate's interval is.
  const auto i1 = sb::results::bootstrap_fast_ratio_rounds(base, cur, 0.99);
  const auto i2 = sb::results::bootstrap_fast_ratio_rounds(base, cur, 0.99);
  EXPECT_EQ(i1.low, i2.low);
  EXPECT_EQ(i1.high, i2.high);
  EXPECT_TRUE(std::isnan(sb::results::bootstrap_fast_ratio_rounds({}, {}, 0.99).low));
}

json model_of(std::vector<json> cases) {
  json m;
  m["attrs"] = {{"schema_version", 1}};
  m["cases"] = json::array();
  for (auto& c : cases) m["cases"].push_back(std::move(c));
  return m;
}

json case_at(int index, const std::vector<double>& t, const std::string& status = "ok") {
  return make_case(index, "subset-mean", "multi-cpu", "cpu", 1, t, 100, 800, 0, status);
}

json with_load(json c, double other, double probe_s) {
  c["interference"] = {{"other_cpu_fraction", other},
                       {"cpu_mhz", {{"median", 3000}}},
                       {"cgroup_throttled_s", 0.0},
                       {"vector_probe_s", probe_s}};
  return c;
}

TEST(BusyBaseline, ASameVerdictThatCouldHideASlowdownIsInconclusive) {
  // A nightly baseline measured on a slowed machine (its vector probe 30% slower): the current
  // run, 3% slower than it, may hide a regression of up to twice that.
  const auto t = noisy(1.0, 0.005, 15, 11);
  const json base = model_of({with_load(case_at(0, t), 0.0, 11.7e-6)});
  std::vector<double> cur_t;
  for (double v : noisy(1.0, 0.005, 15, 12)) cur_t.push_back(1.03 * v);
  const json cur = model_of({with_load(case_at(0, cur_t), 0.0, 9.0e-6)});
  const auto c = compare_reports(base, cur);
  ASSERT_EQ(c.cases.size(), 1u);
  EXPECT_EQ(c.cases[0].verdict, Verdict::inconclusive);
  EXPECT_NE(c.cases[0].detail.find("in the baseline run, which could hide a slowdown of up to"),
            std::string::npos)
      << c.cases[0].detail;
  EXPECT_EQ(comparison_exit_code(c), sb::kExitInconclusive);
  // Equally loaded runs, or a busier current run: `same` stays.
  const json quiet = model_of({with_load(case_at(0, t), 0.0, 9.0e-6)});
  EXPECT_EQ(compare_reports(quiet, cur).cases[0].verdict, Verdict::same);
  const json busy_cur = model_of({with_load(case_at(0, cur_t), 0.4, 12e-6)});
  EXPECT_EQ(compare_reports(quiet, busy_cur).cases[0].verdict, Verdict::same);
}

/// An A/B report: current's cases, the baseline side's under ab.baseline, both sides' rows.
json ab_model(std::vector<json> base, std::vector<json> cur) {
  json m = make_model();
  m["cases"] = json::array();
  for (auto& c : cur) m["cases"].push_back(std::move(c));
  json bc = json::array();
  for (auto& c : base) bc.push_back(std::move(c));
  json turns = json::array();
  for (int t = 0; t < 6; ++t)
    turns.push_back({{"turn", t},
                     {"index", 0},
                     {"side", t % 2 == 0 ? "baseline" : "current"},
                     {"repeats", t < 2 ? 0 : 2},
                     {"first_repeat", t < 2 ? 0 : 2 * (t / 2 - 1)},
                     {"round", t < 2 ? -1 : t / 2 - 1},
                     {"start_s", 0.1 * t},
                     {"wall_s", 0.1}});
  m["ab"] = {
      {"protocol", 1},
      {"seed", 7},
      {"block", "auto"},
      {"order", "random"},
      {"threshold", 0.05},
      {"alpha", 0.01},
      {"on_noisy", "warn"},
      {"sides", json::array({{{"side", "baseline"},
                              {"label", "main"},
                              {"rank_program", "/old/scalebench-rank"},
                              {"rank_sha256", "aa"},
                              {"version", "0.1.0"},
                              {"git_sha", "1111111111111111"},
                              {"build_type", "release"},
                              {"plugins", ""},
                              {"plugin_sha256", ""},
                              {"env", "NCCL_ALGO=Tree"},
                              {"params", ""},
                              {"mpiexec", ""}},
                             {{"side", "current"},
                              {"label", "current"},
                              {"rank_program", "/new/scalebench-rank"},
                              {"rank_sha256", "bb"},
                              {"version", "0.1.0"},
                              {"git_sha", "2222222222222222"},
                              {"build_type", "release"},
                              {"plugins", ""},
                              {"plugin_sha256", ""},
                              {"env", ""},
                              {"params", ""},
                              {"mpiexec", ""}}})},
      {"turns", turns},
      {"baseline", {{"system", m["system"]}, {"startup", m["startup"]}, {"cases", std::move(bc)}}}};
  return m;
}

TEST(AbReport, WrittenAndReadBack) {
  TempDir dir("ab-report");
  json c0 = case_at(0, {1.0, 1.01, 0.99, 1.0, 1.02});
  for (std::size_t i = 0; i < c0["repeats"].size(); ++i) c0["repeats"][i]["turn"] = 2 + i;
  c0["repeat_stop"] = {{"reason", "decided"}, {"repeats", 5}, {"rounds", 3}};
  const json m = ab_model({c0}, {case_at(0, {1.0, 1.0, 1.0, 1.0, 1.0})});
  sb::results::write_report(m, dir.file("ab.h5"));
  const json back = sb::results::read_report(dir.file("ab.h5"));
  ASSERT_TRUE(sb::results::is_ab_report(back));
  const json& ab = back.at("ab");
  EXPECT_EQ(ab.at("seed"), 7);
  EXPECT_EQ(ab.at("block"), "auto");
  ASSERT_EQ(ab.at("sides").size(), 2u);
  EXPECT_EQ(ab.at("sides")[0].at("rank_program"), "/old/scalebench-rank");
  EXPECT_EQ(ab.at("sides")[0].at("env"), "NCCL_ALGO=Tree");
  ASSERT_EQ(ab.at("turns").size(), 6u);
  EXPECT_EQ(ab.at("turns")[3].at("side"), "current");
  EXPECT_EQ(ab.at("turns")[3].at("repeats"), 2);
  const json& bcases = ab.at("baseline").at("cases");
  ASSERT_EQ(bcases.size(), 1u);
  EXPECT_EQ(bcases[0].at("repeats").size(), 5u);  // the times table, back as repeats
  EXPECT_EQ(bcases[0].at("repeats")[1].at("turn"), 3);
  EXPECT_EQ(bcases[0].at("repeat_stop").at("reason"), "decided");
  EXPECT_EQ(ab.at("baseline").at("system").at("nodes"), m["system"]["nodes"]);
  EXPECT_FALSE(ab.at("baseline").at("startup").empty());
  EXPECT_FALSE(back.contains("extra"));
  EXPECT_EQ(back.at("cases").size(), 1u);
}

TEST(AbReport, CompareJudgesItsTwoSides) {
  const json m =
      ab_model({case_at(0, noisy(1.0, 0.005, 12, 21)), case_at(1, noisy(1.0, 0.005, 12, 22)),
                case_at(2, noisy(1.0, 0.005, 12, 23))},
               {case_at(0, noisy(1.2, 0.005, 12, 24)), case_at(1, noisy(1.0, 0.005, 12, 25)),
                case_at(2, {}, "failed")});
  const auto c = compare_ab_report(m);
  ASSERT_EQ(c.cases.size(), 3u);
  EXPECT_EQ(c.cases[0].verdict, Verdict::slower);
  EXPECT_EQ(c.cases[1].verdict, Verdict::same);
  EXPECT_EQ(c.cases[2].verdict, Verdict::failed);
  EXPECT_EQ(comparison_exit_code(c), 1);
  ASSERT_TRUE(c.ab.has_value());
  EXPECT_EQ(c.ab->seed, 7u);
  EXPECT_EQ(c.ab->turns, 6u);
  EXPECT_NE(c.ab->baseline.find("main: /old/scalebench-rank (0.1.0 111111111111)"),
            std::string::npos)
      << c.ab->baseline;
  EXPECT_NE(c.ab->baseline.find("env NCCL_ALGO=Tree"), std::string::npos) << c.ab->baseline;
  const std::string table = format_comparison(c, "table");
  EXPECT_NE(table.find("A/B: both sides in one job, 6 turns"), std::string::npos) << table;
  EXPECT_NE(table.find("baseline main: /old/scalebench-rank"), std::string::npos) << table;
  EXPECT_NE(format_comparison(c, "junit").find("<property name=\"ab\""), std::string::npos);
  // Differences of the sides' builds are printed as in any compare.
  bool version = false;
  for (const auto& d : c.system) version = version || d.what == "scalebench version";
  EXPECT_FALSE(version);  // both 0.1.0
}

TEST(AbReport, SidesArePairedByPositionWhateverTheirParameters) {
  json b = case_at(0, noisy(1.0, 0.005, 12, 31));
  b["params"]["n"] = "20000";
  b["id"] = "subset-mean/multi-cpu/chunk=500,n=20000,seed=42";
  json c = case_at(0, noisy(1.1, 0.005, 12, 32));
  c["params"]["n"] = "22000";
  c["id"] = "subset-mean/multi-cpu/chunk=500,n=22000,seed=42";
  const auto cmp = compare_ab_report(ab_model({b}, {c}));
  ASSERT_EQ(cmp.cases.size(), 1u);
  EXPECT_EQ(cmp.cases[0].verdict, Verdict::slower);
  EXPECT_NE(cmp.cases[0].detail.find("baseline ran chunk=500,n=20000,seed=42"), std::string::npos)
      << cmp.cases[0].detail;
}

TEST(AbReport, NoBusyMachineRuleBetweenSidesOfOneJob) {
  // The hog happened to hit the current side's turns more: a chance of the turns, not another
  // machine, so a real slowdown stays slower.
  const json m = ab_model({with_load(case_at(0, noisy(1.0, 0.005, 15, 41)), 0.05, 9e-6)},
                          {with_load(case_at(0, noisy(1.12, 0.005, 15, 42)), 0.12, 10e-6)});
  EXPECT_EQ(compare_ab_report(m).cases[0].verdict, Verdict::slower);
  // The same two records as two time-separated reports: the busier current run explains it.
  json base = model_of({m["ab"]["baseline"]["cases"][0]});
  json cur = model_of({m["cases"][0]});
  EXPECT_EQ(compare_reports(base, cur).cases[0].verdict, Verdict::inconclusive);
}

TEST(AbReport, AMachineBusyInBothSidesTurnsIsInconclusive) {
  // Other processes held 60% and 65% of the cores in the two sides' turns: a side's fastest
  // repeats are then those that met a quiet moment, and +20% is within what that explains.
  const json m = ab_model({with_load(case_at(0, noisy(1.0, 0.005, 15, 61)), 0.60, 9e-6)},
                          {with_load(case_at(0, noisy(1.2, 0.005, 15, 62)), 0.65, 9e-6)});
  const auto c = compare_ab_report(m);
  EXPECT_EQ(c.cases[0].verdict, Verdict::inconclusive);
  EXPECT_NE(c.cases[0].detail.find("60% and 65% of the cores taken by other processes in the "
                                   "baseline's and the current side's turns"),
            std::string::npos)
      << c.cases[0].detail;
  EXPECT_NE(format_comparison(c, "table").find("either side's fastest repeats were luck"),
            std::string::npos);
  // 20% of the cores: judged on the times.
  const json quiet = ab_model({with_load(case_at(0, noisy(1.0, 0.005, 15, 61)), 0.20, 9e-6)},
                              {with_load(case_at(0, noisy(1.2, 0.005, 15, 62)), 0.20, 9e-6)});
  EXPECT_EQ(compare_ab_report(quiet).cases[0].verdict, Verdict::slower);
}

TEST(AbReport, OneSidesBusyTurnsAreEnoughToBeInconclusive) {
  // A CI runner's A/A gate: other tests took 41% of the cores in the current side's turns and
  // 10% in the baseline's; the few quiet moments fell on the baseline, its fastest third came
  // out 3x faster. Chance of the turns, and the load says how much chance can do.
  const json m = ab_model({with_load(case_at(0, noisy(4.2e-3, 0.05, 16, 71)), 0.10, 9e-6)},
                          {with_load(case_at(0, noisy(14.3e-3, 0.05, 16, 72)), 0.41, 9e-6)});
  const auto c = compare_ab_report(m);
  EXPECT_EQ(c.cases[0].verdict, Verdict::inconclusive) << c.cases[0].detail;
  EXPECT_NE(c.cases[0].detail.find("10% and 41% of the cores"), std::string::npos)
      << c.cases[0].detail;
  EXPECT_EQ(sb::results::comparison_exit_code(c), 5);
}

TEST(AbReport, ATurnWhoseRepeatsWereAllLeftOutDoesNotUndoThePairedRounds) {
  // Twelve rounds of four repeats a side, the current side 10% slower; bursts of host stalls
  // (a GPU shared with other jobs) marked every repeat of the current side's fifth and last
  // turns. The run
  // said `slower`; the report, leaving the marked repeats out, must not lose the rounds' pairing
  // (it said "paired rounds: none", `noisy`, exit 5).
  json b = case_at(0, noisy(1.0, 0.005, 48, 41));
  json c = case_at(0, noisy(1.1, 0.005, 48, 42));
  for (int i = 0; i < 48; ++i) {
    b["repeats"][i]["turn"] = 2 * (i / 4);
    c["repeats"][i]["turn"] = 2 * (i / 4) + 1;
    if (i / 4 == 4 || i / 4 == 11) c["repeats"][i]["host_stalled"] = true;
  }
  json m = ab_model({b}, {c});
  m["ab"]["turns"] = json::array();
  for (int t = 0; t < 24; ++t)
    m["ab"]["turns"].push_back({{"turn", t},
                                {"index", 0},
                                {"side", t % 2 == 0 ? "baseline" : "current"},
                                {"repeats", 4},
                                {"first_repeat", 4 * (t / 2)},
                                {"round", t / 2},
                                {"start_s", 0.1 * t},
                                {"wall_s", 0.1}});
  const auto cmp = compare_ab_report(m);
  ASSERT_EQ(cmp.cases.size(), 1u);
  const auto& r = cmp.cases[0];
  EXPECT_EQ(r.verdict, Verdict::slower) << r.detail;
  EXPECT_TRUE(std::isfinite(r.paired_change)) << r.detail;
  EXPECT_GT(r.paired_low, 0.0) << r.detail;
  EXPECT_EQ(r.marked_left_out, 8u);
  EXPECT_EQ(r.rounds, 12u);
  EXPECT_NE(r.detail.find("8 throttled or host-stalled repeat(s) left out (0 baseline, 8 current)"),
            std::string::npos)
      << r.detail;
}

TEST(AbReport, UndecidedAtTheBudgetSaysSo) {
  json c = case_at(0, noisy(1.06, 0.08, 12, 52));
  c["repeat_stop"] = {{"reason", "max-time"}, {"repeats", 12}, {"rounds", 6}};
  const auto cmp = compare_ab_report(ab_model({case_at(0, noisy(1.0, 0.08, 12, 51))}, {c}));
  EXPECT_NE(cmp.cases[0].detail.find("undecided at max-time (6 rounds)"), std::string::npos)
      << cmp.cases[0].detail;
}

TEST(AbReport, APlainReportIsNotOne) {
  const json m = make_model();
  EXPECT_FALSE(sb::results::is_ab_report(m));
  EXPECT_THROW((void)compare_ab_report(m), sb::UsageError);
  EXPECT_THROW((void)sb::results::ab_baseline_model(m), sb::UsageError);
}

}  // namespace
