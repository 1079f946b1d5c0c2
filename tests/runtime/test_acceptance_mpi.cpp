// Node acceptance through real mpiexec (issue #30): each-node runs the multi-cpu case on the
// node's workers as one device with its own record; each-gpu without a GPU is skipped; every
// case carries telemetry and the interference record; `run --check` (exit 5 for a node nothing
// judged), `--references`, `report --make-references`, `--format junit`, CPU energy from RAPL
// (issue #50) and SCALEBENCH_TELEMETRY=0 end to end.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "../support/mpi_run.hpp"
#include "../support/scratch_dir.hpp"
#include "scalebench/job_plan.hpp"
#include "scalebench/report.hpp"
#include "scalebench/system_info.hpp"
#include "scalebench/verdicts.hpp"

namespace fs = std::filesystem;

namespace {

using nlohmann::json;
using sb::test_support::slurp;
using sb::test_support::TempDir;

using sb::test_support::mpiexec;
using sb::test_support::run;

sb::CaseSpec subset_mean(int index, sb::ExecPath path) {
  sb::CaseSpec s;
  s.index = index;
  s.workload = "subset-mean";
  s.path = path;
  for (const auto& [k, v] : std::vector<std::pair<const char*, const char*>>{
           {"n", "400"}, {"chunk", "100"}, {"seed", "7"}, {"mu", "10"}, {"sigma", "1"}})
    s.params.set(k, v);
  s.repeats = 3;
  s.warmup = 1;
  s.id = fmt::format("subset-mean/{}/{}", sb::to_string(path), s.params.canonical());
  return s;
}

std::vector<json> run_plan(const std::vector<sb::CaseSpec>& cases, int ranks, const fs::path& dir) {
  sb::JobPlan plan;
  plan.cases = cases;
  plan.stream_path = (dir / "stream.jsonl").string();
  plan.measure_ceilings = false;
  plan.telemetry_period_s = 0.005;
  const fs::path plan_path = dir / "plan.json";
  std::ofstream(plan_path) << plan.to_json().dump();
  const std::string cmd = fmt::format(
      "env -u SCALEBENCH_PLACEMENT OMP_NUM_THREADS=1 {} -n {} {} --plan {} > {}/log 2>&1",
      mpiexec(), ranks, SB_RANK_EXE, plan_path.string(), dir.string());
  EXPECT_EQ(run(cmd), 0) << cmd << "\n" << slurp(dir / "log");
  std::vector<json> out;
  std::ifstream in(plan.stream_path);
  for (std::string line; std::getline(in, line);) {
    const auto j = json::parse(line);
    if (j.at("type") == "case") out.push_back(j);
  }
  return out;
}

sb::CaseSpec comms_pairs(int index, sb::ExecPath path) {
  sb::CaseSpec s;
  s.index = index;
  s.workload = "comms";
  s.path = path;
  for (const auto& [k, v] : std::vector<std::pair<const char*, const char*>>{
           {"op", "pairs"}, {"pair_bytes", "64K"}, {"iters", "3"}, {"seed", "42"}})
    s.params.set(k, v);
  s.repeats = 2;
  s.warmup = 1;
  s.id = fmt::format("comms/{}/{}", sb::to_string(path), s.params.canonical());
  return s;
}

// Issue #27: comms on each-node measures every node's own links at once, and a node of one
// worker is skipped without a verdict against it.
TEST(AcceptanceMpi, CommsOnEachNodeMeasuresTheNodesLinksAndSkipsANodeOfOneWorker) {
  TempDir two;
  const auto recs = run_plan({comms_pairs(0, sb::ExecPath::each_node)}, 3, two.path);
  ASSERT_EQ(recs.size(), 1u);
  const json& node = recs[0];
  ASSERT_EQ(node.at("status"), "ok") << node.dump();
  EXPECT_EQ(node.at("workers"), 2);
  const json& links = node.at("metrics").at("links");
  ASSERT_EQ(links.size(), 2u) << "worker 0 -> 1 and 1 -> 0";
  for (const auto& l : links) {
    EXPECT_GT(l.at("bandwidth_gbps").get<double>(), 0.0);
    EXPECT_EQ(l.at("kind"), "shared memory");
    EXPECT_EQ(l.at("src_host"), sb::host_name());
  }
  for (const auto& c : node.at("validation")) EXPECT_TRUE(c.at("pass").get<bool>()) << c.dump();

  TempDir one;
  const auto alone = run_plan({comms_pairs(0, sb::ExecPath::each_node)}, 2, one.path);
  ASSERT_EQ(alone.size(), 1u);
  EXPECT_EQ(alone[0].at("status"), "skipped");
  EXPECT_EQ(alone[0].at("not_applicable"), true);
  EXPECT_NE(alone[0].at("message").get<std::string>().find("comms needs at least 2 workers"),
            std::string::npos);
  const json model = {{"cases", alone}};
  EXPECT_TRUE(sb::results::judge_devices(model, sb::results::ReferenceSet{}).empty())
      << "nothing is wrong with a node of one worker";
}

TEST(AcceptanceMpi, EachNodeIsOneDeviceOfTheNodesWorkersWithTelemetry) {
  TempDir dir;
  // Three ranks: the scheduler and two workers on this one node.
  const auto recs =
      run_plan({subset_mean(0, sb::ExecPath::multi_cpu), subset_mean(1, sb::ExecPath::each_node),
                subset_mean(2, sb::ExecPath::each_gpu)},
               3, dir.path);
  ASSERT_EQ(recs.size(), 3u);
  const json& multi = recs[0];
  const json& node = recs[1];
  const json& gpu = recs[2];
  ASSERT_EQ(node.at("status"), "ok") << node.dump();
  EXPECT_EQ(node.at("planned_id"), subset_mean(1, sb::ExecPath::each_node).id);
  EXPECT_EQ(node.at("device_id"), sb::host_name());
  EXPECT_EQ(node.at("id"), node.at("planned_id").get<std::string>() + "/" + sb::host_name());
  EXPECT_EQ(node.at("gpu"), -1);
  EXPECT_EQ(node.at("devices"), 1);
  EXPECT_EQ(node.at("workers"), 2) << "the node's two workers run it together";
  EXPECT_EQ(node.at("repeats").size(), 3u);
  EXPECT_EQ(node.at("result").at("answer"), multi.at("result").at("answer"))
      << "the same answer as multi-cpu, bit for bit";
  bool cross = false;
  for (const auto& c : node.at("validation")) {
    EXPECT_TRUE(c.at("pass").get<bool>()) << c.dump();
    cross = cross || c.at("name").get<std::string>().rfind("cross:", 0) == 0;
  }
  EXPECT_TRUE(cross) << "cross-checked against the multi-cpu case";
  for (const json* r : {&multi, &node}) {
    ASSERT_TRUE(r->contains("telemetry")) << r->dump();
    ASSERT_TRUE(r->contains("interference")) << r->dump();
    const json& in = r->at("interference");
    ASSERT_TRUE(in.at("other_cpu_fraction").is_number()) << in.dump();
    EXPECT_GE(in.at("other_cpu_fraction").get<double>(), 0.0);
    EXPECT_LE(in.at("other_cpu_fraction").get<double>(), 1.0);
    EXPECT_TRUE(in.at("cpu_mhz").is_object());
    EXPECT_TRUE(in.contains("cgroup_throttled_s"));
    for (const auto& rep : r->at("repeats")) EXPECT_FALSE(rep.at("throttled").get<bool>());
    const json& rows = r->at("telemetry").at("repeats");
    EXPECT_EQ(rows.size(), 3u * r->at("workers").get<std::size_t>()) << "per repeat and worker";
    for (const auto& row : rows) EXPECT_GE(row.at("samples").get<int>(), 2);
    EXPECT_FALSE(rows[0].contains("gpu_sm_mhz_median")) << "no GPU columns in a CPU case";
    EXPECT_FALSE(r->at("telemetry").at("series").at("t").empty());
    EXPECT_EQ(r->at("metrics").at("throttled_repeats"), 0);
  }
  EXPECT_EQ(gpu.at("status"), "skipped");
  EXPECT_FALSE(gpu.contains("device_id"));
  EXPECT_EQ(node.at("repeat_stop").at("reason"), "count");
  EXPECT_EQ(node.at("task_events").at("task").size(), node.at("task_events").at("end").size());
  EXPECT_FALSE(node.at("task_events").at("task").empty());
}

TEST(AcceptanceMpi, EachDeviceFollowsTheAdaptiveRepeatRule) {
  TempDir dir;
  sb::CaseSpec spec = subset_mean(0, sb::ExecPath::each_node);
  spec.repeats = 6;  // at most
  spec.min_repeats = 2;
  spec.max_time_s = 1e-6;  // past after the fewest repeats
  spec.target_spread = 1e-9;
  const auto recs = run_plan({spec}, 3, dir.path);
  ASSERT_EQ(recs.size(), 1u);
  ASSERT_EQ(recs[0].at("status"), "ok") << recs[0].dump();
  EXPECT_EQ(recs[0].at("repeats").size(), 2u);
  EXPECT_EQ(recs[0].at("repeat_stop").at("reason"), "max-time");
  EXPECT_EQ(recs[0].at("repeat_stop").at("max_repeats"), 6);
}

std::string launcher(const std::string& args, const fs::path& dir, const std::string& env = "") {
  return fmt::format(
      "{} {} run --preset tiny --workloads subset-mean --repeats 3 --no-ceilings "
      "{} > {}/stdout 2> {}/stderr",
      env, SB_LAUNCHER_EXE, args, dir.string(), dir.string());
}

TEST(AcceptanceMpi, CheckReferencesAndJunitEndToEnd) {
  TempDir dir;
  const fs::path out = dir.path / "r.h5";
  // A node alone, with no reference: nothing judged it, and --check says so with exit 5 (not a
  // pass), the verdicts last on stdout.
  ASSERT_EQ(run(launcher("--paths cpuN,each-node --check --out " + out.string(), dir.path)),
            sb::results::kExitNotJudged)
      << slurp(dir.path / "stderr");
  const std::string stdout_text = slurp(dir.path / "stdout");
  EXPECT_NE(stdout_text.find("verdicts: 0 of 1 device ok, 1 not judged (1 case)"),
            std::string::npos)
      << stdout_text;
  EXPECT_NE(stdout_text.find("not judged node " + sb::host_name()), std::string::npos)
      << stdout_text;
  EXPECT_NE(slurp(dir.path / "stderr").find("--check: 1 device(s) not judged"), std::string::npos)
      << slurp(dir.path / "stderr");
  const json model = sb::results::read_report(out.string());
  ASSERT_TRUE(model.contains("verdicts"));
  ASSERT_EQ(model["verdicts"].size(), 1u);
  const json& v = model["verdicts"][0];
  EXPECT_EQ(v["host"], sb::host_name());
  EXPECT_EQ(v["device"], -1);
  EXPECT_EQ(v["verdict"], "not judged");
  EXPECT_NE(v["reason"].get<std::string>().find("no peer of this model and no reference"),
            std::string::npos)
      << v.dump();

  // JUnit: one test case for the node, skipped (nothing was tested), one for the multi-cpu case.
  const fs::path junit = dir.path / "r.xml";
  ASSERT_EQ(run(fmt::format("{} report {} --format junit --out {}", SB_LAUNCHER_EXE, out.string(),
                            junit.string())),
            0);
  const std::string xml = slurp(junit);
  EXPECT_NE(xml.find("name=\"node on " + sb::host_name()), std::string::npos) << xml;
  EXPECT_NE(xml.find("tests=\"2\" failures=\"0\" errors=\"0\" skipped=\"1\""), std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<skipped message=\"not judged: node " + sb::host_name() + ": no peer"),
            std::string::npos)
      << xml;

