// comms through the real runtime (scalebench-rank under real mpiexec: scheduler and CPU
// workers): the sweep and the pair matrix run and validate, their figures land in the case's
// metrics and survive the HDF5 report; a case with one worker is skipped with the reason; the
// launcher plans comms on the multi paths only.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "../support/mpi_run.hpp"
#include "../support/scratch_dir.hpp"
#include "comms/comms.hpp"
#include "scalebench/job_plan.hpp"
#include "scalebench/report.hpp"
#include "scalebench/verdicts.hpp"

namespace fs = std::filesystem;

namespace {

using sb::test_support::slurp;
using sb::test_support::TempDir;

using sb::test_support::mpiexec;
using sb::test_support::run;

sb::CaseSpec comms_case(int index, const std::string& op, sb::ExecPath path) {
  const sb::Workload w = sb::comms_workload();
  sb::Params p = w.preset("tiny");
  p.set("op", op);
  sb::CaseSpec s;
  s.index = index;
  s.workload = "comms";
  s.path = path;
  s.params = w.expand(p).at(0);
  s.repeats = 2;
  s.warmup = 1;
  s.id = fmt::format("comms/{}/{}", sb::to_string(path), s.params.canonical());
  return s;
}

/// Runs scalebench-rank with `ranks` ranks (a scheduler and ranks - 1 CPU workers) on a plan;
/// returns the stream's case records (and its start record in `start`, when given).
std::vector<nlohmann::json> run_plan(const std::vector<sb::CaseSpec>& cases, int ranks,
                                     const fs::path& dir, nlohmann::json* start = nullptr) {
  sb::JobPlan plan;
  plan.cases = cases;
  plan.stream_path = (dir / fmt::format("stream-{}.jsonl", ranks)).string();
  plan.measure_ceilings = false;
  const fs::path plan_path = dir / fmt::format("plan-{}.json", ranks);
  std::ofstream(plan_path) << plan.to_json().dump();
  const std::string cmd = fmt::format(
      "env -u SCALEBENCH_PLACEMENT OMP_NUM_THREADS=1 {} -n {} {} --plan {} > {}/log-{} 2>&1",
      mpiexec(), ranks, SB_RANK_EXE, plan_path.string(), dir.string(), ranks);
  EXPECT_EQ(run(cmd), 0) << cmd << "\n" << slurp(dir / fmt::format("log-{}", ranks));
  std::vector<nlohmann::json> out;
  std::ifstream in(plan.stream_path);
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    if (j.at("type") == "case") out.push_back(j);
    if (j.at("type") == "start" && start != nullptr) *start = j;
  }
  return out;
}

TEST(CommsRuntime, SweepAndPairMatrixRunOnCpuWorkersAndSurviveTheReport) {
  TempDir dir;
  const std::vector<sb::CaseSpec> cases = {
      comms_case(0, "all-reduce", sb::ExecPath::multi_cpu),
      comms_case(1, "all-to-all", sb::ExecPath::multi_cpu),
      comms_case(2, "pairs", sb::ExecPath::multi_cpu),
      comms_case(3, "broadcast", sb::ExecPath::single_cpu)};  // a hand-written plan
  const auto recs = run_plan(cases, 4, dir.path);
  ASSERT_EQ(recs.size(), 4u);
  for (int k = 0; k < 3; ++k) {
    const auto& r = recs[static_cast<std::size_t>(k)];
    ASSERT_EQ(r.at("status"), "ok") << r.dump();
    EXPECT_EQ(r.at("workers"), 3);
    for (const auto& v : r.at("validation")) EXPECT_TRUE(v.at("pass").get<bool>()) << v.dump();
    EXPECT_GT(r.at("metrics").at("throughput").get<double>(), 0.0);
  }
  EXPECT_EQ(recs[0].at("metrics").at("throughput_unit"), "B/s busbw");
  EXPECT_FALSE(recs[0].at("metrics").at("sizes").empty());
  EXPECT_EQ(recs[2].at("metrics").at("links").size(), 6u);  // 3 workers: 6 ordered pairs
  EXPECT_EQ(recs[3].at("status"), "skipped");
  EXPECT_EQ(recs[3].at("message"), "comms does not run on single-cpu");

  // The report keeps the per-size and per-link tables; the summary takes the stated headline.
  nlohmann::json model = {{"attrs", {{"schema_version", 1}, {"preset", "tiny"}, {"status", "ok"}}},
                          {"system", nlohmann::json::object()},
                          {"cases", recs}};
  const std::string path = (dir.path / "comms.h5").string();
  sb::results::write_report(model, path);
  const auto back = sb::results::read_report(path);
  const auto& c0 = back.at("cases")[0];
  ASSERT_EQ(c0.at("metrics").at("sizes").size(), recs[0].at("metrics").at("sizes").size());
  EXPECT_EQ(c0.at("metrics").at("sizes")[0].at("bytes"),
            recs[0].at("metrics").at("sizes")[0].at("bytes"));
  EXPECT_EQ(back.at("cases")[2].at("metrics").at("links").size(), 6u);
  const auto summary = sb::results::summarize(back);
  EXPECT_DOUBLE_EQ(summary[0].at("throughput").get<double>(),
                   c0.at("metrics").at("throughput").get<double>());
  EXPECT_EQ(summary[0].at("throughput_unit"), "B/s busbw");
  const std::string table = sb::results::format_report(back, "table");
  EXPECT_NE(table.find("B/s busbw"), std::string::npos) << table;
  // Every measured link is a row of the verdict table (shared-memory links of one node).
  const auto verdicts = sb::results::judge_devices(back, sb::results::ReferenceSet{});
  std::size_t links = 0;
  for (const auto& v : verdicts) {
    if (v.at("link") == "") continue;
    ++links;
    EXPECT_EQ(v.at("unit"), "B/s");
    EXPECT_GT(v.at("value").get<double>(), 0.0);
    EXPECT_EQ(v.at("model"), "shared memory");
    EXPECT_EQ(v.at("device"), -1) << "CPU workers";
    EXPECT_NE(v.at("reason").get<std::string>().find(v.at("link").get<std::string>() + ": "),
              std::string::npos);
  }
  EXPECT_EQ(links, 6u);
}

