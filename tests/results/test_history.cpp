// `scalebench history`: the store (round trip, duplicates, time order, machines kept apart),
// trends with change points, the formats (table, HTML in headless Chromium, OpenMetrics) and
// the command line, on synthetic reports.

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "history_h5.hpp"
#include "scalebench/error.hpp"
#include "scalebench/history.hpp"
#include "scalebench/report.hpp"
#include "scalebench/report_cli.hpp"
#include "synthetic_model.hpp"

namespace {

using nlohmann::json;
using sb::results::add_history_run;
using sb::results::history_run;
using sb::results::history_trends;
using sb::results::HistoryStore;
using sb::results::test::make_case;
using sb::results::test::make_model;
using sb::results::test::TempDir;

/// Run k of a series: two cpu cases, "slow" 30% slower from run `step_at` on.
json run_model(int k, int step_at, const std::string& cpu = "AMD EPYC 9654") {
  json m = make_model();
  m["attrs"]["start_utc"] = fmt::format("2026-11-{:02d}T10:00:00Z", 1 + k);
  m["attrs"]["git_sha"] = fmt::format("c{:02d}0000000000000", k);
  m["system"]["nodes"][0]["cpu_model"] = cpu;
  const double f = k >= step_at ? 1.3 : 1.0;
  const double wobble = 1.0 + 0.004 * (k % 3);
  std::vector<double> t{1.0, 1.01, 0.99, 1.02, 1.5};
  for (auto& x : t) x *= wobble;
  std::vector<double> slow;
  for (double x : t) slow.push_back(x * f);
  m["cases"] = json::array({make_case(0, "steady", "single-cpu", "cpu", 1, t, 1, 1, 0),
                            make_case(1, "slow", "multi-cpu", "cpu", 2, slow, 1, 1, 0)});
  json skipped = make_case(2, "gpu", "single-gpu", "gpu", 1, {}, 1, 1, 0, "skipped");
  m["cases"].push_back(skipped);
  return m;
}

HistoryStore store_of(int runs, int step_at) {
  HistoryStore s;
  for (int k = runs - 1; k >= 0; --k)  // added out of order: the store keeps time order
    EXPECT_TRUE(add_history_run(s, history_run(run_model(k, step_at), "r.h5")));
  return s;
}

const sb::results::Trend& trend(const std::vector<sb::results::Trend>& ts, const std::string& wl,
                                const std::string& machine = {}) {
  for (const auto& t : ts)
    if (t.workload == wl && (machine.empty() || t.machine == machine)) return t;
  throw std::runtime_error("no trend " + wl);
}

TEST(History, RunFromAReport) {
  const auto r = history_run(run_model(3, 99), "/some/where/run3.h5");
  EXPECT_EQ(r.commit, "c030000000000000");
  EXPECT_EQ(r.time_utc, "2026-11-04T10:00:00Z");
  EXPECT_EQ(r.host, "node0");
  EXPECT_EQ(r.report, "run3.h5");
  EXPECT_EQ(r.machine.size(), 12u);
  EXPECT_NE(r.machine_text.find("AMD EPYC 9654"), std::string::npos) << r.machine_text;
  ASSERT_EQ(r.cases.size(), 3u);
  EXPECT_EQ(r.cases[0].key, "steady/single-cpu/chunk=500,n=2000,seed=42");
  EXPECT_EQ(r.cases[0].totals.size(), 5u);
  // the fastest third of 5 repeats is 2 of them
  EXPECT_NEAR(r.cases[0].fast_s, (0.99 + 1.0) / 2 * 1.0, 1e-12);
  EXPECT_EQ(history_run(run_model(3, 99), "x.h5", "v1.2").commit, "v1.2");
}

// each-gpu and each-node records keep one trend per device; a case whose every repeat was
// throttled counts them all, as the run's median does.
TEST(History, DevicesAreCasesOfTheirOwnAndAllThrottledRepeatsCount) {
  nlohmann::json m = run_model(3, 99);
  m["cases"][1]["device_id"] = "node0:gpu1";
  for (auto& r : m["cases"][0]["repeats"]) r["throttled"] = true;
  const auto r = history_run(m, "x.h5");
  EXPECT_EQ(r.cases[1].key.substr(r.cases[1].key.size() - 11), "/node0:gpu1") << r.cases[1].key;
  EXPECT_EQ(r.cases[0].totals.size(), 5u);
}

TEST(History, InMemoryStoreKeepsTimeOrderAndRefusesDuplicates) {
  HistoryStore s = store_of(5, 99);
  EXPECT_FALSE(add_history_run(s, history_run(run_model(2, 99), "again.h5")));
  ASSERT_EQ(s.runs.size(), 5u);
  for (std::size_t i = 1; i < s.runs.size(); ++i)
    EXPECT_LT(s.runs[i - 1].time_utc, s.runs[i].time_utc);
  EXPECT_EQ(s.runs.front().id, 5);  // added last-first
}

// Stores of earlier versions (HDF5) are still read as they were written.
TEST(History, OldHdf5StoreRoundTrip) {
  TempDir dir("history-store");
  const HistoryStore s = store_of(5, 99);
  const std::string path = dir.file("h.h5");
  sb::results::write_history_h5(s, path);
  const HistoryStore back = sb::results::read_history(path, true);
  ASSERT_EQ(back.runs.size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(back.runs[i].id, s.runs[i].id);
    EXPECT_EQ(back.runs[i].commit, s.runs[i].commit);
    EXPECT_EQ(back.runs[i].machine_text, s.runs[i].machine_text);
    ASSERT_EQ(back.runs[i].cases.size(), 3u);
    EXPECT_EQ(back.runs[i].cases[1].totals, s.runs[i].cases[1].totals);
    EXPECT_EQ(back.runs[i].cases[1].repeats, 5u);
    EXPECT_EQ(back.runs[i].cases[2].status, "skipped");
  }
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp-" + std::to_string(::getpid())));

  EXPECT_THROW((void)sb::results::read_history(dir.file("none.h5")), sb::UsageError);
  sb::results::write_report(make_model(), dir.file("report.h5"));
  EXPECT_THROW((void)sb::results::read_history(dir.file("report.h5")), sb::UsageError);
  std::ofstream(dir.file("text.h5")) << "not hdf5";
  EXPECT_THROW((void)sb::results::read_history(dir.file("text.h5")), sb::UsageError);
}

TEST(History, TrendsNameTheRunWhereACaseStepped) {
  const HistoryStore s = store_of(8, 5);
  const auto ts = history_trends(s);
  const auto& slow = trend(ts, "slow");
  ASSERT_EQ(slow.points.size(), 8u);
  ASSERT_EQ(slow.steps.size(), 1u);
  EXPECT_EQ(slow.steps[0].index, 5u);
  EXPECT_NEAR(slow.steps[0].change, 0.3, 0.01);
  EXPECT_EQ(s.runs[slow.points[5].run].commit, "c050000000000000");
  EXPECT_TRUE(trend(ts, "steady").steps.empty());
  EXPECT_TRUE(trend(ts, "gpu").points.empty());  // skipped everywhere

  const std::string table = sb::results::format_history(s, ts, "table");
  EXPECT_NE(table.find("step +30.0%"), std::string::npos) << table;
  EXPECT_NE(table.find("at #6 (commit c05000000000, 2026-11-06T10:00:00Z)"), std::string::npos)
      << table;
  EXPECT_NE(table.find("never finished ok"), std::string::npos);
  EXPECT_NE(sb::results::format_history(s, ts, "markdown").find("| # | time |"), std::string::npos);
  EXPECT_THROW((void)sb::results::format_history(s, ts, "pdf"), sb::UsageError);

  const auto only = history_trends(s, "slow/*");
  ASSERT_EQ(only.size(), 1u);
  EXPECT_EQ(only[0].workload, "slow");
  EXPECT_TRUE(history_trends(s, "nothing*").empty());
}

TEST(History, DifferentHardwareIsKeptApart) {
  HistoryStore s;
  for (int k = 0; k < 6; ++k) {
    add_history_run(s, history_run(run_model(k, 99, "AMD EPYC 9654"), "a.h5"));
    // the other machine is 30% slower throughout: no step within either machine
    json m = run_model(k, 0, "Intel Xeon 8480");
    m["attrs"]["start_utc"] = fmt::format("2026-11-{:02d}T12:00:00Z", 1 + k);
    add_history_run(s, history_run(m, "b.h5"));
  }
  const auto ts = history_trends(s);
  ASSERT_EQ(ts.size(), 6u);  // 3 cases x 2 machines
  EXPECT_NE(ts[0].machine, ts[3].machine);
  for (const auto& t : ts) {
    EXPECT_TRUE(t.steps.empty()) << t.key << " on " << t.machine_text;
    if (!t.points.empty()) {
      EXPECT_EQ(t.points.size(), 6u);
    }
  }
  const std::string table = sb::results::format_history(s, ts, "table");
  EXPECT_NE(table.find("Intel Xeon 8480"), std::string::npos) << table;
  EXPECT_NE(table.find("(6 runs)"), std::string::npos) << table;
}

TEST(History, OpenMetrics) {
  const HistoryStore s = store_of(6, 3);
  const std::string om = sb::results::format_history(s, history_trends(s), "openmetrics");
  EXPECT_EQ(om.substr(om.size() - 6), "# EOF\n");
  EXPECT_NE(om.find("# TYPE scalebench_case_seconds gauge\n# UNIT scalebench_case_seconds "
                    "seconds\n"),
            std::string::npos);
  // 2026-11-04T10:00:00Z
  EXPECT_NE(om.find("scalebench_change_point_ratio{machine=\"" + s.runs[0].machine +
                    "\",case=\"slow/multi-cpu/chunk=500,n=2000,seed=42\",workload=\"slow\","
                    "path=\"multi-cpu\"} 0.3"),
            std::string::npos)
      << om;
  EXPECT_NE(om.find("} 1 1793786400\n"), std::string::npos) << om;  // run_info at run 4's time
  const std::regex sample(R"(^[a-z_]+\{[^}]*\} [-+0-9.e]+ [0-9]+$)");
  std::istringstream in(om);
  int samples = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    EXPECT_TRUE(std::regex_match(line, sample)) << line;
    ++samples;
  }
  EXPECT_EQ(samples, 6 * 2 * 2 + 1 + 6);  // fast + median per run and case, 1 step, 6 run infos

