// The runtime end to end: real mpiexec, real scheduler and workers, real reports.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "../support/mpi_run.hpp"
#include "../support/scratch_dir.hpp"
#include "scalebench/job_plan.hpp"
#include "scalebench/report.hpp"

namespace fs = std::filesystem;

namespace {

using sb::test_support::slurp;
using sb::test_support::TempDir;

using sb::test_support::mpiexec;
using sb::test_support::run;

/// A case of two timed repeats after one warm-up; `id_params` as its id shows them.
sb::CaseSpec make_case(int index, const std::string& workload, sb::ExecPath path,
                       const std::vector<std::pair<std::string, std::string>>& params,
                       const std::string& id_params) {
  sb::CaseSpec s;
  s.index = index;
  s.workload = workload;
  s.path = path;
  for (const auto& [k, v] : params) s.params.set(k, v);
  s.repeats = 2;
  s.warmup = 1;
  s.id = fmt::format("{}/{}/{}", workload, sb::to_string(path), id_params);
  return s;
}

sb::CaseSpec subset_mean_case(int index, sb::ExecPath path, int n, int chunk) {
  return make_case(index, "subset-mean", path,
                   {{"n", std::to_string(n)},
                    {"chunk", std::to_string(chunk)},
                    {"seed", "7"},
                    {"mu", "10"},
                    {"sigma", "1"}},
                   fmt::format("n={},chunk={}", n, chunk));
}

sb::CaseSpec svd_case(int index, sb::ExecPath path, int m, int n, int chunk) {
  return make_case(index, "svd", path,
                   {{"m", std::to_string(m)},
                    {"n", std::to_string(n)},
                    {"chunk", std::to_string(chunk)},
                    {"seed", "42"},
                    {"condition", "1"}},
                   fmt::format("chunk={},m={},n={}", chunk, m, n));
}

/// Runs scalebench-rank with `ranks` ranks on a plan; returns the stream's case records.
/// `env`: variables for the ranks ("NAME=value ...").
std::vector<nlohmann::json> run_plan(const std::vector<sb::CaseSpec>& cases, int ranks,
                                     const fs::path& dir, const std::string& env = "") {
  sb::JobPlan plan;
  plan.cases = cases;
  plan.stream_path = (dir / fmt::format("stream-{}.jsonl", ranks)).string();
  plan.measure_ceilings = false;
  const fs::path plan_path = dir / fmt::format("plan-{}.json", ranks);
  std::ofstream(plan_path) << plan.to_json().dump();
  const std::string cmd = fmt::format(
      "env -u SCALEBENCH_PLACEMENT OMP_NUM_THREADS=1 {} {} -n {} {} --plan {} > {}/log-{} 2>&1",
      env, mpiexec(), ranks, SB_RANK_EXE, plan_path.string(), dir.string(), ranks);
  EXPECT_EQ(run(cmd), 0) << cmd;
  std::vector<nlohmann::json> out;
  std::ifstream in(plan.stream_path);
  std::string line;
  bool started = false, ended = false;
  while (std::getline(in, line)) {
    const auto j = nlohmann::json::parse(line);
    if (j.at("type") == "start") started = true;
    if (j.at("type") == "end") ended = j.at("status") == "ok";
    if (j.at("type") == "case") out.push_back(j);
  }
  EXPECT_TRUE(started);
  EXPECT_TRUE(ended);
  return out;
}

TEST(RuntimeMpi, DispatchIsCompleteAndAnswersDoNotDependOnWorkerCount) {
  TempDir dir;
  // 9 tasks (uneven over 2 or 3 workers) and 1 task (more workers than tasks).
  const std::vector<sb::CaseSpec> cases = {subset_mean_case(0, sb::ExecPath::multi_cpu, 12, 4),
                                           subset_mean_case(1, sb::ExecPath::multi_cpu, 4, 4),
                                           subset_mean_case(2, sb::ExecPath::single_cpu, 24, 4)};
  std::map<std::string, double> answer;
  for (const int ranks : {2, 3, 4}) {
    // Every worker takes part, also those without a task (the runtime's dispatch is tested).
    const auto recs = run_plan(cases, ranks, dir.path, "SCALEBENCH_PARTICIPANTS=all");
    ASSERT_EQ(recs.size(), cases.size()) << "ranks " << ranks;
    for (const auto& r : recs) {
      ASSERT_EQ(r.at("status"), "ok") << r.dump();
      const int expected_workers = r.at("path") == "multi-cpu" ? ranks - 1 : 1;
      EXPECT_EQ(r.at("workers").get<int>(), expected_workers);
      // Every task ran exactly once in every timed repeat.
      const auto& ev = r.at("task_events");
      const int n = std::stoi(r.at("params").at("n").get<std::string>());
      const int chunk = std::stoi(r.at("params").at("chunk").get<std::string>());
      const int tasks = (n / chunk) * (n / chunk);
      std::map<int, std::multiset<long long>> per_repeat;
      for (std::size_t i = 0; i < ev.at("task").size(); ++i) {
        per_repeat[ev.at("repeat")[i].get<int>()].insert(ev.at("task")[i].get<long long>());
        EXPECT_LT(ev.at("worker")[i].get<int>(), expected_workers);
        EXPECT_LE(ev.at("start")[i].get<double>(), ev.at("end")[i].get<double>());
      }
      ASSERT_EQ(per_repeat.size(), 2u);
      for (const auto& [rep, ids] : per_repeat) {
        ASSERT_EQ(ids.size(), static_cast<std::size_t>(tasks));
        EXPECT_EQ(std::set<long long>(ids.begin(), ids.end()).size(), ids.size());
      }
      ASSERT_EQ(r.at("repeats").size(), 2u);
      // Folded in task order: bit-identical whatever the worker count.
      const double a = r.at("result").at("answer").get<double>();
      const auto key = r.at("id").get<std::string>();
      if (answer.count(key)) {
        EXPECT_EQ(answer[key], a) << key;
      } else {
        answer[key] = a;
      }
    }
  }
}

// Fewer workers for small problems (participant_plan.hpp): a case with fewer tasks than
// workers runs on the first ones, over a communicator of its own (svd's R-factor tree is
// collective), validated against single-cpu; the record says how many of how many and why.
TEST(RuntimeMpi, SmallCasesRunOnFewerWorkersAndSaySo) {
  TempDir dir;
  const std::vector<sb::CaseSpec> cases = {svd_case(0, sb::ExecPath::single_cpu, 400, 20, 200),
                                           svd_case(1, sb::ExecPath::multi_cpu, 400, 20, 200),
                                           subset_mean_case(2, sb::ExecPath::multi_cpu, 4, 4),
                                           svd_case(3, sb::ExecPath::multi_cpu, 600, 20, 200),
                                           svd_case(4, sb::ExecPath::multi_cpu, 400, 20, 100)};
  const auto recs = run_plan(cases, 4, dir.path);  // 3 workers
  ASSERT_EQ(recs.size(), cases.size());
  const std::vector<int> expected = {1, 2, 1, 3, 3};
  for (std::size_t i = 0; i < recs.size(); ++i) {
    const auto& r = recs[i];
    ASSERT_EQ(r.at("status"), "ok") << r.dump();
    EXPECT_EQ(r.at("workers").get<int>(), expected[i]) << r.at("id");
    const auto& m = r.at("metrics");
    const bool fewer = r.at("path") == "multi-cpu" && expected[i] < 3;
    EXPECT_EQ(m.contains("workers_available"), fewer) << r.at("id");
    if (!fewer) continue;
    EXPECT_EQ(m.at("workers_available").get<int>(), 3);
    EXPECT_NE(m.at("workers_plan").get<std::string>().find("would only wait"), std::string::npos);
    const std::string note = m.at("notes").back().get<std::string>();
    EXPECT_EQ(note.rfind(fmt::format("fewer workers ({} of 3 workers): ", expected[i]), 0), 0u)
        << note;
    for (const auto& w : r.at("task_events").at("worker")) EXPECT_LT(w.get<int>(), expected[i]);
  }
  // The 2-worker svd was cross-checked against single-cpu by the run itself.
  bool crossed = false;
  for (const auto& c : recs[1].at("validation"))
    if (c.at("name").get<std::string>().rfind("cross:", 0) == 0) crossed = c.at("pass").get<bool>();
  EXPECT_TRUE(crossed) << recs[1].at("validation").dump();
  // SCALEBENCH_PARTICIPANTS=all: every worker.
  fs::create_directories(dir.path / "all");
  const auto all = run_plan(cases, 4, dir.path / "all", "SCALEBENCH_PARTICIPANTS=all");
  ASSERT_EQ(all.size(), cases.size());
  for (std::size_t i = 1; i < all.size(); ++i) {
    ASSERT_EQ(all[i].at("status"), "ok") << all[i].dump();
    EXPECT_EQ(all[i].at("workers").get<int>(), 3);
    EXPECT_FALSE(all[i].at("metrics").contains("workers_available"));
  }
}

TEST(RuntimeMpi, LauncherRunsTinySuiteAndWritesAValidReport) {
  TempDir dir;
  const fs::path out = dir.path / "tiny.h5";
  const std::string cmd = fmt::format(
      "{} run --preset tiny --workloads subset-mean --paths cpu1,cpuN,gpu1 --repeats 3 --warmup 1 "
      "--out {} > {}/stdout 2> {}/stderr",
      SB_LAUNCHER_EXE, out.string(), dir.path.string(), dir.path.string());
  ASSERT_EQ(run(cmd), 0) << cmd;
  const auto model = sb::results::read_report(out.string());
  ASSERT_EQ(model.at("cases").size(), 3u);
  const auto& c = model.at("cases");
  EXPECT_EQ(c[0].at("status"), "ok");
  EXPECT_EQ(c[1].at("status"), "ok");
  // No GPU on CI: recorded as skipped with the reason, never dropped.
  if (c[2].at("status") == "skipped") {
    EXPECT_FALSE(c[2].at("message").get<std::string>().empty());
  } else {
    EXPECT_EQ(c[2].at("status"), "ok");
  }
  EXPECT_EQ(c[0].at("result").at("answer"), c[1].at("result").at("answer"));
  // --warmup 1 is the least: the first warm-up repeat, then more until those after it took
  // 50 ms (repeat_rule.hpp); the timed repeats are the ones asked for.
  for (int i = 0; i < 2; ++i) {
    EXPECT_GE(c[i].at("warmup").get<int>(), 2);
    EXPECT_EQ(c[i].at("repeats").size(), 3u);
  }
  // The runtime's own cost: each repeat's time outside the busiest worker's phases, and the
  // part of it outside every worker (messages), with the case's median of the first.
  for (int i = 0; i < 2; ++i) {
    for (const auto& r : c[i].at("repeats")) {
      const double total = r.at("total").get<double>();
      const double runtime = r.at("runtime").get<double>();
      EXPECT_GE(runtime, 0.0);
      EXPECT_LE(runtime, total);
      EXPECT_GE(r.at("messages").get<double>(), 0.0);
      EXPECT_LE(r.at("messages").get<double>(), runtime + 1e-12);
    }
    EXPECT_GE(c[i].at("metrics").at("median_runtime_s").get<double>(), 0.0);
  }
  EXPECT_EQ(model.at("attrs").at("status"), "ok");
  EXPECT_EQ(model.at("attrs").at("scheduler"), "local");
  // No work folder left behind.
  for (const auto& e : fs::directory_iterator(dir.path))
    EXPECT_EQ(e.path().filename().string().rfind(".scalebench-", 0), std::string::npos);
}

TEST(RuntimeMpi, AutoRepeatsStopByTheRuleAndSayWhy) {
  TempDir dir;
  const fs::path out = dir.path / "auto.h5";
  // A loose target stops at the minimum; an impossible one at --max-repeats; a tiny time limit
  // right after the minimum. Each case records why.
  const auto run_auto = [&](const std::string& name, const std::string& flags) {
    const std::string cmd = fmt::format(
        "{} run --preset tiny --workloads subset-mean --paths cpu1 --warmup 0 --no-ceilings "
        "--repeats auto {} --out {}/{}.h5 > {}/{}.out 2>&1",
        SB_LAUNCHER_EXE, flags, dir.path.string(), name, dir.path.string(), name);
    EXPECT_EQ(run(cmd), 0) << cmd << "\n" << slurp(dir.path / (name + ".out"));
    const auto model = sb::results::read_report((dir.path / (name + ".h5")).string());
    return model.at("cases").at(0);
  };
  const auto loose = run_auto("loose", "--min-repeats 3 --target-spread 0.99");
  EXPECT_EQ(loose.at("warmup"), 0) << "--warmup 0: none";
  EXPECT_EQ(loose.at("repeat_stop").at("reason"), "spread");
  EXPECT_EQ(loose.at("repeat_stop").at("repeats"), 3);
  EXPECT_EQ(loose.at("repeats").size(), 3u);
  EXPECT_LE(loose.at("repeat_stop").at("spread").get<double>(), 0.99);

  const auto capped = run_auto("capped", "--min-repeats 2 --max-repeats 7 --target-spread 1e-9");
  EXPECT_EQ(capped.at("repeat_stop").at("reason"), "max-repeats");
  EXPECT_EQ(capped.at("repeats").size(), 7u);
  EXPECT_EQ(capped.at("repeat_stop").at("max_repeats"), 7);

  const auto timed = run_auto("timed", "--min-repeats 4 --max-time 1e-6 --target-spread 1e-9");
  EXPECT_EQ(timed.at("repeat_stop").at("reason"), "max-time");
  EXPECT_EQ(timed.at("repeats").size(), 4u);
  EXPECT_NE(slurp(dir.path / "timed.out").find("stopped by max-time"), std::string::npos);

  // A fixed count says so; the limits need --repeats auto (exit 2, nothing started).
  const std::string fixed = fmt::format(
      "{} run --preset tiny --workloads subset-mean --paths cpu1 --repeats 2 --max-time 5 --out "
      "{}/x.h5 > {}/x.out 2>&1",
      SB_LAUNCHER_EXE, dir.path.string(), dir.path.string());
  EXPECT_EQ(run(fixed), 2);
  EXPECT_NE(slurp(dir.path / "x.out").find("apply to --repeats auto only"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir.path / "x.h5"));
}

TEST(RuntimeMpi, KilledWorkerLeavesValidReportAndFailedCase) {
  TempDir dir;
  const fs::path out = dir.path / "killed.h5";
  // A long case (many repeats of the small preset) on the single-cpu path; kill the worker rank
  // once the case runs (`waited` says after how many seconds it was seen running, "none" if it
  // never was within 120 s), then check the report.
  const std::string cmd = fmt::format(
      "( {} run --preset small --workloads subset-mean --paths cpu1 --repeats 1000 --warmup 0 "
      "--no-ceilings --out {} > {}/stdout 2> {}/stderr; echo $? > {}/rc ) & "
      "t0=$(date +%s); echo none > {}/waited; "
      "for i in $(seq 1 1200); do "
      "  if grep -q progress {}/.scalebench-*/stream-0.jsonl 2>/dev/null; then "
      "    echo $(( $(date +%s) - t0 )) > {}/waited; break; fi; sleep 0.1; done; "
      "sleep 0.5; pkill -9 -n -f 'scalebench-rank --plan {}/' ; wait",
      SB_LAUNCHER_EXE, out.string(), dir.path.string(), dir.path.string(), dir.path.string(),
      dir.path.string(), dir.path.string(), dir.path.string(), dir.path.string());
  run(cmd);
  std::ifstream rc_in(dir.path / "rc");
  int rc = -1;
  rc_in >> rc;
  const std::string seen = slurp(dir.path / "waited");
  // A start-up this slow is not this test's fault to find, but it is worth a line in the log.
  if (seen != "none\n" && std::atoi(seen.c_str()) > 10)
    std::cout << "note: the case was seen running only after " << seen;
  EXPECT_NE(seen, "none\n") << "the case was not seen running within 120 s; stderr:\n"
                            << slurp(dir.path / "stderr");
  EXPECT_EQ(rc, 1) << "seen running after " << seen << " s; stderr:\n"
                   << slurp(dir.path / "stderr");
  const auto model = sb::results::read_report(out.string());
  ASSERT_EQ(model.at("cases").size(), 1u);
  const auto& c = model.at("cases")[0];
  EXPECT_EQ(c.at("status"), "failed");
  EXPECT_NE(c.at("message").get<std::string>().find("job"), std::string::npos) << c.at("message");
}

TEST(RuntimeMpi, TimeLimitWarningFinishesTheRunningCaseAndSkipsTheRest) {
  TempDir dir;
  const fs::path out = dir.path / "usr1.h5";
  const std::string cmd = fmt::format(
      "{} run --preset small --workloads subset-mean --paths cpu1,cpuN --repeats 6 --warmup 0 "
      "--no-ceilings --out {} > {}/stdout 2> {}/stderr & pid=$!; "
      "for i in $(seq 1 300); do "
      "  if grep -q progress {}/.scalebench-*/stream-0.jsonl 2>/dev/null; then break; fi; sleep "
      "0.1; done; "
      "kill -USR1 $pid; wait $pid; echo $? > {}/rc",
      SB_LAUNCHER_EXE, out.string(), dir.path.string(), dir.path.string(), dir.path.string(),
      dir.path.string());
  run(cmd);
  std::ifstream rc_in(dir.path / "rc");
  int rc = -1;
  rc_in >> rc;
  // A graceful stop at a time limit: every finished case is complete, so the batch system
  // records the job as completed; the message says how to run the rest.
  EXPECT_EQ(rc, 0);
  const std::string err = slurp(dir.path / "stderr");
  EXPECT_NE(err.find("--resume " + out.string()), std::string::npos) << err;
  const auto model = sb::results::read_report(out.string());
  ASSERT_EQ(model.at("cases").size(), 2u);
  EXPECT_EQ(model.at("cases")[0].at("status"), "ok");  // the running case finished
  EXPECT_EQ(model.at("cases")[1].at("status"), "skipped");
  EXPECT_NE(model.at("cases")[1].at("message").get<std::string>().find("SIGUSR1"),
            std::string::npos);
  EXPECT_EQ(model.at("attrs").at("status"), "stopped by SIGUSR1");
}

}  // namespace
