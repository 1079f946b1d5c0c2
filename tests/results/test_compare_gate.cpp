// The gate's verdict policy on synthetic reports: missing and skipped cases (exit 4), the
// interference record (inconclusive, exit 5, --on-noisy), throttled repeats, /system guards
// (--strict), and the compare command line.

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <sstream>

#include "scalebench/compare.hpp"
#include "scalebench/error.hpp"
#include "scalebench/report.hpp"
#include "scalebench/report_cli.hpp"
#include "synthetic_model.hpp"

namespace {

using nlohmann::json;
using sb::results::compare_reports;
using sb::results::CompareOptions;
using sb::results::comparison_exit_code;
using sb::results::NoisyPolicy;
using sb::results::Verdict;
using sb::results::test::make_case;
using sb::results::test::make_model;
using sb::results::test::TempDir;

const std::vector<double> kBase{1.00, 1.01, 0.99, 1.02, 0.98, 1.00, 1.01, 0.995};

std::vector<double> scaled(const std::vector<double>& x, double f) {
  std::vector<double> out;
  for (double v : x) out.push_back(v * f);
  return out;
}

json model_of(std::vector<json> cases) {
  json m;
  m["attrs"] = {{"schema_version", 1}};
  m["cases"] = json::array();
  for (auto& c : cases) m["cases"].push_back(std::move(c));
  return m;
}

json case_(const std::string& wl, const std::vector<double>& t, const std::string& status = "ok",
           const std::string& path = "multi-cpu") {
  return make_case(0, wl, path, "cpu", 1, t, 100, 800, 0, status);
}

json skipped(const std::string& wl, const std::string& path = "single-gpu") {
  json c = case_(wl, {}, "skipped", path);
  c["message"] = "no GPU on this machine";
  return c;
}

const sb::results::CaseComparison& case_of(const sb::results::Comparison& c,
                                           const std::string& workload) {
  for (const auto& r : c.cases)
    if (r.workload == workload) return r;
  throw std::runtime_error("no case " + workload);
}

std::string table(const sb::results::Comparison& c) {
  return sb::results::format_comparison(c, "table");
}

// --- missing cases, nothing compared, skipped (issue: a gate that passes with cases gone) ---

TEST(CompareGate, NoCaseInCommonIsIncomplete) {
  std::vector<json> a, b;
  for (int i = 0; i < 4; ++i) a.push_back(case_("a" + std::to_string(i), kBase));
  for (int i = 0; i < 3; ++i) b.push_back(case_("b" + std::to_string(i), kBase));
  const auto c = compare_reports(model_of(a), model_of(b));
  EXPECT_EQ(c.count(Verdict::missing), 4u);
  EXPECT_EQ(c.count(Verdict::new_case), 3u);
  EXPECT_EQ(c.compared(), 0u);
  EXPECT_FALSE(c.regressed());
  EXPECT_TRUE(c.incomplete());
  EXPECT_EQ(comparison_exit_code(c), sb::kExitIncomplete);
  EXPECT_NE(table(c).find("INCOMPLETE (exit 4): 4 baseline case(s) missing"), std::string::npos)
      << table(c);

  CompareOptions allow;
  allow.allow_missing = true;
  EXPECT_EQ(comparison_exit_code(compare_reports(model_of(a), model_of(b), allow)), 0);
}

TEST(CompareGate, AKilledRunWithCasesMissingIsIncomplete) {
  std::vector<json> base, killed;
  for (int i = 0; i < 10; ++i) base.push_back(case_("w" + std::to_string(i), kBase));
  for (int i = 0; i < 4; ++i) killed.push_back(case_("w" + std::to_string(i), kBase));
  const auto c = compare_reports(model_of(base), model_of(killed));
  EXPECT_EQ(c.count(Verdict::missing), 6u);
  EXPECT_EQ(c.count(Verdict::same), 4u);
  EXPECT_EQ(comparison_exit_code(c), 4);
  // a regression still wins over incomplete: exit 1
  killed[0] = case_("w0", scaled(kBase, 1.5));
  EXPECT_EQ(comparison_exit_code(compare_reports(model_of(base), model_of(killed))), 1);
}

TEST(CompareGate, NothingComparedIsIncomplete) {
  // too few repeats everywhere: nothing was judged
  const auto c = compare_reports(model_of({case_("a", {1, 1, 1})}), model_of({case_("a", {1, 1})}));
  EXPECT_EQ(c.count(Verdict::too_few_repeats), 1u);
  EXPECT_EQ(comparison_exit_code(c), 4);
  EXPECT_NE(table(c).find("no case was compared"), std::string::npos);
  // two empty reports
  EXPECT_EQ(comparison_exit_code(compare_reports(model_of({}), model_of({}))), 4);
}

TEST(CompareGate, SkippedInBothIsSkippedNotMissing) {
  const json base = model_of({case_("cpu", kBase), skipped("gpu"), skipped("gone")});
  const json cur = model_of({case_("cpu", kBase), skipped("gpu"), skipped("fresh")});
  const auto c = compare_reports(base, cur);
  EXPECT_EQ(case_of(c, "gpu").verdict, Verdict::skipped);
  EXPECT_NE(case_of(c, "gpu").detail.find("skipped in both: no GPU on this machine"),
            std::string::npos);
  EXPECT_EQ(case_of(c, "gone").verdict, Verdict::skipped);   // skipped in baseline, absent now
  EXPECT_EQ(case_of(c, "fresh").verdict, Verdict::skipped);  // skipped now, absent before
  EXPECT_EQ(comparison_exit_code(c), 0);

  const std::string xml = sb::results::format_comparison(c, "junit");
  EXPECT_NE(xml.find("<skipped message=\"skipped: skipped in both: no GPU on this machine\"/>"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("failures=\"0\""), std::string::npos);
}

TEST(CompareGate, OkInBaselineSkippedInCurrentIsMissing) {
  const json base = model_of({case_("cpu", kBase), case_("gpu", kBase, "ok", "single-gpu")});
  const json cur = model_of({case_("cpu", kBase), skipped("gpu")});
  const auto c = compare_reports(base, cur);
  EXPECT_EQ(case_of(c, "gpu").verdict, Verdict::missing);
  EXPECT_EQ(comparison_exit_code(c), 4);
  const std::string xml = sb::results::format_comparison(c, "junit");
  EXPECT_NE(xml.find("type=\"missing\""), std::string::npos) << xml;  // a JUnit failure
}

// --- the interference record (written by the runtime; absent in older reports) ---

json busy(json c, double other, double mhz = 3000, double throttled_s = 0) {
  c["interference"] = {{"other_cpu_fraction", other},
                       {"cpu_mhz", {{"median", mhz}, {"min", mhz - 100}}},
                       {"cgroup_throttled_s", throttled_s}};
  return c;
}

TEST(CompareGate, BusyMachineExplainsASlowdown) {
  // Unchanged code, 35% slower while other processes took 40% of the cores.
  const json base = model_of({busy(case_("w", kBase), 0.0)});
  const json cur = model_of({busy(case_("w", scaled(kBase, 1.35)), 0.4)});
  const auto c = compare_reports(base, cur);
  const auto& r = case_of(c, "w");
  EXPECT_EQ(r.verdict, Verdict::inconclusive);
  EXPECT_NE(r.detail.find("the machine was busy (40% of the cores taken by other processes)"),
            std::string::npos)
      << r.detail;
  EXPECT_FALSE(c.regressed());
  EXPECT_EQ(comparison_exit_code(c), sb::kExitInconclusive);
  EXPECT_NE(table(c).find("INCONCLUSIVE (exit 5)"), std::string::npos);
  EXPECT_NE(table(c).find("inconclusive: the run that looks slower"), std::string::npos);

  CompareOptions o;
  o.on_noisy = NoisyPolicy::pass;
  EXPECT_EQ(comparison_exit_code(compare_reports(base, cur, o)), 0);
  o.on_noisy = NoisyPolicy::fail;
  EXPECT_EQ(comparison_exit_code(compare_reports(base, cur, o)), 1);
}

TEST(CompareGate, ASlowdownBeyondWhatTheLoadExplainsIsStillSlower) {
  // 10% of the cores taken explains at most 1/(1 - 0.2) - 1 = 25%; the case is 2x slower.
  const json base = model_of({busy(case_("w", kBase), 0.0)});
  const json cur = model_of({busy(case_("w", scaled(kBase, 2.0)), 0.1)});
  const auto& r = case_of(compare_reports(base, cur), "w");
  EXPECT_EQ(r.verdict, Verdict::slower);
  EXPECT_NE(r.detail.find("which explains only +25%"), std::string::npos) << r.detail;
}

TEST(CompareGate, EquallyBusyRunsAreJudgedOnTheirTimes) {
  const json base = model_of({busy(case_("w", kBase), 0.3)});
  const json cur = model_of({busy(case_("w", scaled(kBase, 1.3)), 0.32)});
  EXPECT_EQ(case_of(compare_reports(base, cur), "w").verdict, Verdict::slower);
}

TEST(CompareGate, ABusyBaselineMakesAFasterVerdictInconclusive) {
  const json base = model_of({busy(case_("w", scaled(kBase, 1.3)), 0.4)});
  const json cur = model_of({busy(case_("w", kBase), 0.0)});
  const auto& r = case_of(compare_reports(base, cur), "w");
  EXPECT_EQ(r.verdict, Verdict::inconclusive);
  EXPECT_NE(r.detail.find("in the baseline run"), std::string::npos) << r.detail;
}

TEST(CompareGate, ThrottlingAndALowerClockExplainASlowdown) {
  const json base = model_of({busy(case_("a", kBase), 0.0), busy(case_("b", kBase), 0.0)});
  // a: the cgroup quota held it back 3 s of its ~10.8 s of timed repeats (28%)
  // b: 2000 MHz instead of 3000 MHz explains +50%
  const json cur = model_of({busy(case_("a", scaled(kBase, 1.3)), 0.0, 3000, 3.0),
                             busy(case_("b", scaled(kBase, 1.4)), 0.0, 2000)});
  const auto c = compare_reports(base, cur);
  EXPECT_EQ(case_of(c, "a").verdict, Verdict::inconclusive);
  EXPECT_NE(case_of(c, "a").detail.find("cgroup CPU quota"), std::string::npos);
  EXPECT_EQ(case_of(c, "b").verdict, Verdict::inconclusive);
  EXPECT_NE(case_of(c, "b").detail.find("CPU clock 2000 MHz against 3000 MHz"), std::string::npos);
}

json probed(json c, double vector_probe_s) {
  c["interference"]["vector_probe_s"] = vector_probe_s;
  return c;
}

TEST(CompareGate, SlowerVectorUnitsExplainUpToTwiceTheTime) {
  // A 2-core CI virtual machine: every repeat 59% slower, others' share unchanged, the vector
  // probe 25% slower (its units shared on the host): inconclusive, not a regression.
  const json base = model_of({probed(busy(case_("w", kBase), 0.0), 9e-6),
                              probed(busy(case_("v", kBase), 0.0), 9e-6),
                              probed(busy(case_("u", kBase), 0.0), 9e-6)});
  const json cur = model_of({probed(busy(case_("w", scaled(kBase, 1.59)), 0.0), 11.25e-6),
                             probed(busy(case_("v", scaled(kBase, 2.5)), 0.0), 11.25e-6),
                             probed(busy(case_("u", scaled(kBase, 1.3)), 0.0), 9.5e-6)});
  const auto c = compare_reports(base, cur);
  const auto& w = case_of(c, "w");
  EXPECT_EQ(w.verdict, Verdict::inconclusive);
  EXPECT_NE(w.detail.find("vector code 25% slower (the vector probe, 11.2 us against 9.0 us)"),
            std::string::npos)
      << w.detail;
  EXPECT_NE(w.detail.find("explains up to +100%"), std::string::npos) << w.detail;
  // 2.5x is more than shared vector units explain.
  EXPECT_EQ(case_of(c, "v").verdict, Verdict::slower);
  EXPECT_NE(case_of(c, "v").detail.find("which explains only +100%"), std::string::npos);
  // A probe within 10% of the baseline's says nothing.
  EXPECT_EQ(case_of(c, "u").verdict, Verdict::slower);
  EXPECT_EQ(case_of(c, "u").detail.find("vector"), std::string::npos);
  EXPECT_NE(table(c).find("slower vector units"), std::string::npos);
}

TEST(CompareGate, ReportsWithoutTheRecordKeepTheirVerdicts) {
  const json base = model_of({case_("w", kBase)});
  const json cur = model_of({busy(case_("w", scaled(kBase, 1.3)), 0.5)});
  // only the current run has a record: compared against zero load, it explains the change
  EXPECT_EQ(case_of(compare_reports(base, cur), "w").verdict, Verdict::inconclusive);
  EXPECT_EQ(case_of(compare_reports(base, model_of({case_("w", scaled(kBase, 1.3))})), "w").verdict,
            Verdict::slower);
}

TEST(CompareGate, NoisyFollowsOnNoisy) {
  const json base = model_of({case_("w", {1, 2, 3, 4, 5})});
  const json cur = model_of({case_("w", {1.2, 2.2, 3.3, 4.1, 5.5})});
  CompareOptions o;
  EXPECT_EQ(case_of(compare_reports(base, cur, o), "w").verdict, Verdict::noisy);
  EXPECT_EQ(comparison_exit_code(compare_reports(base, cur, o)), 5);
  EXPECT_NE(table(compare_reports(base, cur, o)).find("noisy: the fastest third moved"),
            std::string::npos);
  o.on_noisy = NoisyPolicy::pass;
  EXPECT_EQ(comparison_exit_code(compare_reports(base, cur, o)), 0);
  o.on_noisy = NoisyPolicy::fail;
  EXPECT_EQ(comparison_exit_code(compare_reports(base, cur, o)), 1);
  EXPECT_THROW((void)sb::results::parse_noisy_policy("maybe"), sb::UsageError);
}

// --- repeats marked throttled ---

TEST(CompareGate, ThrottledRepeatsAreLeftOutAndSaidSo) {
  json cur = case_("w", {1.0, 1.01, 0.99, 1.02, 0.98, 1.0, 3.0, 3.1, 2.9});
  for (int i = 6; i < 9; ++i) cur["repeats"][i]["throttled"] = true;
  // the throttled repeats are the fast ones here, so leaving them in would change the verdict
  json odd = case_("v", {0.5, 0.5, 0.5, 1.3, 1.31, 1.29, 1.32, 1.3, 1.28});
  for (int i = 0; i < 3; ++i) odd["repeats"][i]["throttled"] = 1;
  const auto c =
      compare_reports(model_of({case_("w", kBase), case_("v", kBase)}), model_of({cur, odd}));
  EXPECT_EQ(case_of(c, "w").verdict, Verdict::same);
  EXPECT_EQ(case_of(c, "w").current_repeats, 6u);
  EXPECT_EQ(case_of(c, "w").marked_left_out, 3u);
  EXPECT_NE(case_of(c, "w").detail.find(
                "3 throttled or host-stalled repeat(s) left out (0 baseline, 3 current)"),
            std::string::npos)
      << case_of(c, "w").detail;
  EXPECT_EQ(case_of(c, "v").verdict, Verdict::slower);
}

TEST(CompareGate, EveryRepeatThrottledCountsThemAll) {
  json cur = case_("w", kBase);
  for (auto& r : cur["repeats"]) r["throttled"] = true;  // a GPU always at its power cap
  const auto c = compare_reports(model_of({case_("w", kBase)}), model_of({cur}));
  EXPECT_EQ(case_of(c, "w").verdict, Verdict::same);
  EXPECT_EQ(case_of(c, "w").current_repeats, kBase.size());
  EXPECT_EQ(case_of(c, "w").marked_left_out, 0u);
}

// each-gpu and each-node records: one per device, each compared with the same device.
TEST(CompareGate, DeviceRecordsAreComparedDeviceByDevice) {
  auto device = [](const std::string& id, const std::vector<double>& t) {
    json c = case_("w", t, "ok", "each-gpu");
    c["id"] = "w/each-gpu/n=1/" + id;
    c["device_id"] = id;
    return c;
  };
  std::vector<double> slow;
  for (double x : kBase) slow.push_back(2 * x);
  const auto c = compare_reports(model_of({device("n1:gpu0", kBase), device("n1:gpu1", kBase)}),
                                 model_of({device("n1:gpu0", kBase), device("n1:gpu1", slow)}));
  ASSERT_EQ(c.cases.size(), 2u);
  EXPECT_EQ(c.cases[0].verdict, Verdict::same) << c.cases[0].name;
  EXPECT_EQ(c.cases[1].verdict, Verdict::slower) << c.cases[1].name;
  EXPECT_NE(c.cases[1].name.find("n1:gpu1"), std::string::npos) << c.cases[1].name;
}

// --- /system guards ---

TEST(CompareGate, SystemDifferencesArePrintedAndStrictRefusesOtherHardware) {
  json base = make_model(), cur = make_model();
  cur["system"]["nodes"][0]["cpu_model"] = "Intel Xeon 8480";
  cur["system"]["versions"]["mpi"] = "Open MPI v5.0.3";
  cur["attrs"]["scalebench_version"] = "0.2.0";
  const auto c = compare_reports(base, cur);
  ASSERT_EQ(c.system.size(), 3u);
  EXPECT_TRUE(c.system[0].hardware);
  EXPECT_EQ(c.system[0].what, "CPU model");
  const std::string t = table(c);
  EXPECT_NE(t.find("hardware differs: CPU model: 'AMD EPYC 9654' (baseline) vs 'Intel Xeon 8480'"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("differs: mpi version: 'Open MPI v4.1.4' (baseline) vs 'Open MPI v5.0.3'"),
            std::string::npos);
  EXPECT_NE(t.find("differs: scalebench version: '0.1.0' (baseline) vs '0.2.0'"),
            std::string::npos);
  CompareOptions strict;
  strict.strict = true;
  try {
    (void)compare_reports(base, cur, strict);
    ADD_FAILURE() << "--strict accepted other hardware";
  } catch (const sb::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("different hardware: CPU model"), std::string::npos);
  }
  // software differences alone pass --strict
  cur["system"]["nodes"][0]["cpu_model"] = "AMD EPYC 9654";
  cur["system"]["gpus"][1]["driver"] = "590.1";
  const auto soft = compare_reports(base, cur, strict);
  EXPECT_EQ(soft.system.size(), 3u);
  for (const auto& d : soft.system) EXPECT_FALSE(d.hardware) << d.what;
  // GPU count is hardware
  cur["system"]["gpus"].erase(1);
  EXPECT_THROW((void)compare_reports(base, cur, strict), sb::UsageError);
}

// --- the command line ---

int run_cli(std::vector<std::string> args) {
  CLI::App app{"scalebench"};
  app.require_subcommand(1);
  int exit_code = -1;
  sb::results::add_compare_command(app, exit_code);
  args.insert(args.begin(), "scalebench");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  app.parse(static_cast<int>(argv.size()), argv.data());
  return exit_code;
}

TEST(CompareGate, CommandLineExitCodes) {
  TempDir dir("compare-gate-cli");
  const std::string b = dir.file("base.h5"), killed = dir.file("killed.h5"),
                    busy_h5 = dir.file("busy.h5");
  std::vector<json> all, few;
  for (int i = 0; i < 10; ++i) all.push_back(case_("w" + std::to_string(i), kBase));
  for (int i = 0; i < 4; ++i) few.push_back(case_("w" + std::to_string(i), kBase));
  sb::results::write_report(model_of(all), b);
  sb::results::write_report(model_of(few), killed);
  sb::results::write_report(model_of({busy(case_("w0", scaled(kBase, 1.3)), 0.4)}), busy_h5);

  EXPECT_EQ(run_cli({"compare", b, b}), 0);
  EXPECT_EQ(run_cli({"compare", b, killed}), 4);
  EXPECT_EQ(run_cli({"compare", b, killed, "--allow-missing"}), 0);
  EXPECT_EQ(run_cli({"compare", killed, b}), 0);  // new cases pass
  EXPECT_EQ(run_cli({"compare", killed, busy_h5, "--allow-missing"}), 5);
  EXPECT_EQ(run_cli({"compare", killed, busy_h5, "--allow-missing", "--on-noisy", "pass"}), 0);
  EXPECT_EQ(run_cli({"compare", killed, busy_h5, "--allow-missing", "--on-noisy", "fail"}), 1);
  EXPECT_THROW(run_cli({"compare", b, b, "--on-noisy", "ignore"}), sb::UsageError);

  // throttled flags survive the HDF5 report: three slow throttled repeats are left out
  json throttled = case_("w0", {1.0, 1.01, 0.99, 1.02, 0.98, 1.0, 3.0, 3.1, 2.9});
  for (int i = 6; i < 9; ++i) throttled["repeats"][i]["throttled"] = true;
  const std::string th = dir.file("throttled.h5"), out = dir.file("out.txt");
  sb::results::write_report(model_of({throttled}), th);
  EXPECT_EQ(run_cli({"compare", killed, th, "--allow-missing", "--out", out}), 0);
  std::ifstream in(out);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("3 throttled or host-stalled repeat(s) left out"), std::string::npos) << text;
  EXPECT_EQ(run_cli({"compare", b, b, "--strict"}), 0);
}

}  // namespace