  // References made from that run judge the next one ok (exit 0) ...
  const fs::path refs = dir.path / "refs.toml";
  ASSERT_EQ(run(fmt::format("{} report {} --make-references --out {}", SB_LAUNCHER_EXE,
                            out.string(), refs.string())),
            0);
  const std::string made = slurp(refs);
  EXPECT_NE(made.find("[[reference]]"), std::string::npos) << made;
  EXPECT_NE(made.find("subset-mean/each-node/"), std::string::npos) << made;
  std::string generous = made;  // (this shared machine's speed varies: the tolerance is wide)
  const auto tol = generous.find("tolerance = ");
  ASSERT_NE(tol, std::string::npos);
  generous.replace(tol, generous.find('\n', tol) - tol, "tolerance = 9");
  std::ofstream(dir.path / "generous.toml") << generous;
  EXPECT_EQ(run(launcher("--paths each-node --check --references " +
                             (dir.path / "generous.toml").string() + " --out " +
                             (dir.path / "judged.h5").string(),
                         dir.path)),
            0)
      << slurp(dir.path / "stdout") << slurp(dir.path / "stderr");
  EXPECT_NE(slurp(dir.path / "stdout").find("verdicts: all 1 device ok (1 case)"),
            std::string::npos)
      << slurp(dir.path / "stdout");
  // ... unless the expected time is far below what this machine does: --check names the node.
  std::string fast = made;
  const auto at = fast.find("median_s = ");
  ASSERT_NE(at, std::string::npos);
  fast.replace(at, fast.find('\n', at) - at, "median_s = 1e-9");
  std::ofstream(dir.path / "fast.toml") << fast;
  EXPECT_EQ(
      run(launcher("--paths each-node --check --references " + (dir.path / "fast.toml").string() +
                       " --out " + (dir.path / "slow.h5").string(),
                   dir.path)),
      1);
  const std::string bad = slurp(dir.path / "stdout");
  EXPECT_NE(bad.find("verdicts: 1 of 1 device not ok"), std::string::npos) << bad;
  EXPECT_NE(bad.find("slow      node " + sb::host_name()), std::string::npos) << bad;
  EXPECT_NE(bad.find("slower than the reference"), std::string::npos) << bad;
  // Without --check the same run exits 0 and still shows the verdict.
  EXPECT_EQ(run(launcher("--paths each-node --references " + (dir.path / "fast.toml").string() +
                             " --out " + (dir.path / "slow2.h5").string(),
                         dir.path)),
            0);
  // A bad reference file stops the run before it starts (exit 2, one line).
  std::ofstream(dir.path / "bad.toml") << "[[reference]]\nmodel = 3\n";
  EXPECT_EQ(run(launcher("--paths each-node --references " + (dir.path / "bad.toml").string() +
                             " --out " + (dir.path / "never.h5").string(),
                         dir.path)),
            2);
  EXPECT_FALSE(fs::exists(dir.path / "never.h5"));
}

