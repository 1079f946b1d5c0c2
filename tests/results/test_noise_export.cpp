// What a reader needs beyond the medians: each case's noise and the interference it ran under
// (and hints that blame it, not the problem size), the tidy export, the plan of a killed run
// with the commands that finish it, and compare's JSON and narrow tables.

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "scalebench/compare.hpp"
#include "scalebench/error.hpp"
#include "scalebench/report.hpp"
#include "synthetic_model.hpp"

namespace {

using nlohmann::json;
using sb::results::format_report;
using sb::results::summarize;
using sb::results::test::make_case;
using sb::results::test::make_model;

const std::vector<double> kQuiet{4.9e-3, 5.0e-3, 4.8e-3, 5.1e-3, 4.9e-3, 5.0e-3, 4.95e-3};

json two_paths(double other_cpu_fraction) {
  json m;
  m["attrs"] = {{"status", "ok"}, {"preset", "tiny"}, {"host", "node0"}, {"git_sha", "abc123"}};
  m["cases"] = json::array();
  m["cases"].push_back(make_case(0, "w", "single-cpu", "cpu", 1, kQuiet, 1e6, 8e6, 0));
  std::vector<double> slow;
  for (double t : kQuiet) slow.push_back(t * 17.0);
  json busy = make_case(1, "w", "multi-cpu", "cpu", 1, slow, 1e6, 8e6, 0);
  busy["interference"] = {{"other_cpu_fraction", other_cpu_fraction}};
  m["cases"].push_back(busy);
  return m;
}

TEST(Noise, SpreadIsTheMediansIntervalOnEveryRow) {
  const json s = summarize(two_paths(0.0));
  ASSERT_EQ(s.size(), 2u);
  const double spread = s[0]["spread"].get<double>();
  EXPECT_GT(spread, 0.0);
  EXPECT_LT(spread, 0.05);
  EXPECT_EQ(s[0]["interference"], "");
  const std::string table = format_report(two_paths(0.0), "table");
  EXPECT_NE(table.find("noise"), std::string::npos) << table;
  EXPECT_NE(table.find("\u00b1"), std::string::npos) << table;
  EXPECT_NE(table.find("noise: the median's 95% interval"), std::string::npos) << table;
}

TEST(Noise, ABusyMachineIsFlaggedWithItsCauseAndNeverBlamesTheProblemSize) {
  const json m = two_paths(0.72);
  const json s = summarize(m);
  EXPECT_NE(s[1]["interference"].get<std::string>().find("72% of the cores taken by other"),
            std::string::npos)
      << s[1];
  EXPECT_GT(s[1]["interference_explains"].get<double>(), 1.0);
  const std::string notes = s[1]["notes"];
  EXPECT_NE(notes.find("measured on a busy machine (72% of the cores"), std::string::npos) << notes;
  EXPECT_NE(notes.find("explains up to +"), std::string::npos) << notes;
  EXPECT_EQ(notes.find("too small"), std::string::npos) << notes;
  EXPECT_EQ(notes.find("--preset"), std::string::npos) << notes;
  // A quiet machine: the same slow-down is the problem size's.
  const std::string quiet = summarize(two_paths(0.0))[1]["notes"];
  EXPECT_NE(quiet.find("too small"), std::string::npos) << quiet;
  for (const char* format : {"table", "markdown", "html"}) {
    const std::string out = format_report(m, format);
    EXPECT_NE(out.find("busy"), std::string::npos) << format;
    EXPECT_NE(out.find("72% of the cores taken by other processes"), std::string::npos) << format;
  }
}

TEST(Noise, AutoRepeatsThatMissedTheirTargetSaySoInTheReport) {
  json m = two_paths(0.0);
  m["cases"][0]["repeat_stop"] = {{"reason", "max-repeats"}, {"repeats", 7},
                                  {"spread", 0.329},         {"target_spread", 0.01},
                                  {"min_repeats", 5},        {"max_repeats", 7}};
  const std::string notes = summarize(m)[0]["notes"];
  EXPECT_NE(notes.find("median not known to the target (\u00b132.9% after 7 repeats, \u00b11.0% "
                       "asked)"),
            std::string::npos)
      << notes;
  EXPECT_NE(format_report(m, "table").find("\u00b132.9% after 7 repeats"), std::string::npos);
}

TEST(TidyExport, OneRowPerCaseWithParametersHostCommitAndTimes) {
  json m = make_model();
  m["attrs"]["host"] = "node0";
  const std::string csv = format_report(m, "csv");
  std::istringstream in(csv);
  std::string header;
  std::getline(in, header);
  for (const char* col : {"case", "workload", "path", "status", "median_s", "spread", "param_n",
                          "param_chunk", "param_seed", "run_host", "git_sha", "run_start_utc",
                          "started_utc", "threads_per_worker", "workers"})
    EXPECT_NE(("," + header + ",").find(std::string(",") + col + ","), std::string::npos)
        << col << " in " << header;
  int rows = 0;
  for (std::string line; std::getline(in, line);) ++rows;
  EXPECT_EQ(rows, static_cast<int>(m["cases"].size()));
  // The same rows as JSON records, numbers as numbers.
  const json records = json::parse(format_report(m, "records"));
  ASSERT_EQ(records.size(), m["cases"].size());
  EXPECT_EQ(records[0]["param_n"], 2000);
  EXPECT_EQ(records[0]["git_sha"], "0123456789ab");
  EXPECT_EQ(records[0]["run_host"], "node0");
  EXPECT_TRUE(records[5]["median_s"].is_null());  // the skipped case
}

TEST(TidyExport, PerRepeatRowsAndRefusalsElsewhere) {
  const json m = make_model();
  std::size_t repeats = 0;
  for (const auto& c : m["cases"]) repeats += c["repeats"].size();
  const json records = json::parse(format_report(m, "records", 0, true));
  ASSERT_EQ(records.size(), repeats);
  EXPECT_EQ(records[0]["repeat"], 0);
  EXPECT_GT(records[0]["total_s"].get<double>(), 0.0);
  EXPECT_TRUE(records[0]["in_median"].get<bool>());
  std::istringstream in(format_report(m, "csv", 0, true));
  int lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  EXPECT_EQ(lines, static_cast<int>(repeats) + 1);
  EXPECT_THROW((void)format_report(m, "table", 0, true), sb::UsageError);
}

TEST(Plan, AKilledRunListsTheCasesItNeverRanAndWhatToRunNext) {
  json m = two_paths(0.0);
  m["attrs"]["status"] = "running";
  m["attrs"]["command_line"] = "/opt/sb/scalebench run --preset tiny --out r.h5";
  m["cases"].erase(1);
  m["plan"] = json::array();
  for (const char* path : {"single-cpu", "multi-cpu", "single-gpu"})
    m["plan"].push_back({{"index", m["plan"].size()},
                         {"id", std::string("w/") + path + "/chunk=500,n=2000,seed=42"},
                         {"workload", "w"},
                         {"path", path},
                         {"preset", "tiny"}});
  const auto never = sb::results::never_run_cases(m);
  ASSERT_EQ(never.size(), 2u);
  EXPECT_EQ(never[0], "w/multi-cpu/chunk=500,n=2000,seed=42");
  const auto next = sb::results::next_commands(m, "out/r.h5");
  ASSERT_EQ(next.size(), 2u);
  EXPECT_EQ(next[0], "/opt/sb/scalebench recover out/r.h5");
  EXPECT_EQ(next[1], "/opt/sb/scalebench run --preset tiny --resume out/r.h5");
  m["file"] = "out/r.h5";
  const std::string table = format_report(m, "table");
  EXPECT_NE(table.find("1 ok, 0 failed, 0 skipped (1 case); 2 of 3 planned never ran"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("2 of 3 planned case(s) never ran (the run was killed, or is still "
                       "running): w/multi-cpu/"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("next:\n  /opt/sb/scalebench recover out/r.h5\n  /opt/sb/scalebench run "
                       "--preset tiny --resume out/r.h5\n"),
            std::string::npos)
      << table;
  // A complete report has nothing to do next.
  m["cases"].push_back(make_case(1, "w", "multi-cpu", "cpu", 1, kQuiet, 1e6, 8e6, 0));
  m["cases"].push_back(make_case(2, "w", "single-gpu", "gpu", 1, kQuiet, 1e6, 8e6, 0));
  m["attrs"]["status"] = "ok";
  EXPECT_TRUE(sb::results::never_run_cases(m).empty());
  EXPECT_TRUE(sb::results::next_commands(m, "out/r.h5").empty());
}

json queries_model(const std::vector<double>& t) {
  json m;
  m["attrs"] = {{"schema_version", 1}};
  m["cases"] = json::array();
  for (const char* q : {"by-key", "by-name"}) {
    json c = make_case(0, "groupby", "multi-cpu", "cpu", 1, t, 100, 800, 0);
    c["params"] = {
        {"days", "3"}, {"partition", "100000"}, {"query", q}, {"rows", "4000000"}, {"seed", "42"}};
    c["id"] = std::string("groupby/multi-cpu/days=3,partition=100000,query=") + q +
              ",rows=4000000,seed=42";
    m["cases"].push_back(c);
  }
  return m;
}

TEST(CompareOutput, NarrowTablesKeepWhatTellsCasesApart) {
  const std::vector<double> t{1.0, 1.01, 0.99, 1.0, 1.02, 0.98};
  const auto c = sb::results::compare_reports(queries_model(t), queries_model(t));
  for (std::size_t width : {80u, 120u}) {
    const std::string table = sb::results::format_comparison(c, "table", width);
    EXPECT_NE(table.find("parameters of groupby: days=3,partition=100000,rows=4000000,seed=42"),
              std::string::npos)
        << table;
    EXPECT_NE(table.find("groupby/multi-cpu query=by-key"), std::string::npos) << table;
    EXPECT_NE(table.find("groupby/multi-cpu query=by-name"), std::string::npos) << table;
    std::istringstream in(table);
    for (std::string line; std::getline(in, line);) {
      std::size_t cols = 0;  // code points: ids cut with "…"
      for (const char ch : line) cols += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
      EXPECT_LE(cols, width) << line;
    }
  }
}

TEST(CompareOutput, JsonHasTheVerdictsAndTheOutcome) {
  const std::vector<double> t{1.0, 1.01, 0.99, 1.0, 1.02, 0.98};
  std::vector<double> slow;
  for (double x : t) slow.push_back(x * 1.3);
  const auto c = sb::results::compare_reports(queries_model(t), queries_model(slow));
  const json j = json::parse(sb::results::format_comparison(c, "json"));
  EXPECT_EQ(j["schema"], "scalebench-compare/1");
  EXPECT_EQ(j["outcome"], "regression");
  EXPECT_EQ(j["exit_code"], 1);
  EXPECT_EQ(j["counts"]["slower"], 2);
  ASSERT_EQ(j["cases"].size(), 2u);
  EXPECT_EQ(j["cases"][0]["verdict"], "slower");
  EXPECT_EQ(j["cases"][0]["params"]["query"], "by-key");
  EXPECT_NEAR(j["cases"][0]["change"].get<double>(), 0.3, 0.01);
  EXPECT_TRUE(j["cases"][0]["regression"].get<bool>());
  EXPECT_GT(j["cases"][0]["mde"].get<double>(), 0.0);
  // Two reports: no rounds, no paired evidence (an A/B report's).
  EXPECT_EQ(j["cases"][0]["rounds"], 0);
  EXPECT_TRUE(j["cases"][0]["paired_change"].is_null());
  EXPECT_TRUE(j["cases"][0]["paired_low"].is_null());
  EXPECT_EQ(j["options"]["on_noisy"], "warn");
}

TEST(TableWidth, AnEmptyColumnNeverComesBackInPlaceOfAFullOne) {
  json m = make_model();
  // No GPU case: `vs 1gpu` is "-" on every row.
  json cpu = json::array();
  for (const auto& c : m["cases"])
    if (c["device"] == "cpu") cpu.push_back(c);
  m["cases"] = cpu;
  for (std::size_t width : {100u, 110u, 120u}) {
    const std::string t = format_report(m, "table", width);
    const auto header = t.find("case ");
    ASSERT_NE(header, std::string::npos);
    const std::string line = t.substr(header, t.find('\n', header) - header);
    if (line.find(" min ") == std::string::npos || line.find("stddev") == std::string::npos)
      EXPECT_EQ(line.find("vs 1gpu"), std::string::npos) << width << ": " << line;
  }
}

}  // namespace