  // The reference parser, where Debian's python3-prometheus-client is installed.
  const std::string python = SB_PYTHON3;
  if (python.empty() ||
      std::system((python + " -c 'import prometheus_client' 2>/dev/null").c_str()) != 0)
    GTEST_SKIP() << "no prometheus_client to parse OpenMetrics";
  TempDir dir("history-om");
  std::ofstream(dir.file("m.txt")) << om;
  std::ofstream(dir.file("p.py"))
      << "import sys\n"
         "from prometheus_client.openmetrics.parser import text_string_to_metric_families\n"
         "fams = list(text_string_to_metric_families(open(sys.argv[1]).read()))\n"
         "names = sorted(f.name for f in fams)\n"
         "assert names == ['scalebench_case_median_seconds', 'scalebench_case_seconds', "
         "'scalebench_change_point_ratio', 'scalebench_run'], names\n"
         "assert sum(len(f.samples) for f in fams) == 31\n";
  EXPECT_EQ(std::system((python + " " + dir.file("p.py") + " " + dir.file("m.txt")).c_str()), 0);
}

TEST(History, HtmlIsSelfContained) {
  const HistoryStore s = store_of(8, 5);
  const std::string html = sb::results::format_history(s, history_trends(s), "html");
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http"), std::string::npos);
  EXPECT_NE(html.find("data-chart=\"history\" data-change-points=\"1\""), std::string::npos);
  EXPECT_NE(html.find("class=\"change-point\" data-point=\"6\""), std::string::npos);
}

