// What the launcher decides before a job starts: "did you mean" for a refused command line,
// help, man page and completions made from the option definitions, the forecast of each case
// on an allocation (what `run --list` prints), and submit's check of the run options after
// `--` against the allocation it asks for.

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <CLI/CLI.hpp>

#include "case_plan.hpp"
#include "cli_reference.hpp"
#include "cli_suggest.hpp"
#include "run_list.hpp"
#include "run_options.hpp"
#include "scalebench/case_forecast.hpp"
#include "scalebench/error.hpp"
#include "submit_check.hpp"

namespace {

/// A command line with `run` and `report` parsed by a fresh app; the error's one line.
std::string refusal(const std::vector<std::string>& args) {
  CLI::App app{"scalebench: test"};
  app.require_subcommand(1);
  auto o = std::make_shared<sb::RunOptions>();
  CLI::App* run = app.add_subcommand("run", "Run");
  sb::add_run_options(*run, *o);
  std::string file;
  app.add_subcommand("report", "Render")->add_option("files", file);
  app.add_subcommand("recover", "Recover");
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    return sb::explain_parse_error(app, e, "scalebench");
  }
  return "";
}

TEST(DidYouMean, NearestNames) {
  const std::vector<std::string> subs{"run", "submit", "report", "compare", "history", "recover"};
  EXPECT_EQ(sb::nearest_name("reprot", subs), "report");
  EXPECT_EQ(sb::nearest_name("sumbit", subs), "submit");
  EXPECT_EQ(sb::nearest_name("frobnicate", subs), "");
  const std::vector<std::string> opts{"--preset", "--paths", "--param", "--workloads"};
  EXPECT_EQ(sb::nearest_name("--presett", opts), "--preset");
  EXPECT_EQ(sb::nearest_name("--workload", opts), "--workloads");
  EXPECT_EQ(sb::nearest_name("--pres", opts), "--preset");
  EXPECT_EQ(sb::nearest_name("--zzz", opts), "");
}

TEST(DidYouMean, SubcommandsAndOptionsOfTheCommandLine) {
  EXPECT_EQ(refusal({"reprot", "x.h5"}),
            "unknown subcommand 'reprot' of scalebench; did you mean `scalebench report`? (see "
            "scalebench --help)");
  EXPECT_EQ(refusal({"run", "--presett", "small"}),
            "unknown option --presett (did you mean --preset?) for scalebench run (see "
            "scalebench run --help)");
  EXPECT_EQ(refusal({"run", "--presett=small"}),
            "unknown option --presett (did you mean --preset?) for scalebench run (see "
            "scalebench run --help)");
  EXPECT_EQ(refusal({"run", "--frobnicate"}),
            "unknown option --frobnicate for scalebench run (see scalebench run --help)");
}

CLI::App& full_app() {
  static CLI::App app{"scalebench: benchmark suite and launcher for HPC nodes and clusters"};
  static bool made = false;
  static int code = 0;
  if (!made) {
    made = true;
    app.formatter(std::make_shared<sb::HelpFormatter>());
    static sb::RunOptions o;
    CLI::App* run = app.add_subcommand("run", "Run the benchmark suite and write an HDF5 report");
    sb::add_run_options(*run, o);
    sb::add_completion_command(app, code, "scalebench 0.0.0 (test)");
  }
  return app;
}

TEST(CliReference, HelpFitsAHundredColumns) {
  CLI::App& app = full_app();
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    std::istringstream in(sub->help());
    for (std::string line; std::getline(in, line);)
      EXPECT_LE(line.size(), sb::kHelpColumns) << sub->get_name() << ": " << line;
  }
}

std::string shell_check(const std::string& shell, const std::string& text) {
  const std::filesystem::path f =
      std::filesystem::temp_directory_path() / ("sb-completion-" + std::to_string(::getpid()));
  std::ofstream(f) << text;
  const int rc = std::system((shell + " -n " + f.string() + " 2>&1").c_str());
  std::filesystem::remove(f);
  return rc == 0 ? "" : "syntax error";
}

