/// @file test_fleet_submit.cpp
/// Fleet sweeps and scaling studies in `scalebench submit` (issue #51): the job array and the
/// pinned scripts of SLURM, PBS, LSF and Grid Engine line by line, an element's script run by
/// bash against a fake scalebench (its element, report and log from the array index), the
/// fleet manifest and element job ids through fake sbatch/qsub/bsub, the re-submit command,
/// refused requests, node counts, and a scaling study as one allocation and as a chain.

#include "batch/fleet_folder.hpp"
#include "batch/submit.hpp"
#include "batch/sweep_submit.hpp"

#include <scalebench/error.hpp>

#include <gtest/gtest.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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

void write_exe(const fs::path& p, const std::string& text) {
  std::ofstream(p) << text;
  fs::permissions(p, fs::perms::owner_all);
}

bool has_line(const std::string& text, const std::string& line) {
  std::istringstream in(text);
  std::string l;
  while (std::getline(in, l))
    if (l == line) return true;
  return false;
}

bool bash_syntax_ok(const std::string& script) {
  TempDir d;
  std::ofstream(d.path / "s.sh") << script;
  return std::system(("bash -n " + (d.path / "s.sh").string()).c_str()) == 0;
}

/// `scalebench submit ARGS` through the real command; stdout returned, stderr swallowed.
struct Cli {
  CLI::App app{"test"};
  int code = -1;
  Cli() { add_submit_command(app, code); }
  std::string run(std::vector<std::string> args) {
    args.insert(args.begin(), "scalebench");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    std::ostringstream out, err;
    auto* old_out = std::cout.rdbuf(out.rdbuf());
    auto* old_err = std::cerr.rdbuf(err.rdbuf());
    try {
      app.parse(static_cast<int>(argv.size()), argv.data());
    } catch (...) {
      std::cout.rdbuf(old_out);
      std::cerr.rdbuf(old_err);
      throw;
    }
    std::cout.rdbuf(old_out);
    std::cerr.rdbuf(old_err);
    stderr_text = err.str();
    return out.str();
  }
  std::string stderr_text;
};

std::vector<std::string> dialect_args(const std::string& s) {
  std::vector<std::string> a{"--scheduler", s};
  if (s != "slurm") a.insert(a.end(), {"--cpus-per-node", "4"});
  if (s == "sge") a.insert(a.end(), {"--pe", "mpi"});
  return a;
}

TEST(FleetSubmit, ArrayScriptsOfEveryBatchSystem) {
  TempDir d;
  const std::string dir = (d.path / "fleet").string();
  const std::map<std::string, std::vector<std::string>> want{
      {"slurm", {"#SBATCH --array=0-2", "#SBATCH --output='" + dir + "/slurm-%A_%a.out'"}},
      {"pbs", {"#PBS -J 0-2", "#PBS -o " + dir + "/"}},
      {"lsf", {"#BSUB -J \"scalebench[1-3]\"", "#BSUB -o " + dir + "/lsf-%J_%I.out"}},
      {"sge", {"#$ -t 1-3", "#$ -o " + dir + "/sge-$JOB_ID.$TASK_ID.out"}}};
  const std::map<std::string, std::string> index{{"slurm", "SLURM_ARRAY_TASK_ID:-0} - 0"},
                                                 {"pbs", "PBS_ARRAY_INDEX:-0} - 0"},
                                                 {"lsf", "LSB_JOBINDEX:-1} - 1"},
                                                 {"sge", "SGE_TASK_ID:-1} - 1"}};
  for (const auto& [s, lines] : want) {
    Cli cli;
    std::vector<std::string> args{"submit"};
    for (const auto& a : dialect_args(s)) args.push_back(a);
    for (const auto& a : {"--fleet", "3", "--fleet-dir", dir.c_str(), "--dry-run", "--", "--preset",
                          "tiny", "--paths", "each-node", "--check"})
      args.emplace_back(a);
    const std::string script = cli.run(args);
    EXPECT_EQ(cli.code, 0);
    for (const auto& l : lines) EXPECT_TRUE(has_line(script, l)) << s << ": no line " << l;
    EXPECT_TRUE(has_line(script, "sb_elements=('element-0' 'element-1' 'element-2')")) << s;
    EXPECT_NE(script.find(index.at(s)), std::string::npos) << s;
    EXPECT_NE(script.find("run '--preset' 'tiny' '--paths' 'each-node' '--check' "
                          "'--fleet-element' '--out' \"$sb_fleet_dir/$SB_ELEMENT.h5\" &"),
              std::string::npos)
        << s << script;
    EXPECT_NE(script.find("--fleet 3 --fleet-dir " + dir + " --"), std::string::npos) << s;
    EXPECT_TRUE(bash_syntax_ok(script)) << s;
    EXPECT_FALSE(fs::exists(dir)) << "a dry run creates nothing";
  }
}