TEST(History, ChartsNameEachRunByItsCommitAndDate) {
  const HistoryStore s = store_of(6, 3);
  const std::string h = sb::results::format_history(s, history_trends(s), "html");
  EXPECT_EQ(h.find(">#1<"), std::string::npos) << "runs numbered, not named";
  // 12-digit commits, the date below; the step names the commit it starts at
  EXPECT_NE(h.find(">c00000000000<tspan"), std::string::npos);
  EXPECT_NE(h.find(">11-01</tspan>"), std::string::npos);
  EXPECT_NE(h.find("at c03000000000 (11-04)"), std::string::npos);
}

TEST(History, HtmlRendersInChromium) {
  const char* browsers[] = {"/usr/bin/chromium", "/usr/bin/chromium-browser",
                            "/usr/bin/google-chrome"};
  std::string browser;
  for (const char* b : browsers)
    if (std::filesystem::exists(b)) browser = b;
  const std::string python = SB_PYTHON3;
  if (browser.empty() || python.empty()) GTEST_SKIP() << "needs chromium and python3";
  TempDir dir("history-html");
  // two machines, a step up in one case and a step down in another
  HistoryStore s = store_of(10, 6);
  for (int k = 0; k < 6; ++k) {
    json m = run_model(k, 99, "Intel Xeon 8480");
    if (k >= 3)
      for (auto& r : m["cases"][0]["repeats"]) r["total"] = r["total"].get<double>() * 0.8;
    add_history_run(s, history_run(m, "b.h5"));
  }
  const std::string page = dir.file("history.html");
  std::ofstream(page) << sb::results::format_history(s, history_trends(s), "html");
  const std::string cmd = python + " " + SB_SOURCE_DIR + "/tests/results/check_history_html.py " +
                          browser + " " + page + " " + dir.path.string() + " 2";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
}

