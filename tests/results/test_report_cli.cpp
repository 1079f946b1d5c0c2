// `scalebench report` and `scalebench compare` through CLI11, as launcher/main.cpp wires them.

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdlib>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "scalebench/compare.hpp"
#include "scalebench/error.hpp"
#include "scalebench/report.hpp"
#include "scalebench/report_cli.hpp"
#include "synthetic_model.hpp"

namespace {

using nlohmann::json;
using sb::results::test::make_case;
using sb::results::test::make_model;
using sb::results::test::TempDir;

/// Parses `args` with a fresh app holding both subcommands; returns the exit code they set.
int run_cli(std::vector<std::string> args) {
  CLI::App app{"scalebench"};
  app.require_subcommand(1);
  int exit_code = -1;
  sb::results::add_report_command(app, exit_code);
  sb::results::add_compare_command(app, exit_code);
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

TEST(ReportCli, ReportWritesTheChosenFormat) {
  TempDir dir("cli-report");
  const std::string h5 = dir.file("r.h5");
  const json m = make_model();
  sb::results::write_report(m, h5);
  for (const auto& f : sb::results::report_formats()) {
    const std::string out = dir.file("out." + f);
    EXPECT_EQ(run_cli({"report", h5, "--format", f, "--out", out}), 0) << f;
    EXPECT_EQ(slurp(out), sb::results::format_reports({{h5, sb::results::read_report(h5)}}, f))
        << f;
  }
}

TEST(ReportCli, OutIntoAPipeOrThroughASymlinkKeepsThem) {
  TempDir dir("cli-report-special");
  const std::string h5 = dir.file("r.h5");
  sb::results::write_report(make_model(), h5);
  const std::string csv = sb::results::format_report(sb::results::read_report(h5), "csv");

  const std::string fifo = dir.file("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] { got = slurp(fifo); });
  EXPECT_EQ(run_cli({"report", h5, "--format", "csv", "--out", fifo}), 0);
  reader.join();
  EXPECT_EQ(got, csv);
  EXPECT_TRUE(std::filesystem::is_fifo(fifo));  // written in place, never replaced

  const std::string real = dir.file("real.csv"), link = dir.file("link.csv");
  std::ofstream(real) << "old";
  std::filesystem::create_symlink(real, link);
  EXPECT_EQ(run_cli({"report", h5, "--format", "csv", "--out", link}), 0);
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  EXPECT_EQ(slurp(real), csv);
}

TEST(ReportCli, ReportErrorsAreUsageErrors) {
  TempDir dir("cli-report-errors");
  EXPECT_THROW(run_cli({"report", dir.file("missing.h5")}), sb::UsageError);
  const std::string h5 = dir.file("r.h5");
  sb::results::write_report(make_model(), h5);
  EXPECT_THROW(run_cli({"report", h5, "--format", "pdf"}), sb::UsageError);
  EXPECT_THROW(run_cli({"report", h5, "--out", dir.file("no/such/folder/x.txt")}), sb::UsageError);
}

TEST(ReportCli, SeveralReportsOneAfterAnother) {
  TempDir dir("cli-reports");
  const std::string a = dir.file("a.h5"), b = dir.file("b.h5");
  json mb = make_model();
  mb["attrs"]["preset"] = "small";
  sb::results::write_report(make_model(), a);
  sb::results::write_report(mb, b);
  const std::vector<sb::results::NamedReport> both{{a, sb::results::read_report(a)},
                                                   {b, sb::results::read_report(b)}};
  for (const char* f : {"table", "markdown", "csv", "json"}) {
    const std::string out = dir.file(std::string("both.") + f);
    EXPECT_EQ(run_cli({"report", a, b, "--format", f, "--out", out}), 0) << f;
    EXPECT_EQ(slurp(out), sb::results::format_reports(both, f)) << f;
  }
  // table: a heading naming each file, then that report
  const std::string t = slurp(dir.file("both.table"));
  const auto ha = t.find("==> " + a + " <==\nrun ok:"), hb = t.find("\n==> " + b + " <==\nrun ok:");
  ASSERT_NE(ha, std::string::npos) << t;
  ASSERT_NE(hb, std::string::npos) << t;
  EXPECT_NE(t.find("preset small", hb), std::string::npos);
  EXPECT_EQ(t.find("preset small"), t.find("preset small", hb));
  const std::string md = slurp(dir.file("both.markdown"));
  EXPECT_EQ(md.rfind("# " + a + "\n\n## scalebench report", 0), 0u) << md;
  EXPECT_NE(md.find("\n# " + b + "\n\n## scalebench report"), std::string::npos);
  // csv: one header, a leading report column
  std::istringstream csv(slurp(dir.file("both.csv")));
  std::vector<std::string> rows;
  for (std::string l; std::getline(csv, l);) rows.push_back(l);
  ASSERT_EQ(rows.size(), 13u);
  EXPECT_EQ(rows[0].rfind("report,case,workload,", 0), 0u);
  EXPECT_EQ(rows[1].rfind(a + ",\"subset-mean/single-cpu/", 0), 0u) << rows[1];
  EXPECT_EQ(rows[12].rfind(b + ",", 0), 0u) << rows[12];
  // json: an array, each model with its file and summary
  const json j = json::parse(slurp(dir.file("both.json")));
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[1]["report"], b);
  EXPECT_EQ(j[1]["attrs"]["preset"], "small");
  EXPECT_EQ(j[0]["summary"].size(), 6u);
  // one file renders as before
  json named = both[0].model;
  named["file"] = a;  // the file the commands that finish it name
  EXPECT_EQ(sb::results::format_reports({both[0]}, "table"),
            sb::results::format_report(named, "table"));
  EXPECT_NE(sb::results::format_reports({both[0]}, "table").find("--resume " + a),
            std::string::npos);
}

TEST(ReportCli, HtmlAndGbenchJsonRefuseSeveralFilesBeforeReadingThem) {
  TempDir dir("cli-reports-refused");
  for (const char* f : {"html", "gbench-json"}) {
    try {
      run_cli({"report", dir.file("missing1.h5"), dir.file("missing2.h5"), "--format", f});
      ADD_FAILURE() << f << ": no error";
    } catch (const sb::UsageError& e) {
      EXPECT_NE(
          std::string(e.what()).find(std::string("--format ") + f + " renders one report, not 2"),
          std::string::npos)
          << e.what();
    }
  }
}

TEST(ReportCli, WideAndFilesKeepTheFullTable) {
  TempDir dir("cli-report-wide");
  const std::string h5 = dir.file("r.h5");
  sb::results::write_report(make_model(), h5);
  const std::string full =
      sb::results::format_reports({{h5, sb::results::read_report(h5)}}, "table");
  ::setenv("COLUMNS", "80", 1);  // --out is a file, not the terminal: the full table
  EXPECT_EQ(run_cli({"report", h5, "--out", dir.file("t.txt")}), 0);
  EXPECT_EQ(slurp(dir.file("t.txt")), full);
  EXPECT_EQ(run_cli({"report", h5, "--wide", "--out", dir.file("w.txt")}), 0);
  EXPECT_EQ(slurp(dir.file("w.txt")), full);
  ::unsetenv("COLUMNS");
}

TEST(ReportCli, CompareExitCodeAndJunit) {
  TempDir dir("cli-compare");
  const std::vector<double> t{1.0, 1.01, 0.99, 1.02, 0.98, 1.0};
  std::vector<double> slow;
  for (double x : t) slow.push_back(1.3 * x);
  json base, cur;
  base["cases"] = json::array({make_case(0, "w", "single-cpu", "cpu", 1, t, 1, 1, 0)});
  cur["cases"] = json::array({make_case(0, "w", "single-cpu", "cpu", 1, slow, 1, 1, 0)});
  const std::string b = dir.file("base.h5"), c = dir.file("cur.h5");
  sb::results::write_report(base, b);
  sb::results::write_report(cur, c);

  EXPECT_EQ(run_cli({"compare", b, b}), 0);
  const std::string out = dir.file("junit.xml");
  EXPECT_EQ(run_cli({"compare", b, c, "--format", "junit", "--out", out}), 1);
  EXPECT_NE(slurp(out).find("<failure"), std::string::npos);
  // a 30% slowdown passes a 50% threshold
  EXPECT_EQ(run_cli({"compare", b, c, "--threshold", "50%"}), 0);
  EXPECT_THROW(run_cli({"compare", b, c, "--threshold", "abc"}), sb::UsageError);
  EXPECT_THROW(run_cli({"compare", b, c, "--alpha", "2"}), sb::UsageError);
  EXPECT_THROW(run_cli({"compare", b, c, "--format", "html"}), sb::UsageError);
  EXPECT_THROW(run_cli({"compare", b, dir.file("none.h5")}), sb::UsageError);
}

}  // namespace