TEST(FleetSubmit, PinnedScriptsOfEveryBatchSystem) {
  const std::map<std::string, std::string> pin{
      {"slurm", "#SBATCH --nodelist='n2'"},
      {"pbs", "#PBS -l select=1:ncpus=4:mpiprocs=2:host=n2"},
      {"lsf", "#BSUB -m n2"},
      {"sge", "#$ -l hostname=n2"}};
  for (const auto& [s, line] : pin) {
    Cli cli;
    std::vector<std::string> args{"submit"};
    for (const auto& a : dialect_args(s)) args.push_back(a);
    for (const auto& a : {"--fleet-nodes", "n[1-2]", "--fleet-dir", "/tmp/sbf", "--dry-run", "--",
                          "--preset", "tiny"})
      args.emplace_back(a);
    const std::string out = cli.run(args);
    EXPECT_NE(out.find("# ---- job 1 of 2: node-n1"), std::string::npos) << s;
    EXPECT_NE(out.find("# ---- job 2 of 2: node-n2"), std::string::npos) << s;
    EXPECT_TRUE(has_line(out, line)) << s << ": no line " << line << "\n" << out;
    EXPECT_TRUE(has_line(out, "sb_elements=('node-n2')")) << s;
    if (s == "lsf") {
      EXPECT_TRUE(has_line(out, "#BSUB -J scalebench"));
    }
  }
}

/// Runs an element's script with bash: a fake scalebench records its arguments; `env` sets the
/// array index.
std::string run_element(const std::string& scheduler, const std::string& env, const fs::path& work,
                        const std::string& elements_flag, const std::string& elements) {
  SubmitRequest r;
  r.scheduler = scheduler;
  r.cpus_per_node = scheduler == "slurm" ? "0" : "4";
  r.pe = scheduler == "sge" ? "mpi" : "";
  r.scalebench = (work / "fake").string();
  r.run_args = {"--preset", "tiny"};
  SweepRequest s;
  s.fleet_dir = (work / "fleet").string();
  if (elements_flag == "--fleet") s.fleet = elements;
  if (elements_flag == "--fleet-elements") s.fleet_elements = elements;
  write_exe(work / "fake", "#!/bin/bash\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > \"" +
                               (work / "args").string() + "\"\n");
  std::ostringstream out;
  auto* old = std::cout.rdbuf(out.rdbuf());
  submit_fleet(r, s, true);
  std::cout.rdbuf(old);
  fs::create_directories(work / "fleet");
  std::ofstream(work / "job.sh") << out.str();
  const std::string cmd = "cd " + shell_quote(work.string()) + " && env " + env +
                          " SLURM_SUBMIT_DIR=. PBS_O_WORKDIR=. LS_SUBCWD=. SGE_O_WORKDIR=. "
                          "bash job.sh > job.out 2>&1";
  const int rc = std::system(cmd.c_str());
  EXPECT_EQ(WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, 0) << slurp(work / "job.out");
  return slurp(work / "args");
}

