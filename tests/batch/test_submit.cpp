/// @file test_submit.cpp
/// `scalebench submit`: validation (no value can inject shell), the rendered sbatch and PBS
/// scripts line by line (from the templates in the source tree), running a rendered script with
/// bash against a fake scalebench (arguments arrive intact, signals are forwarded), and the
/// submit command with fake sbatch/qsub programs.

#include "batch/submit.hpp"

#include <scalebench/error.hpp>

#include <gtest/gtest.h>
#include <CLI/CLI.hpp>

#include <sys/wait.h>

#include <unistd.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "../support/scratch_dir.hpp"

namespace sb::batch {

namespace {

using sb::test_support::slurp;
using sb::test_support::TempDir;

namespace fs = std::filesystem;

std::string source_template(const char* name) {
  return slurp(fs::path(SB_SOURCE_DIR) / "slurm" / name);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

/// A private temporary folder, removed at scope end.
bool bash_syntax_ok(const std::string& script) {
  TempDir d;
  std::ofstream(d.path / "s.sh") << script;
  return std::system(("bash -n " + (d.path / "s.sh").string()).c_str()) == 0;
}

void write_exe(const fs::path& p, const std::string& text) {
  std::ofstream(p) << text;
  fs::permissions(p, fs::perms::owner_all);
}

SubmitRequest slurm_request() {
  SubmitRequest r;
  r.scheduler = "slurm";
  r.nodes = "16";
  r.gpus_per_node = "4";
  r.time = "02:00:00";
  r.partition = "gpu";
  r.account = "proj.42";
  r.qos = "normal";
  r.after = "1234";
  r.output = "logs/sb-%j.out";
  r.scalebench = "/opt/scalebench/bin/scalebench";
  r.run_args = {"--preset", "large", "--out", "run 1.h5"};
  return r;
}

// ---------------------------------------------------------------- validation

TEST(Submit, ShellQuote) {
  EXPECT_EQ(shell_quote("abc"), "'abc'");
  EXPECT_EQ(shell_quote(""), "''");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
}

TEST(Submit, RefusesInjection) {
  const auto refused = [](auto mutate) {
    SubmitRequest r = slurm_request();
    mutate(r);
    try {
      validate_request(r);
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);  // one line
      EXPECT_EQ(e.exit_code(), kExitUsage);
      return true;
    }
    return false;
  };
  EXPECT_TRUE(refused([](SubmitRequest& r) { r.partition = "gpu; rm -rf ~"; }));
  EXPECT_TRUE(refused([](SubmitRequest& r) { r.account = "$(id)"; }));
  EXPECT_TRUE(refused([](SubmitRequest& r) { r.qos = "a b"; }));
  EXPECT_TRUE(refused([](SubmitRequest& r) { r.qos = "x\n#SBATCH --uid=0"; }));
  EXPECT_TRUE(refused([](SubmitRequest& r) { r.time = "1:00"; }));
  EXPECT_TRUE(refused([](SubmitRequest& r) { r.time = "01:60:00"; }));
  EXPECT_TRUE(refused([](SubmitRequest& r) { r.time = "00:00:30"; }));
  EXPECT_TRUE(refused([](SubmitRequest& r) { r.time = "01:00:00; reboot"; }));
  EXPECT_TRUE(refused([](SubmitRequest& r) { r.nodes = "0"; }));
  EXPECT_TRUE(refused([](SubmitRequest& r) { r.nodes = "-3"; }));
  EXPECT_TRUE(refused([](SubmitRequest& r) { r.nodes = "2x"; }));
  EXPECT_TRUE(refused([](SubmitRequest& r) { r.gpus_per_node = "65"; }));
  EXPECT_TRUE(refused([](SubmitRequest& r) { r.cpus_per_node = "1e3"; }));
  EXPECT_TRUE(refused([](SubmitRequest& r) { r.after = "12;34"; }));
  EXPECT_TRUE(refused([](SubmitRequest& r) { r.after = "123.server"; }));  // SLURM: digits
  EXPECT_TRUE(refused([](SubmitRequest& r) { r.output = "a b.out"; }));
  EXPECT_TRUE(refused([](SubmitRequest& r) { r.output = "$HOME/x"; }));
  EXPECT_TRUE(refused([](SubmitRequest& r) { r.scheduler = "lsf"; }));
  EXPECT_TRUE(refused([](SubmitRequest& r) { r.run_args = {"--out", "a\nb"}; }));
  EXPECT_TRUE(refused([](SubmitRequest& r) { r.run_args = {"--out;ls", "x"}; }));
  EXPECT_TRUE(refused([](SubmitRequest& r) { r.run_args = {"tiny"}; }));
  // Accepted forms.
  EXPECT_FALSE(refused([](SubmitRequest& r) { r.time = "1-12:00:00"; }));
  EXPECT_FALSE(refused([](SubmitRequest& r) { r.after = "1234_7"; }));
  EXPECT_FALSE(refused([](SubmitRequest& r) { r.run_args = {"--param", "svd.n=1000; $(x)"}; }));
  EXPECT_FALSE(refused([](SubmitRequest& r) { r.run_args = {"--out=a'b.h5"}; }));
  EXPECT_FALSE(refused([](SubmitRequest& r) { r.run_args = {}; }));
}

TEST(Submit, PbsSpecificRules) {
  SubmitRequest r;
  r.scheduler = "pbs";
  EXPECT_THROW(validate_request(r), UsageError);  // needs --cpus-per-node
  r.cpus_per_node = "32";
  EXPECT_NO_THROW(validate_request(r));
  r.after = "123.pbs-server.example";
  EXPECT_NO_THROW(validate_request(r));
  r.after = "123[].pbs01";
  EXPECT_NO_THROW(validate_request(r));
  r.qos = "high";
  EXPECT_THROW(validate_request(r), UsageError);
}

TEST(Submit, FillTemplate) {
  EXPECT_EQ(fill_template("a={{A}}\n{{B}}\n{{C}}\nend\n", {{"A", "1"}, {"B", ""}, {"C", "x\ny\n"}}),
            "a=1\nx\ny\nend\n");
  EXPECT_THROW((void)fill_template("{{NOPE}}\n", {}), UsageError);
  EXPECT_THROW((void)fill_template("{{A\n", {{"A", "1"}}), UsageError);
}

// ---------------------------------------------------------------- rendered scripts

TEST(Submit, SlurmScriptLineByLine) {
  const std::string script = render_script(slurm_request(), source_template("sbatch.tmpl"));
  const auto l = lines_of(script);
  std::vector<std::string> directives;
  for (const auto& line : l)
    if (line.rfind("#SBATCH", 0) == 0) directives.push_back(line);
  EXPECT_EQ(directives,
            (std::vector<std::string>{
                "#SBATCH --job-name=scalebench", "#SBATCH --nodes=16", "#SBATCH --ntasks=16",
                "#SBATCH --exclusive", "#SBATCH --gpus-per-node=4", "#SBATCH --time=02:00:00",
                "#SBATCH --output='logs/sb-%j.out'", "#SBATCH --signal=B:USR1@120",
                "#SBATCH --partition='gpu'", "#SBATCH --account='proj.42'",
                "#SBATCH --qos='normal'", "#SBATCH --dependency=afterany:1234"}));
  EXPECT_EQ(l.at(0), "#!/bin/bash");
  const auto has = [&](const std::string& line) {
    return std::find(l.begin(), l.end(), line) != l.end();
  };
  EXPECT_TRUE(has("SCALEBENCH=${SCALEBENCH:-'/opt/scalebench/bin/scalebench'}"));
  EXPECT_TRUE(has("\"$SCALEBENCH\" run '--preset' 'large' '--out' 'run 1.h5' &"));
  EXPECT_TRUE(has("trap 'kill -USR1 \"$pid\" 2>/dev/null' USR1"));
  EXPECT_TRUE(has("cd \"${SLURM_SUBMIT_DIR:-.}\" || exit 3"));
  EXPECT_EQ(script.find("{{"), std::string::npos);
  // Directives come before the first command (sbatch stops reading them there).
  std::size_t last_directive = 0;
  std::size_t first_command = l.size();
  for (std::size_t i = 1; i < l.size(); ++i) {
    if (l[i].rfind("#SBATCH", 0) == 0) last_directive = i;
    if (!l[i].empty() && l[i][0] != '#' && first_command == l.size()) first_command = i;
  }
  EXPECT_LT(last_directive, first_command);
  EXPECT_EQ(bash_syntax_ok(script), true);
}

TEST(Submit, SlurmCpusAndShortTime) {
  SubmitRequest r;
  r.scheduler = "slurm";
  r.cpus_per_node = "8";
  r.time = "00:05:00";
  r.scalebench = "/x/scalebench";
  const auto l = lines_of(render_script(r, source_template("sbatch.tmpl")));
  std::vector<std::string> directives;
  for (const auto& line : l)
    if (line.rfind("#SBATCH", 0) == 0) directives.push_back(line);
  EXPECT_EQ(directives,
            (std::vector<std::string>{
                "#SBATCH --job-name=scalebench", "#SBATCH --nodes=1", "#SBATCH --ntasks=1",
                "#SBATCH --cpus-per-task=8", "#SBATCH --time=00:05:00",
                "#SBATCH --output='scalebench-%j.out'", "#SBATCH --signal=B:USR1@60"}));
  EXPECT_NE(std::find(l.begin(), l.end(), "\"$SCALEBENCH\" run  &"), l.end());
}

TEST(Submit, PbsScriptLineByLine) {
  SubmitRequest r;
  r.scheduler = "pbs";
  r.nodes = "2";
  r.gpus_per_node = "4";
  r.cpus_per_node = "64";
  r.time = "1-02:00:00";
  r.partition = "workq";
  r.account = "abc";
  r.after = "99.pbs01";
  r.output = "/scratch/sb.log";
  r.scalebench = "/opt/sb/bin/scalebench";
  r.run_args = {"--preset", "small"};
  const std::string script = render_script(r, source_template("pbs.tmpl"));
  const auto l = lines_of(script);
  std::vector<std::string> directives;
  for (const auto& line : l)
    if (line.rfind("#PBS", 0) == 0) directives.push_back(line);
  EXPECT_EQ(directives, (std::vector<std::string>{
                            "#PBS -N scalebench", "#PBS -l select=2:ncpus=64:mpiprocs=5:ngpus=4",
                            "#PBS -l place=scatter:excl", "#PBS -l walltime=26:00:00", "#PBS -j oe",
                            "#PBS -q workq", "#PBS -A abc", "#PBS -W depend=afterany:99.pbs01",
                            "#PBS -o /scratch/sb.log"}));
  const auto has = [&](const std::string& line) {
    return std::find(l.begin(), l.end(), line) != l.end();
  };
  EXPECT_TRUE(has("SCALEBENCH=${SCALEBENCH:-'/opt/sb/bin/scalebench'}"));
  EXPECT_TRUE(has("cd \"${PBS_O_WORKDIR:-.}\" || exit 3"));
  EXPECT_TRUE(has("export PBS_NGPUS=${PBS_NGPUS:-4}"));
  EXPECT_TRUE(has("\"$SCALEBENCH\" run '--preset' 'small' &"));
  EXPECT_TRUE(has("warn_timer 93480 &"));  // 26 h - 120 s
  EXPECT_EQ(script.find("{{"), std::string::npos);
  EXPECT_TRUE(bash_syntax_ok(script));
}

TEST(Submit, InstalledOrSourceTemplateIsUsed) {
  SubmitRequest r = slurm_request();
  EXPECT_EQ(render_script(r), render_script(r, source_template("sbatch.tmpl")));
  EXPECT_TRUE(fs::exists(fs::path(template_dir()) / "pbs.tmpl"));
}

// ---------------------------------------------------------------- the script, run by bash

/// Runs `script` with bash, SCALEBENCH pointing at a fake that writes its arguments (one per
/// line) to DIR/args and exits 7, or on USR1 writes "USR1" and exits 0.
struct ScriptRun {
  TempDir dir;
  int status = -1;
  std::string args() const { return slurp(dir.path / "args"); }
  std::string signal() const { return slurp(dir.path / "signal"); }
};

void run_script(ScriptRun& run, const std::string& script, bool send_usr1) {
  const fs::path fake = run.dir.path / "fake-scalebench";
  write_exe(fake,
            "#!/bin/bash\n"
            "trap 'echo USR1 > \"" +
                run.dir.path.string() +
                "/signal\"; exit 0' USR1\n"
                "for a in \"$@\"; do printf '%s\\n' \"$a\"; done > \"" +
                run.dir.path.string() +
                "/args\"\n"
                "touch \"" +
                run.dir.path.string() +
                "/started\"\n"
                "for i in $(seq 40); do sleep 0.05; done\n"
                "exit 7\n");
  std::ofstream(run.dir.path / "job.sh") << script;
  std::string cmd = "cd " + shell_quote(run.dir.path.string()) +
                    " && SCALEBENCH=" + shell_quote(fake.string()) +
                    " SLURM_SUBMIT_DIR=. PBS_O_WORKDIR=. bash job.sh > out.txt 2>&1";
  if (send_usr1) {
    cmd = "cd " + shell_quote(run.dir.path.string()) +
          " && (SCALEBENCH=" + shell_quote(fake.string()) +
          " SLURM_SUBMIT_DIR=. PBS_O_WORKDIR=. bash job.sh > out.txt 2>&1 & p=$!; "
          "for i in $(seq 100); do [ -e started ] && break; sleep 0.05; done; "
          "kill -USR1 $p; wait $p)";
  }
  const int rc = std::system(cmd.c_str());
  run.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

TEST(Submit, ArgumentsArriveIntactThroughBash) {
  SubmitRequest r = slurm_request();
  const std::string marker =
      (fs::temp_directory_path() / ("sb_pwned_" + std::to_string(::getpid()))).string();
  r.run_args = {"--param", "x=$(touch " + marker + ")", "--out",   "a b'c\"d`e`;f|g&h*.h5",
                "--paths", "single-cpu,multi-cpu",      "--param", "y=~ $HOME \\n"};
  ScriptRun run;
  run_script(run, render_script(r, source_template("sbatch.tmpl")), false);
  EXPECT_EQ(run.status, 7);  // the fake's exit status comes through
  std::string expected = "run\n";
  for (const auto& a : r.run_args) expected += a + "\n";
  EXPECT_EQ(run.args(), expected);
  EXPECT_FALSE(fs::exists(marker));
}

TEST(Submit, SlurmScriptForwardsUsr1) {
  ScriptRun run;
  run_script(run, render_script(slurm_request(), source_template("sbatch.tmpl")), true);
  EXPECT_EQ(run.signal(), "USR1\n");
  EXPECT_EQ(run.status, 0);
}

TEST(Submit, PbsScriptForwardsUsr1AndTimerWarns) {
  SubmitRequest r;
  r.scheduler = "pbs";
  r.cpus_per_node = "2";
  r.run_args = {"--preset", "tiny"};
  ScriptRun run;
  run_script(run, render_script(r, source_template("pbs.tmpl")), true);
  EXPECT_EQ(run.signal(), "USR1\n");
  EXPECT_EQ(run.status, 0);
  EXPECT_EQ(run.args(), "run\n--preset\ntiny\n");
  // The walltime timer: a 1-minute limit warns after 48 s; make it fire at once instead.
  std::string script = render_script(r, source_template("pbs.tmpl"));
  const std::string timer = "warn_timer 3480 &";
  ASSERT_NE(script.find(timer), std::string::npos);
  script.replace(script.find(timer), timer.size(), "warn_timer 0.2 &");
  ScriptRun timed;
  run_script(timed, script, false);
  EXPECT_EQ(timed.signal(), "USR1\n");
  EXPECT_EQ(timed.status, 0);
}

// ---------------------------------------------------------------- the command

struct SubmitCli {
  CLI::App app{"test"};
  int code = -1;
  SubmitCli() { add_submit_command(app, code); }
  /// Parses argv; returns stdout.
  std::string run(std::vector<std::string> args) {
    args.insert(args.begin(), "scalebench");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    std::ostringstream captured;
    auto* old = std::cout.rdbuf(captured.rdbuf());
    try {
      app.parse(static_cast<int>(argv.size()), argv.data());
    } catch (...) {
      std::cout.rdbuf(old);
      throw;
    }
    std::cout.rdbuf(old);
    return captured.str();
  }
};

TEST(SubmitCommand, DryRunPrintsScript) {
  SubmitCli cli;
  const std::string out = cli.run({"submit", "--scheduler", "slurm", "--nodes", "2",
                                   "--gpus-per-node", "4", "--time", "00:30:00", "--partition",
                                   "gpu", "--dry-run", "--", "--preset", "tiny", "--out", "r.h5"});
  EXPECT_EQ(cli.code, 0);
  const auto l = lines_of(out);
  EXPECT_NE(std::find(l.begin(), l.end(), "#SBATCH --nodes=2"), l.end());
  EXPECT_NE(std::find(l.begin(), l.end(), "#SBATCH --partition='gpu'"), l.end());
  bool run_line = false;
  for (const auto& line : l)
    run_line = run_line || line.find("run '--preset' 'tiny' '--out' 'r.h5' &") != std::string::npos;
  EXPECT_TRUE(run_line);
}

TEST(SubmitCommand, RefusedPartitionIsUsageError) {
  SubmitCli cli;
  try {
    (void)cli.run({"submit", "--scheduler", "slurm", "--partition", "gpu; rm -rf ~", "--dry-run"});
    FAIL() << "accepted";
  } catch (const UsageError& e) {
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_NE(std::string(e.what()).find("--partition"), std::string::npos);
  }
}

TEST(SubmitCommand, SubmitsWithFakeSbatchAndQsub) {
  TempDir d;
  write_exe(d.path / "sbatch", "#!/bin/sh\n[ \"$1\" = --parsable ] || exit 9\ncp \"$2\" " +
                                   (d.path / "got.sh").string() + "\necho '4242;cluster'\n");
  write_exe(d.path / "qsub",
            "#!/bin/sh\ncp \"$1\" " + (d.path / "got.pbs").string() + "\necho 77.pbs01\n");
  write_exe(d.path / "refuse", "#!/bin/sh\necho 'sbatch: error: invalid partition' >&2\nexit 1\n");
  ::setenv("SCALEBENCH_SBATCH", (d.path / "sbatch").c_str(), 1);
  ::setenv("SCALEBENCH_QSUB", (d.path / "qsub").c_str(), 1);
  {
    SubmitCli cli;
    EXPECT_EQ(cli.run({"submit", "--scheduler", "slurm", "--", "--preset", "tiny"}), "4242\n");
    EXPECT_EQ(cli.code, 0);
    EXPECT_NE(slurp(d.path / "got.sh").find("run '--preset' 'tiny' &"), std::string::npos);
  }
  {
    SubmitCli cli;
    EXPECT_EQ(cli.run({"submit", "--scheduler", "pbs", "--cpus-per-node", "4"}), "77.pbs01\n");
    EXPECT_NE(slurp(d.path / "got.pbs").find("#PBS -l select=1:ncpus=4:mpiprocs=2"),
              std::string::npos);
  }
  ::setenv("SCALEBENCH_SBATCH", (d.path / "refuse").c_str(), 1);
  {
    SubmitCli cli;
    try {
      (void)cli.run({"submit", "--scheduler", "slurm"});
      FAIL() << "accepted";
    } catch (const EnvironmentError& e) {
      EXPECT_NE(std::string(e.what()).find("invalid partition"), std::string::npos);
    }
  }
  ::setenv("SCALEBENCH_SBATCH", (d.path / "missing-sbatch").c_str(), 1);
  {
    SubmitCli cli;
    EXPECT_THROW((void)cli.run({"submit", "--scheduler", "slurm"}), EnvironmentError);
  }
  ::unsetenv("SCALEBENCH_SBATCH");
  ::unsetenv("SCALEBENCH_QSUB");
}

}  // namespace
}  // namespace sb::batch
