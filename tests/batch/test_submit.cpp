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
  EXPECT_TRUE(refused([](SubmitRequest& r) { r.scheduler = "torque"; }));
  EXPECT_TRUE(refused([](SubmitRequest& r) { r.scheduler = "slurm\n#SBATCH --uid=0"; }));
  EXPECT_TRUE(refused([](SubmitRequest& r) { r.pe = "mpi"; }));  // Grid Engine only
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
                "#SBATCH --no-kill", "#SBATCH --partition='gpu'", "#SBATCH --account='proj.42'",
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
  EXPECT_EQ(directives, (std::vector<std::string>{
                            "#SBATCH --job-name=scalebench", "#SBATCH --nodes=1",
                            "#SBATCH --ntasks=1", "#SBATCH --cpus-per-task=8",
                            "#SBATCH --time=00:05:00", "#SBATCH --output='scalebench-%j.out'",
                            "#SBATCH --signal=B:USR1@60", "#SBATCH --no-kill"}));
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

TEST(Submit, LsfScriptLineByLine) {
  SubmitRequest r;
  r.scheduler = "lsf";
  r.nodes = "3";
  r.gpus_per_node = "4";
  r.cpus_per_node = "32";
  r.time = "1-02:00:30";
  r.partition = "gpu_q";
  r.account = "proj42";
  r.after = "555[2]";
  r.scalebench = "/opt/sb/bin/scalebench";
  r.batch_options = {"-R select[mem>4000] rusage[mem=4000]", "-alloc_flags smt1"};
  r.run_args = {"--preset", "small"};
  const std::string script = render_script(r, source_template("lsf.tmpl"));
  const auto l = lines_of(script);
  std::vector<std::string> directives;
  for (const auto& line : l)
    if (line.rfind("#BSUB", 0) == 0) directives.push_back(line);
  EXPECT_EQ(
      directives,
      (std::vector<std::string>{
          "#BSUB -J scalebench", "#BSUB -n 96", "#BSUB -R \"span[ptile=32]\"", "#BSUB -x",
          "#BSUB -gpu \"num=4\"", "#BSUB -W 26:01", "#BSUB -o scalebench-%J.out", "#BSUB -wa USR1",
          "#BSUB -wt 2", "#BSUB -q gpu_q", "#BSUB -P proj42", "#BSUB -w \"ended(555[2])\"",
          "#BSUB -R \"select[mem>4000] rusage[mem=4000]\"", "#BSUB -alloc_flags smt1"}));
  const auto has = [&](const std::string& line) {
    return std::find(l.begin(), l.end(), line) != l.end();
  };
  EXPECT_TRUE(has("SCALEBENCH=${SCALEBENCH:-'/opt/sb/bin/scalebench'}"));
  EXPECT_TRUE(has("cd \"${LS_SUBCWD:-.}\" || exit 3"));
  EXPECT_TRUE(has("export SCALEBENCH_GPUS_PER_NODE=${SCALEBENCH_GPUS_PER_NODE:-4}"));
  EXPECT_TRUE(has("\"$SCALEBENCH\" run '--preset' 'small' &"));
  EXPECT_EQ(script.find("{{"), std::string::npos);
  EXPECT_TRUE(bash_syntax_ok(script));
  // Short limits: minutes rounded up, a warning of at least one minute.
  r.time = "00:05:00";
  r.gpus_per_node = "0";
  r.after.clear();
  r.batch_options.clear();
  r.output = "logs/sb-%J.log";
  const auto s = lines_of(render_script(r, source_template("lsf.tmpl")));
  EXPECT_NE(std::find(s.begin(), s.end(), "#BSUB -W 0:05"), s.end());
  EXPECT_NE(std::find(s.begin(), s.end(), "#BSUB -wt 1"), s.end());
  EXPECT_NE(std::find(s.begin(), s.end(), "#BSUB -o logs/sb-%J.log"), s.end());
  for (const auto& line : s) EXPECT_EQ(line.find("-gpu"), std::string::npos) << line;
}