TEST(FleetSubmit, AnElementFindsItsReportAndLogFromTheArrayIndex) {
  {
    TempDir d;
    const std::string args = run_element("slurm", "SLURM_ARRAY_TASK_ID=2", d.path, "--fleet", "3");
    EXPECT_EQ(args, "run\n--preset\ntiny\n--fleet-element\n--out\n" +
                        (d.path / "fleet/element-2.h5").string() + "\n");
    EXPECT_NE(slurp(d.path / "fleet/element-2.out").find("fleet element element-2"),
              std::string::npos);
  }
  {  // LSF counts from 1; --fleet-elements 4,7 maps index 2 to element 7
    TempDir d;
    const std::string args =
        run_element("lsf", "LSB_JOBINDEX=2", d.path, "--fleet-elements", "4,7");
    EXPECT_NE(args.find((d.path / "fleet/element-7.h5").string()), std::string::npos) << args;
  }
  {  // one element: a job of its own, no index variable
    TempDir d;
    const std::string args = run_element("sge", "JOB_ID=5", d.path, "--fleet-elements", "9");
    EXPECT_NE(args.find((d.path / "fleet/element-9.h5").string()), std::string::npos) << args;
  }
}

TEST(FleetSubmit, WritesTheManifestWithEveryElementsJob) {
  TempDir d;
  write_exe(d.path / "sbatch", "#!/bin/sh\nn=$(cat " + (d.path / "n").string() +
                                   " 2>/dev/null || echo 500)\n"
                                   "echo $((n + 1)) > " +
                                   (d.path / "n").string() + "\necho \"$n;cluster\"\n");
  ::setenv("SCALEBENCH_SBATCH", (d.path / "sbatch").c_str(), 1);
  const std::string dir = (d.path / "fleet").string();
  {
    Cli cli;
    const std::string out =
        cli.run({"submit", "--scheduler", "slurm", "--gpus-per-node", "8", "--fleet", "3",
                 "--fleet-nodes", "gpu7", "--fleet-dir", dir, "--", "--preset", "seed"});
    EXPECT_EQ(out, "500\n501\n");
    EXPECT_NE(cli.stderr_text.find("scalebench report merge " + dir), std::string::npos);
  }
  FleetManifest m = read_fleet_manifest(dir);
  ASSERT_EQ(m.elements.size(), 4u);
  EXPECT_EQ(m.scheduler, "slurm");
  EXPECT_EQ(m.submit_args, (std::vector<std::string>{"--scheduler", "slurm", "--gpus-per-node", "8",
                                                     "--time", "01:00:00"}));
  EXPECT_EQ(m.run_args, (std::vector<std::string>{"--preset", "seed"}));
  EXPECT_EQ(m.elements[0].element, "element-0");
  EXPECT_EQ(m.elements[0].job_id, "500_0");
  EXPECT_EQ(m.elements[2].job_id, "500_2");
  EXPECT_EQ(m.elements[3].element, "node-gpu7");
  EXPECT_EQ(m.elements[3].node, "gpu7");
  EXPECT_EQ(m.elements[3].job_id, "501");
  {  // element 1 again: its entry is replaced
    Cli cli;
    EXPECT_EQ(cli.run({"submit", "--scheduler", "slurm", "--gpus-per-node", "8", "--fleet-elements",
                       "1", "--fleet-dir", dir, "--", "--preset", "seed"}),
              "502\n");
  }
  m = read_fleet_manifest(dir);
  ASSERT_EQ(m.elements.size(), 4u);
  EXPECT_EQ(m.elements[1].job_id, "502");
  // Another batch system into the same folder is refused.
  write_exe(d.path / "qsub", "#!/bin/sh\necho '123[].pbs01'\n");
  ::setenv("SCALEBENCH_QSUB", (d.path / "qsub").c_str(), 1);
  {
    Cli cli;
    EXPECT_THROW((void)cli.run({"submit", "--scheduler", "pbs", "--cpus-per-node", "4", "--fleet",
                                "2", "--fleet-dir", dir}),
                 UsageError);
  }
  {  // PBS array element ids: 123[0].pbs01
    Cli cli;
    const std::string pdir = (d.path / "pbs").string();
    EXPECT_EQ(cli.run({"submit", "--scheduler", "pbs", "--cpus-per-node", "4", "--fleet", "2",
                       "--fleet-dir", pdir}),
              "123[].pbs01\n");
    const FleetManifest p = read_fleet_manifest(pdir);
    ASSERT_EQ(p.elements.size(), 2u);
    EXPECT_EQ(p.elements[1].job_id, "123[1].pbs01");
  }
  ::unsetenv("SCALEBENCH_SBATCH");
  ::unsetenv("SCALEBENCH_QSUB");
}