int run_cli(std::vector<std::string> args) {
  CLI::App app{"scalebench"};
  app.require_subcommand(1);
  int exit_code = -1;
  sb::results::add_history_command(app, exit_code);
  args.insert(args.begin(), "scalebench");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  app.parse(static_cast<int>(argv.size()), argv.data());
  return exit_code;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(History, CommandLine) {
  TempDir dir("history-cli");
  std::vector<std::string> reports;
  for (int k = 0; k < 6; ++k) {
    reports.push_back(dir.file(fmt::format("r{}.h5", k)));
    sb::results::write_report(run_model(k, 3), reports.back());
  }
  const std::string store = dir.file("history.db");
  EXPECT_EQ(run_cli({"history", "add", store, reports[0], "--commit", "first"}), 0);
  EXPECT_EQ(run_cli({"history", "add", store, reports[1], reports[2], reports[3], reports[4],
                     reports[5]}),
            0);
  EXPECT_EQ(run_cli({"history", "add", store, reports[5]}), 0);  // already there: unchanged
  EXPECT_EQ(sb::results::read_history(store).runs.size(), 6u);
  EXPECT_EQ(sb::results::read_history(store).runs[0].commit, "first");

  const std::string shown = dir.file("show.txt");
  EXPECT_EQ(run_cli({"history", "show", store, "--case", "slow/*", "--out", shown}), 0);
  EXPECT_NE(slurp(shown).find("step +30.0%"), std::string::npos) << slurp(shown);
  EXPECT_EQ(slurp(shown).find("steady/"), std::string::npos);
  const std::string page = dir.file("h.html");
  EXPECT_EQ(run_cli({"history", "report", store, "--out", page}), 0);  // html by default
  EXPECT_NE(slurp(page).find("<svg class=\"chart\""), std::string::npos);
  const std::string om = dir.file("h.om");
  EXPECT_EQ(run_cli({"history", "report", store, "--format", "openmetrics", "--out", om}), 0);
  EXPECT_NE(slurp(om).find("# EOF"), std::string::npos);

  EXPECT_THROW(run_cli({"history", "add", store, reports[0], reports[1], "--commit", "x"}),
               sb::UsageError);
  EXPECT_THROW(run_cli({"history", "show", dir.file("none.h5")}), sb::UsageError);
  EXPECT_THROW(run_cli({"history", "show", store, "--format", "pdf"}), sb::UsageError);
  EXPECT_THROW(run_cli({"history", "add", store, dir.file("none.h5")}), sb::UsageError);
  EXPECT_THROW(run_cli({"history", "add", reports[0], reports[1]}), sb::UsageError);  // not a store
  EXPECT_THROW(run_cli({"history", "report", store, "--out", store}), sb::UsageError);
  const std::string json_out = dir.file("h.json");
  EXPECT_EQ(run_cli({"history", "show", store, "--format", "json", "--out", json_out}), 0);
  const json doc = json::parse(slurp(json_out));
  EXPECT_EQ(doc["runs"].size(), 6u);
  EXPECT_EQ(doc["runs"][0]["commit"], "first");
}

}  // namespace