TEST(CliReference, ManPageAndCompletionsComeFromTheDefinitions) {
  CLI::App& app = full_app();
  const std::string man = sb::man_page(app, "scalebench 0.0.0");
  EXPECT_NE(man.find(".TH SCALEBENCH 1"), std::string::npos);
  EXPECT_NE(man.find(".SS \"scalebench run [OPTIONS]\""), std::string::npos) << man;
  EXPECT_NE(man.find("\\fB\\-\\-preset\\fR \\fITEXT\\fR"), std::string::npos) << man;
  EXPECT_NE(man.find("\\fB\\-\\-list\\fR, \\fB\\-\\-dry\\-run\\fR"), std::string::npos) << man;
  const std::string bash = sb::bash_completion(app);
  EXPECT_NE(bash.find("--preset) values=\"tiny small seed large\""), std::string::npos) << bash;
  EXPECT_NE(bash.find("complete -F _scalebench scalebench"), std::string::npos);
  EXPECT_EQ(shell_check("bash", bash), "");
  const std::string zsh = sb::zsh_completion(app);
  EXPECT_EQ(zsh.rfind("#compdef scalebench", 0), 0u);
  if (std::system("command -v zsh >/dev/null 2>&1") == 0) {
    EXPECT_EQ(shell_check("zsh", zsh), "");
  }
}

sb::RunRequest request(const std::vector<std::string>& workloads, const std::string& paths) {
  sb::RunRequest r;
  r.preset = "tiny";
  r.workloads = workloads;
  r.paths = sb::parse_paths(paths);
  return r;
}

TEST(Forecast, SaysWhatTheRunWouldSkipAndWhy) {
  sb::MachineShape m;  // one node, one CPU worker of 2 threads, no GPU
  m.threads = 2;
  m.no_gpu_reason = "no GPU visible to the workers";
  const auto cases = sb::plan_cases(request({"subset-mean", "comms"}, "cpu1,cpuN,gpu1"));
  int run = 0, skip = 0;
  for (const auto& c : cases) {
    const sb::CaseForecast f = sb::forecast_case(c, m);
    if (f.outcome == sb::CaseForecast::Outcome::run) ++run;
    if (f.outcome == sb::CaseForecast::Outcome::skip) ++skip;
    if (c.workload == "comms") {
      EXPECT_EQ(f.outcome, sb::CaseForecast::Outcome::skip) << c.id;
      EXPECT_NE(f.reason.find("comms needs at least 2 workers and multi-cpu has 1 here"),
                std::string::npos)
          << f.reason;
    }
    if (c.path == sb::ExecPath::single_gpu) {
      EXPECT_EQ(f.reason, m.no_gpu_reason);
    }
    if (c.workload == "subset-mean" && c.path == sb::ExecPath::multi_cpu) {
      EXPECT_EQ(f.threads, 2);
      EXPECT_GT(f.host_bytes, 0.0);
    }
  }
  EXPECT_EQ(run, 2);
  EXPECT_EQ(skip, static_cast<int>(cases.size()) - 2);
  // Two nodes: comms runs.
  m.nodes = m.workers = 2;
  for (const auto& c : cases) {
    if (c.workload == "comms") {
      EXPECT_EQ(sb::forecast_case(c, m).outcome, sb::CaseForecast::Outcome::run) << c.id;
    }
  }
}

TEST(Forecast, ACaseTooLargeForTheMemoryWillFailWithTheRunsMessage) {
  sb::RunRequest r = request({"svd"}, "cpu1");
  r.params = {"svd.m=40000000", "svd.n=1000", "svd.chunk=2000"};
  const auto cases = sb::plan_cases(r);
  sb::MachineShape m;
  m.host_memory = 4e9;
  const sb::CaseForecast f = sb::forecast_case(cases.front(), m);
  EXPECT_EQ(f.outcome, sb::CaseForecast::Outcome::fail);
  EXPECT_NE(f.reason.find("svd: needs "), std::string::npos) << f.reason;
  EXPECT_NE(f.reason.find("of host memory per worker, this node has 3.73 GiB available"),
            std::string::npos)
      << f.reason;
}

TEST(RunList, EveryCaseWithWhatTheRunWouldDoAndTotals) {
  sb::ListContext ctx;
  ctx.machine.threads = 2;
  ctx.machine.no_gpu_reason = "no GPU visible to the workers";
  ctx.where = "1 node (local)";
  ctx.width = 80;
  const auto cases = sb::plan_cases(request({"subset-mean", "comms"}, "cpu1,cpuN,gpu1"));
  const std::string out = sb::format_list(cases, ctx);
  EXPECT_NE(out.find("parameters of subset-mean: "), std::string::npos) << out;
  EXPECT_NE(out.find("run   1w\u00d71t"), std::string::npos) << out;
  EXPECT_NE(out.find("skipped: comms needs at least 2 workers"), std::string::npos) << out;
  EXPECT_NE(out.find("skipped: no GPU visible to the workers"), std::string::npos) << out;
  EXPECT_NE(out.find(std::to_string(2) + " of " + std::to_string(cases.size()) + " case(s) run, " +
                     std::to_string(cases.size() - 2) + " skipped"),
            std::string::npos)
      << out;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    std::size_t cols = 0;
    for (const char ch : line) cols += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
    EXPECT_LE(cols, 80u) << line;
  }
}

