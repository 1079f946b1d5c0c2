// `scalebench report` and `scalebench compare` through CLI11, as launcher/main.cpp wires them.

#include <gtest/gtest.h>

#include <sys/stat.h>

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
    EXPECT_EQ(slurp(out), sb::results::format_report(sb::results::read_report(h5), f)) << f;
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