// A rank killed with -9 while an each-node case runs: the finished case stays, the node the
// job never reported is recorded failed by name (its verdict failed, --check exits 1), and the
// next case runs in a fresh job.
TEST(AcceptanceMpi, AKilledRankFailsItsDeviceByNameAndTheRunGoesOn) {
  TempDir dir;
  const fs::path out = dir.path / "killed.h5";
  std::ofstream(dir.path / "suite.toml") << R"(repeats = 200
warmup = 0
[[case]]
workload = "subset-mean"
preset = "tiny"
paths = ["multi-cpu"]
[[case]]
workload = "subset-mean"
preset = "small"
paths = ["each-node"]
[[case]]
workload = "subset-mean"
preset = "tiny"
paths = ["single-cpu"]
)";
  const std::string d = dir.path.string();
  const std::string cmd = fmt::format(
      "( {} run --suite {}/suite.toml --no-ceilings --check --out {} > {}/stdout 2> {}/stderr; "
      "echo $? > {}/rc ) & "
      "for i in $(seq 1 600); do "
      "  if grep -q '\"path\":\"each-node\"' {}/.scalebench-*/stream-0.jsonl 2>/dev/null; "
      "then break; fi; sleep 0.1; done; "
      "sleep 0.5; pkill -9 -n -f 'scalebench-rank --plan {}/' ; wait",
      SB_LAUNCHER_EXE, d, out.string(), d, d, d, d, d);
  run(cmd);
  std::ifstream rc_in(dir.path / "rc");
  int rc = -1;
  rc_in >> rc;
  EXPECT_EQ(rc, 1) << slurp(dir.path / "stderr");
  const json model = sb::results::read_report(out.string());
  ASSERT_EQ(model.at("cases").size(), 3u) << model.at("cases").dump();
  EXPECT_EQ(model["cases"][0].at("status"), "ok");
  const json& node = model["cases"][1];
  EXPECT_EQ(node.at("status"), "failed") << node.dump();
  EXPECT_EQ(node.at("device_id"), sb::host_name());
  EXPECT_EQ(node.at("planned_id").get<std::string>().rfind("subset-mean/each-node/", 0), 0u);
  EXPECT_EQ(model["cases"][2].at("status"), "ok") << "the next case runs in a fresh job";
  EXPECT_GE(model.at("attrs").at("jobs").get<int>(), 2);
  ASSERT_EQ(model.at("verdicts").size(), 1u);
  EXPECT_EQ(model["verdicts"][0].at("verdict"), "failed");
  EXPECT_NE(slurp(dir.path / "stdout").find("failed    node " + sb::host_name()), std::string::npos)
      << slurp(dir.path / "stdout");
}