sb::CaseSpec subset_mean_case(int index, sb::ExecPath path) {
  sb::CaseSpec s;
  s.index = index;
  s.workload = "subset-mean";
  s.path = path;
  s.params.set("n", "2000");
  s.params.set("chunk", "500");
  s.params.set("seed", "7");
  s.params.set("mu", "10");
  s.params.set("sigma", "1");
  s.repeats = 2;
  s.warmup = 1;
  s.id = fmt::format("subset-mean/{}/{}", sb::to_string(path), s.params.canonical());
  return s;
}

TEST(CommsRuntime, TheHtmlPageDrawsTheSweepsAndThePairMatrixInABrowser) {
  std::string browser;
  for (const char* b : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
    if (access(b, X_OK) == 0) browser = b;
  if (browser.empty() || std::string(SB_PYTHON3).empty()) GTEST_SKIP() << "needs chromium";
  TempDir dir;
  // subset-mean beside comms: the page's other charts are drawn too, as the check wants them.
  nlohmann::json start;
  const auto recs = run_plan(
      {subset_mean_case(0, sb::ExecPath::single_cpu), subset_mean_case(1, sb::ExecPath::multi_cpu),
       comms_case(2, "all-reduce", sb::ExecPath::multi_cpu),
       comms_case(3, "all-gather", sb::ExecPath::multi_cpu),
       comms_case(4, "pairs", sb::ExecPath::multi_cpu)},
      4, dir.path, &start);
  ASSERT_EQ(recs.size(), 5u);
  nlohmann::json model = {{"attrs", {{"schema_version", 1}, {"preset", "tiny"}, {"status", "ok"}}},
                          {"system", start.at("system")},
                          {"startup", start.at("startup")},
                          {"cases", recs}};
  const fs::path h5 = dir.path / "page.h5", html = dir.path / "page.html";
  sb::results::write_report(model, h5.string());
  ASSERT_EQ(run(fmt::format("{} report {} --format html --out {}", SB_LAUNCHER_EXE, h5.string(),
                            html.string())),
            0);
  const std::string page = slurp(html);
  EXPECT_NE(page.find("data-chart=\"busbw\""), std::string::npos);
  EXPECT_NE(page.find("data-chart=\"pair-matrix\""), std::string::npos);
  const fs::path work = dir.path / "browser";
  fs::create_directories(work);
  const std::string cmd = fmt::format(
      "{} {}/tests/results/check_html_render.py {} {} {} "
      "busbw,pair-matrix > {}/check.log 2>&1",
      SB_PYTHON3, SB_SOURCE_DIR, browser, html.string(), work.string(), dir.path.string());
  EXPECT_EQ(run(cmd), 0) << slurp(dir.path / "check.log");
}

TEST(CommsRuntime, OneWorkerIsSkippedWithTheReason) {
  TempDir dir;
  const auto recs = run_plan({comms_case(0, "all-reduce", sb::ExecPath::multi_cpu)}, 2, dir.path);
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].at("status"), "skipped");
  EXPECT_NE(recs[0].at("message").get<std::string>().find("comms needs at least 2 workers"),
            std::string::npos)
      << recs[0].at("message");
}

TEST(CommsRuntime, TheLauncherPlansCommsOnTheMultiPathsOnly) {
  TempDir dir;
  const std::string base =
      fmt::format("{} run --preset tiny --workloads comms --no-ceilings ", SB_LAUNCHER_EXE);
  // Nothing it can run: one line and exit 2 before any job starts.
  EXPECT_EQ(run(base + "--paths cpu1,gpu1 > " + (dir.path / "o1").string() + " 2> " +
                (dir.path / "e1").string()),
            2);
  EXPECT_NE(slurp(dir.path / "e1").find("comms runs on multi-cpu, multi-gpu, each-node only"),
            std::string::npos)
      << slurp(dir.path / "e1");
  // One node here: one CPU worker, so every multi-cpu case is skipped, with the reason.
  const fs::path out = dir.path / "one.h5";
  EXPECT_EQ(run(base + "--paths cpuN --repeats 1 --out " + out.string() + " > " +
                (dir.path / "o2").string() + " 2>&1"),
            0)
      << slurp(dir.path / "o2");
  const auto model = sb::results::read_report(out.string());
  ASSERT_EQ(model.at("cases").size(), 6u);
  for (const auto& c : model.at("cases")) {
    EXPECT_EQ(c.at("status"), "skipped");
    EXPECT_NE(c.at("message").get<std::string>().find("run on 2 nodes or more"), std::string::npos)
        << c.at("message");
  }
}

}  // namespace