TEST(Submit, SgeScriptLineByLine) {
  SubmitRequest r;
  r.scheduler = "sge";
  r.nodes = "2";
  r.gpus_per_node = "2";
  r.cpus_per_node = "16";
  r.time = "02:00:00";
  r.pe = "mpi_16";
  r.partition = "gpu.q";
  r.account = "proj42";
  r.after = "4242";
  r.scalebench = "/opt/sb/bin/scalebench";
  r.batch_options = {"-l exclusive=true", "-ac site=a b"};
  r.run_args = {"--preset", "small"};
  const std::string script = render_script(r, source_template("sge.tmpl"));
  const auto l = lines_of(script);
  std::vector<std::string> directives;
  for (const auto& line : l)
    if (line.rfind("#$", 0) == 0) directives.push_back(line);
  EXPECT_EQ(directives,
            (std::vector<std::string>{
                "#$ -N scalebench", "#$ -S /bin/bash", "#$ -cwd", "#$ -V", "#$ -pe mpi_16 32",
                "#$ -l gpu=2", "#$ -l h_rt=02:00:00", "#$ -l s_rt=01:58:00", "#$ -notify",
                "#$ -j y", "#$ -o scalebench-$JOB_ID.out", "#$ -q gpu.q", "#$ -P proj42",
                "#$ -hold_jid 4242", "#$ -l exclusive=true", "#$ -ac \"site=a b\""}));
  const auto has = [&](const std::string& line) {
    return std::find(l.begin(), l.end(), line) != l.end();
  };
  EXPECT_TRUE(has("trap '' USR2"));
  EXPECT_TRUE(has("trap 'kill -TERM \"$pid\" 2>/dev/null' USR2 TERM"));
  EXPECT_TRUE(has("export SCALEBENCH_GPUS_PER_NODE=${SCALEBENCH_GPUS_PER_NODE:-2}"));
  EXPECT_TRUE(has("\"$SCALEBENCH\" run '--preset' 'small' &"));
  EXPECT_EQ(script.find("{{"), std::string::npos);
  EXPECT_TRUE(bash_syntax_ok(script));
}

TEST(Submit, LsfAndSgeRules) {
  SubmitRequest r;
  r.scheduler = "lsf";
  EXPECT_THROW(validate_request(r), UsageError);  // needs --cpus-per-node
  r.cpus_per_node = "00";
  EXPECT_THROW(validate_request(r), UsageError);  // zero, however spelled
  r.cpus_per_node = "8";
  EXPECT_NO_THROW(validate_request(r));
  r.after = "12[3]";
  EXPECT_NO_THROW(validate_request(r));
  r.after = "12.server";
  EXPECT_THROW(validate_request(r), UsageError);
  r.after.clear();
  r.qos = "high";
  EXPECT_THROW(validate_request(r), UsageError);
  r.qos.clear();
  r.pe = "mpi";
  EXPECT_THROW(validate_request(r), UsageError);
  r.scheduler = "sge";
  EXPECT_NO_THROW(validate_request(r));
  r.pe.clear();
  EXPECT_THROW(validate_request(r), UsageError);  // needs --pe
  r.pe = "mpi; reboot";
  EXPECT_THROW(validate_request(r), UsageError);
  r.pe = "orte";
  r.after = "12_1";
  EXPECT_THROW(validate_request(r), UsageError);
}