// CPU energy per answer (issue #50): from RAPL's package counters where readable (a powercap
// tree whose counters a thread of this test advances, as the kernel's would), "unavailable"
// with the reason where not (this machine has no RAPL domain, or one the test cannot know).
TEST(AcceptanceMpi, CpuEnergyIsRecordedFromRaplAndUnavailableWithoutIt) {
  TempDir dir;
  const fs::path tree = dir.path / "powercap";
  fs::create_directories(tree / "intel-rapl:0");
  std::ofstream(tree / "intel-rapl:0" / "name") << "package-0\n";
  std::ofstream(tree / "intel-rapl:0" / "max_energy_range_uj") << "262143328850\n";
  std::ofstream(tree / "intel-rapl:0" / "energy_uj") << "1000\n";
  std::atomic<bool> stop{false};
  std::thread counter([&] {
    // 100 W: 100 uJ per microsecond, written whole (a rename) so that no reader sees half.
    const auto t0 = std::chrono::steady_clock::now();
    while (!stop) {
      const auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                          std::chrono::steady_clock::now() - t0)
                          .count();
      std::ofstream(tree / "intel-rapl:0" / "energy_uj.tmp") << 1000 + 100 * us << "\n";
      fs::rename(tree / "intel-rapl:0" / "energy_uj.tmp", tree / "intel-rapl:0" / "energy_uj");
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  const fs::path out = dir.path / "energy.h5";
  // Forty repeats: a thread's counter on a loaded machine may stall through a short one, and a
  // counter that moved in fewer than 90% of the repeats still counts once it moved 20 times
  // (case_energy.cpp).
  const int rc = run(fmt::format(
      "SCALEBENCH_POWERCAP_DIR={} {} run --preset tiny --workloads subset-mean --repeats 40 "
      "--no-ceilings --paths cpu1,each-node --out {} > {}/stdout 2> {}/stderr",
      tree.string(), SB_LAUNCHER_EXE, out.string(), dir.path.string(), dir.path.string()));
  stop = true;
  counter.join();
  ASSERT_EQ(rc, 0) << slurp(dir.path / "stderr");
  const json model = sb::results::read_report(out.string());
  for (const auto& c : model["cases"]) {
    ASSERT_TRUE(c.contains("energy")) << c["id"];
    const json& e = c["energy"];
    EXPECT_EQ(e["source"], "rapl");
    ASSERT_TRUE(e["available"].get<bool>()) << e.dump();
    EXPECT_EQ(e["devices"], 1) << "a node's packages count once";
    EXPECT_GT(e["joules_per_repeat"].get<double>(), 0) << e.dump();
    // The fake package draws 100 W while the repeats run (the writer's own pauses aside).
    EXPECT_GT(e["power_w"].get<double>(), 10) << e.dump();
    EXPECT_LT(e["power_w"].get<double>(), 1000) << e.dump();
  }
  const std::string table = slurp(dir.path / "stdout");
  EXPECT_NE(table.find("work/J"), std::string::npos) << table;

  // This machine's own /sys/class/powercap: recorded where readable, else said why.
  const fs::path plain = dir.path / "plain.h5";
  ASSERT_EQ(run(launcher("--paths cpu1 --out " + plain.string(), dir.path)), 0)
      << slurp(dir.path / "stderr");
  const json e = sb::results::read_report(plain.string())["cases"][0]["energy"];
  EXPECT_EQ(e["source"], "rapl");
  if (!e["available"].get<bool>()) {
    EXPECT_FALSE(e["why"].get<std::string>().empty()) << e.dump();
    EXPECT_NE(slurp(dir.path / "stdout").find("energy unavailable: "), std::string::npos)
        << slurp(dir.path / "stdout");
  }
}

TEST(AcceptanceMpi, TelemetryCanBeTurnedOffAndThrottledRepeatsKept) {
  TempDir dir;
  const fs::path out = dir.path / "off.h5";
  ASSERT_EQ(run(launcher("--paths cpu1 --keep-throttled --out " + out.string(), dir.path,
                         "SCALEBENCH_TELEMETRY=0")),
            0)
      << slurp(dir.path / "stderr");
  const json model = sb::results::read_report(out.string());
  ASSERT_EQ(model["cases"].size(), 1u);
  EXPECT_FALSE(model["cases"][0].contains("telemetry"));
  EXPECT_FALSE(model["cases"][0].contains("interference"));
  EXPECT_EQ(model["attrs"]["SCALEBENCH_TELEMETRY"], "0");
}

}  // namespace