TEST(FleetSubmit, RefusesWhatASweepCannotTake) {
  const std::vector<std::vector<std::string>> bad{
      {"--fleet", "3", "--nodes", "2"},
      {"--fleet", "0"},
      {"--fleet", "2", "--fleet-elements", "1"},
      {"--fleet-elements", "1-x"},
      {"--fleet-nodes", "bad name"},
      {"--fleet", "2", "--output", "log.txt"},
      {"--fleet", "2", "--", "--out", "r.h5"},
      {"--fleet", "2", "--scaling", "weak"},
      {"--chain"},
      {"--fleet-dir", "/tmp/x"},
  };
  for (const auto& extra : bad) {
    Cli cli;
    std::vector<std::string> args{"submit", "--scheduler", "slurm", "--dry-run"};
    const auto dash = std::find(extra.begin(), extra.end(), "--");
    args.insert(args.end(), extra.begin(), dash);
    args.emplace_back("--");
    if (dash != extra.end()) args.insert(args.end(), dash + 1, extra.end());
    EXPECT_THROW((void)cli.run(args), UsageError) << extra.front();
  }
}

TEST(FleetSubmit, ResubmitCommandNamesExactlyTheNodesAndElements) {
  FleetManifest m;
  m.scheduler = "slurm";
  m.submit_args = {"--scheduler", "slurm",          "--gpus-per-node",
                   "8",           "--batch-option", "--constraint=h200 nvl"};
  m.run_args = {"--preset", "seed", "--check"};
  EXPECT_EQ(resubmit_command(m, "/f", {}, {}), "");
  EXPECT_EQ(resubmit_command(m, "/f", {"n3"}, {2, 5, 6, 7}),
            "scalebench submit --scheduler slurm --gpus-per-node 8 --batch-option "
            "'--constraint=h200 nvl' --fleet-dir /f --fleet-nodes n3 --fleet-elements 2,5-7 -- "
            "--preset seed --check");
  EXPECT_EQ(array_element_index("element-12"), 12);
  EXPECT_EQ(array_element_index("node-element-1"), -1);
  EXPECT_EQ(array_element_index("element-"), -1);
}