TEST(Submit, BatchOptionsEverywhere) {
  const auto directives = [](const char* scheduler, std::vector<std::string> options) {
    SubmitRequest r;
    r.scheduler = scheduler;
    r.cpus_per_node = "4";
    r.pe = std::string(scheduler) == "sge" ? "mpi" : "";
    r.batch_options = std::move(options);
    return template_variables(r).at("EXTRA_DIRECTIVES");
  };
  EXPECT_EQ(directives("slurm", {"--constraint=a100", "--mem=0", "--reservation x y", "-C ib",
                                 "--exclusive"}),
            "#SBATCH --constraint='a100'\n#SBATCH --mem='0'\n#SBATCH --reservation='x y'\n"
            "#SBATCH -C 'ib'\n#SBATCH --exclusive\n");
  EXPECT_EQ(directives("pbs", {"-l mem=4gb", "-W group_list=hpc", "-r n", "-V"}),
            "#PBS -l mem=4gb\n#PBS -W group_list=hpc\n#PBS -r n\n#PBS -V\n");
  EXPECT_EQ(directives("lsf", {"-R span[hosts=1] select[ngpus>0]", "-app gpu"}),
            "#BSUB -R \"span[hosts=1] select[ngpus>0]\"\n#BSUB -app gpu\n");
  EXPECT_EQ(directives("sge", {"-l h_vmem=4G", "-hard"}), "#$ -l h_vmem=4G\n#$ -hard\n");
  EXPECT_EQ(directives("slurm", {}), "");

  const auto refused = [](const char* scheduler, const std::string& option) {
    SubmitRequest r;
    r.scheduler = scheduler;
    r.cpus_per_node = "4";
    r.pe = std::string(scheduler) == "sge" ? "mpi" : "";
    r.batch_options = {option};
    try {
      validate_request(r);
    } catch (const UsageError& e) {
      EXPECT_TRUE(std::string(e.what()).find('\n') == std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("--batch-option"), std::string::npos) << e.what();
      return true;
    }
    return false;
  };
  for (const char* s : {"slurm", "pbs", "lsf", "sge"}) {
    SCOPED_TRACE(s);
    EXPECT_TRUE(refused(s, "--constraint=a\n#SBATCH --uid=0"));
    EXPECT_TRUE(refused(s, "-l a\r-l b"));
    EXPECT_TRUE(refused(s, "-l mem='4gb'"));
    EXPECT_TRUE(refused(s, "-l \"x\""));
    EXPECT_TRUE(refused(s, "-l a\\b"));
    EXPECT_TRUE(refused(s, "-l `id`"));
    EXPECT_TRUE(refused(s, "-l h\xc3\xa9"));
    EXPECT_TRUE(refused(s, "constraint=a100"));
    EXPECT_TRUE(refused(s, "-"));
    EXPECT_TRUE(refused(s,
                        "-l"
                        " "));
    EXPECT_TRUE(refused(s, "-1 x"));
    EXPECT_TRUE(refused(s, "--=x"));
    EXPECT_TRUE(refused(s, "--Constraint=x"));
    EXPECT_TRUE(refused(s, "--constraint="));
    EXPECT_TRUE(refused(s, "-l " + std::string(2000, 'a')));
    EXPECT_FALSE(refused(s, "-l $(reboot);rm"));  // a directive is no shell: kept, and quoted
  }
  EXPECT_TRUE(refused("pbs", "--mem=4G"));  // only SLURM has long options
  EXPECT_TRUE(refused("lsf", "--mem=4G"));
  EXPECT_TRUE(refused("sge", "--mem=4G"));
  SubmitRequest many;
  many.scheduler = "slurm";
  many.batch_options.assign(65, "--mem=0");
  EXPECT_THROW(validate_request(many), UsageError);
}