sb::batch::SubmitRequest submit(const std::vector<std::string>& run_args) {
  sb::batch::SubmitRequest r;
  r.scheduler = "slurm";
  r.nodes = "2";
  r.run_args = run_args;
  return r;
}

std::string refused(const sb::batch::SubmitRequest& r) {
  try {
    (void)sb::check_submitted_run(r);
  } catch (const sb::UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(SubmitCheck, RefusesWhatRunWouldRefuseWithRunsMessage) {
  EXPECT_EQ(refused(submit({"--presett", "small"})),
            "run options after --: unknown option --presett (did you mean --preset?) for "
            "scalebench run (see scalebench run --help)");
  EXPECT_NE(refused(submit({"--workloads", "nope"})).find("nope"), std::string::npos);
  EXPECT_NE(refused(submit({"--preset", "huge"})).find("unknown preset 'huge'"), std::string::npos);
  EXPECT_NE(refused(submit({"--param", "subset-mean.n=lots"})).find("'lots' is not an integer"),
            std::string::npos);
  EXPECT_NE(refused(submit({"--repeats", "0"})).find("--repeats must be"), std::string::npos);
  EXPECT_NE(refused(submit({"--suite", "/nonexistent/suite.toml"})).find("suite.toml"),
            std::string::npos);
  EXPECT_NE(refused(submit({"--resume", "/nonexistent/r.h5"})).find("no such report"),
            std::string::npos);
  EXPECT_NE(refused(submit({"--out", "/nonexistent-dir/r.h5"})).find("r.h5"), std::string::npos);
  EXPECT_EQ(refused(submit({"--preset", "tiny"})), "");
}

TEST(SubmitCheck, ForecastsTheJobsCasesOnTheNodesItAsksFor) {
  auto r = submit({"--workloads", "comms", "--paths", "cpuN"});
  r.nodes = "1";
  EXPECT_NE(refused(r).find("no case would run in this job"), std::string::npos) << refused(r);
  r.nodes = "2";
  EXPECT_EQ(refused(r), "");
  auto s = submit({"--preset", "tiny", "--workloads", "subset-mean,comms", "--paths", "cpuN,gpu1"});
  s.nodes = "1";
  const auto notes = sb::check_submitted_run(s);
  std::string all;
  for (const auto& n : notes) all += n + "\n";
  EXPECT_NE(all.find("will be skipped in this job: comms needs at least 2 workers"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("will be skipped in this job: the job asks for no GPU"), std::string::npos)
      << all;
  // The memory the job asks for per node against the largest case.
  auto big = submit({"--workloads", "svd", "--paths", "cpu1", "--param", "svd.m=40000000",
                     "--param", "svd.n=1000", "--param", "svd.chunk=2000"});
  big.batch_options = {"--mem=4G"};
  EXPECT_NE(refused(big).find("would fail in the job: svd: needs "), std::string::npos)
      << refused(big);
  EXPECT_NE(refused(big).find("the job's nodes have 4.00 GiB available"), std::string::npos)
      << refused(big);
}

TEST(SubmitCheck, MemoryTheBatchOptionsAskFor) {
  const double gib = 1024.0 * 1024 * 1024;
  EXPECT_DOUBLE_EQ(sb::requested_memory_per_node("slurm", {"--mem=64G"}, 2), 64 * gib);
  EXPECT_DOUBLE_EQ(sb::requested_memory_per_node("slurm", {"--mem=4000"}, 2), 4000.0 * 1048576);
  EXPECT_DOUBLE_EQ(sb::requested_memory_per_node("slurm", {"--mem=0"}, 2), -1);
  EXPECT_DOUBLE_EQ(sb::requested_memory_per_node("pbs", {"-l select=2:ncpus=4:mem=8gb"}, 2),
                   8 * gib);
  EXPECT_DOUBLE_EQ(sb::requested_memory_per_node("pbs", {"-l mem=16gb"}, 2), 8 * gib);
  EXPECT_DOUBLE_EQ(sb::requested_memory_per_node("slurm", {"--constraint=a100"}, 2), -1);
}

}  // namespace