TEST(FleetSubmit, NodeListsAndCounts) {
  EXPECT_EQ(parse_fleet_nodes("gpu[01-03],gpu01,x"),
            (std::vector<std::string>{"gpu01", "gpu02", "gpu03", "x"}));
  TempDir d;
  std::ofstream(d.path / "nodes") << "# spares\nn1\n  n2  # rack 3\n\nn1\n";
  EXPECT_EQ(parse_fleet_nodes("@" + (d.path / "nodes").string()),
            (std::vector<std::string>{"n1", "n2"}));
  EXPECT_THROW((void)parse_fleet_nodes("n;1"), UsageError);
  EXPECT_THROW((void)parse_fleet_nodes("@/nonexistent/file"), UsageError);
  EXPECT_EQ(parse_node_counts("1,2,4,8", "--nodes"), (std::vector<int>{1, 2, 4, 8}));
  EXPECT_EQ(parse_node_counts("3,1-2", "--nodes"), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(parse_node_counts("1:16:*2", "--nodes"), (std::vector<int>{1, 2, 4, 8, 16}));
  EXPECT_EQ(parse_node_counts("2:8:+3", "--nodes"), (std::vector<int>{2, 5, 8}));
  for (const char* bad : {"", "0", "a", "4-2", "1:8:*1", "1,,2", "1:8:-1"})
    EXPECT_THROW((void)parse_node_counts(bad, "--nodes"), UsageError) << bad;
}

TEST(ScalingSubmit, OneAllocationRunsScaleAtEveryCount) {
  Cli cli;
  const std::string script =
      cli.run({"submit", "--scheduler", "slurm", "--nodes", "1:3", "--scaling", "weak",
               "--scaling-dir", "/tmp/study", "--dry-run", "--", "--preset", "tiny", "--workloads",
               "subset-mean,groupby", "--paths", "multi-cpu"});
  EXPECT_TRUE(has_line(script, "#SBATCH --nodes=3")) << script;
  EXPECT_NE(script.find("scale '--nodes' '1,2,3' '--mode' 'weak' '--dir' '/tmp/study' '--' "
                        "'--preset' 'tiny' '--workloads' 'subset-mean,groupby' '--paths' "
                        "'multi-cpu' &"),
            std::string::npos)
      << script;
  EXPECT_TRUE(bash_syntax_ok(script));
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"--nodes", "4", "--scaling", "strong"},
        std::vector<std::string>{"--nodes", "1,2", "--scaling", "medium"},
        std::vector<std::string>{"--nodes", "1,2", "--scaling", "strong", "--", "--out", "x.h5"}}) {
    Cli c;
    std::vector<std::string> args{"submit", "--scheduler", "slurm", "--dry-run"};
    const auto dash = std::find(bad.begin(), bad.end(), "--");
    args.insert(args.end(), bad.begin(), dash);
    args.emplace_back("--");
    if (dash != bad.end()) args.insert(args.end(), dash + 1, bad.end());
    EXPECT_THROW((void)c.run(args), UsageError) << bad[1];
  }
}

TEST(ScalingSubmit, AChainStartsEachJobAfterThePrevious) {
  TempDir d;
  write_exe(d.path / "sbatch", "#!/bin/sh\nn=$(cat " + (d.path / "n").string() +
                                   " 2>/dev/null || echo 70)\n"
                                   "echo $((n + 1)) > " +
                                   (d.path / "n").string() + "\ncp \"$2\" " +
                                   (d.path / "job-").string() + "$n.sh\necho \"$n\"\n");
  ::setenv("SCALEBENCH_SBATCH", (d.path / "sbatch").c_str(), 1);
  Cli cli;
  EXPECT_EQ(cli.run({"submit", "--scheduler", "slurm", "--nodes", "1,2,4", "--scaling", "strong",
                     "--chain", "--after", "69", "--scaling-dir", (d.path / "study").string(), "--",
                     "--preset", "tiny"}),
            "70\n71\n72\n");
  ::unsetenv("SCALEBENCH_SBATCH");
  const std::string j0 = slurp(d.path / "job-70.sh"), j1 = slurp(d.path / "job-71.sh"),
                    j2 = slurp(d.path / "job-72.sh");
  EXPECT_TRUE(has_line(j0, "#SBATCH --nodes=1"));
  EXPECT_TRUE(has_line(j0, "#SBATCH --dependency=afterany:69"));
  EXPECT_TRUE(has_line(j1, "#SBATCH --nodes=2"));
  EXPECT_TRUE(has_line(j1, "#SBATCH --dependency=afterany:70"));
  EXPECT_TRUE(has_line(j2, "#SBATCH --dependency=afterany:71"));
  EXPECT_NE(j2.find("scale '--nodes' '1,2,4' '--mode' 'strong' '--dir' '" +
                    (d.path / "study").string() + "' '--step' '4' '--'"),
            std::string::npos)
      << j2;
}

}  // namespace
}  // namespace sb::batch