TEST(Submit, BatchOptionsInEveryTemplate) {
  for (const char* s : {"slurm", "pbs", "lsf", "sge"}) {
    SubmitRequest r;
    r.scheduler = s;
    r.cpus_per_node = "4";
    r.pe = std::string(s) == "sge" ? "mpi" : "";
    r.batch_options = {"-l site=x"};
    const std::string file = std::string(s) == "slurm" ? "sbatch.tmpl" : std::string(s) + ".tmpl";
    const auto l = lines_of(render_script(r, source_template(file.c_str())));
    // The extra directive comes after the others and before the first command.
    std::size_t extra = l.size();
    std::size_t first_command = l.size();
    for (std::size_t i = 1; i < l.size(); ++i) {
      if (l[i].find("-l site=x") != std::string::npos && l[i][0] == '#' && extra == l.size())
        extra = i;
      if (!l[i].empty() && l[i][0] != '#' && first_command == l.size()) first_command = i;
    }
    EXPECT_LT(extra, first_command) << s;
    EXPECT_NE(std::find(l.begin(), l.end(),
                        "# Submitted with: scalebench submit --scheduler " + std::string(s) +
                            " --nodes 1 --cpus-per-node 4 " + "--time 01:00:00" +
                            (std::string(s) == "sge" ? " --pe mpi" : "") +
                            " --batch-option '-l site=x' --"),
              l.end())
        << s;
  }
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

TEST(Submit, SgeScriptSurvivesUsr2AndForwardsItAsTerm) {
  SubmitRequest r;
  r.scheduler = "sge";
  r.cpus_per_node = "2";
  r.pe = "mpi";
  r.run_args = {"--preset", "tiny"};
  // A fake scalebench that records TERM; the job is sent USR2 (Grid Engine's notice before a
  // KILL), which it must not die of, and which the script forwards as TERM.
  ScriptRun run;
  const fs::path fake = run.dir.path / "fake-scalebench";
  write_exe(fake, "#!/bin/bash\ntrap 'echo TERM > \"" + (run.dir.path / "signal").string() +
                      "\"; exit 0' TERM\necho $$ > \"" + (run.dir.path / "started").string() +
                      "\"\nfor i in $(seq 100); do sleep 0.05; done\nexit 7\n");
  std::ofstream(run.dir.path / "job.sh") << render_script(r, source_template("sge.tmpl"));
  // USR2 to the script and to scalebench, as Grid Engine signals every process of the job.
  const std::string cmd =
      "cd " + shell_quote(run.dir.path.string()) + " && (SCALEBENCH=" + shell_quote(fake.string()) +
      " bash job.sh > out.txt 2>&1 & p=$!; "
      "for i in $(seq 100); do [ -s started ] && break; sleep 0.05; done; sleep 0.2; "
      "kill -USR2 $p $(cat started); wait $p)";
  const int rc = std::system(cmd.c_str());
  EXPECT_EQ(WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, 0);
  EXPECT_EQ(run.signal(), "TERM\n");
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
  write_exe(d.path / "bsub", "#!/bin/sh\n[ $# = 0 ] || exit 9\ncat > " +
                                 (d.path / "got.lsf").string() +
                                 "\necho 'Job <31337> is submitted to queue <normal>.'\n");
  ::setenv("SCALEBENCH_BSUB", (d.path / "bsub").c_str(), 1);
  {
    SubmitCli cli;
    EXPECT_EQ(cli.run({"submit", "--scheduler", "lsf", "--cpus-per-node", "4",
                       "--batch-option=-R select[mem>1000]", "--", "--preset", "tiny"}),
              "31337\n");
    EXPECT_NE(slurp(d.path / "got.lsf").find("#BSUB -R \"select[mem>1000]\"\n"), std::string::npos);
    EXPECT_NE(slurp(d.path / "got.lsf").find("#BSUB -n 4\n"), std::string::npos);
  }
  write_exe(d.path / "qsub-sge", "#!/bin/sh\n[ \"$1\" = -terse ] || exit 9\ncp \"$2\" " +
                                     (d.path / "got.sge").string() + "\necho 4711\n");
  ::setenv("SCALEBENCH_QSUB", (d.path / "qsub-sge").c_str(), 1);
  {
    SubmitCli cli;
    EXPECT_EQ(cli.run({"submit", "--scheduler", "sge", "--cpus-per-node", "4", "--pe", "orte",
                       "--batch-option", "-l h_vmem=2G", "--batch-option=-hard"}),
              "4711\n");
    const std::string got = slurp(d.path / "got.sge");
    EXPECT_NE(got.find("#$ -pe orte 4\n"), std::string::npos);
    EXPECT_NE(got.find("#$ -l h_vmem=2G\n#$ -hard\n"), std::string::npos);
  }
  write_exe(d.path / "bsub-silent", "#!/bin/sh\necho 'queue closed?'\n");
  ::setenv("SCALEBENCH_BSUB", (d.path / "bsub-silent").c_str(), 1);
  {
    SubmitCli cli;
    try {
      (void)cli.run({"submit", "--scheduler", "lsf", "--cpus-per-node", "4"});
      FAIL() << "accepted";
    } catch (const EnvironmentError& e) {
      EXPECT_NE(std::string(e.what()).find("no job id"), std::string::npos) << e.what();
    }
  }
  ::unsetenv("SCALEBENCH_BSUB");
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
