// A/B runs (`scalebench run --baseline ...`, docs/ci.md) end to end through the real binaries
// and mpiexec: two sides taking turns on the same workers (the same build with an environment
// side, two plugin builds, a suite file, per-side parameters), the report's /ab section,
// `compare` on it, bad input refused before any job, and a side whose job is killed mid-run.
// No timing is asserted: the verdicts' rates are tests/gate/ab_trials.sh's business.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "../support/mpi_run.hpp"
#include "../support/scratch_dir.hpp"
#include "scalebench/file_sha256.hpp"
#include "scalebench/report.hpp"

namespace fs = std::filesystem;

namespace {

using nlohmann::json;
using sb::test_support::run;
using sb::test_support::slurp;
using sb::test_support::TempDir;

/// `scalebench ARGS` with stdout and stderr in DIR/stdout, DIR/stderr: its exit code.
int scalebench(const fs::path& dir, const std::string& args) {
  return run(fmt::format("{} {} > {}/stdout 2> {}/stderr", SB_LAUNCHER_EXE, args, dir.string(),
                         dir.string()));
}

std::string rank_exe() {
  return fs::canonical(SB_RANK_EXE).string();
}

/// The turns of case `index`, in order.
std::vector<json> turns_of(const json& ab, int index) {
  std::vector<json> out;
  for (const auto& t : ab.at("turns"))
    if (t.at("index") == index) out.push_back(t);
  return out;
}

/// Checks the interleaving of one case: a warm-up turn per side, then rounds holding one turn
/// of each side; every timed repeat of both sides' records names a turn of its side.
void check_turns(const json& model, int index, int repeats, int block) {
  const json& ab = model.at("ab");
  const auto turns = turns_of(ab, index);
  ASSERT_GE(turns.size(), 4u);
  std::set<std::string> warm{turns[0].at("side"), turns[1].at("side")};
  EXPECT_EQ(warm, (std::set<std::string>{"baseline", "current"}));
  EXPECT_EQ(turns[0].at("repeats"), 0);
  EXPECT_EQ(turns[1].at("repeats"), 0);
  EXPECT_EQ(turns[0].at("round"), -1);
  std::map<std::string, std::set<int>> turn_of_side;
  std::map<std::string, int> timed;
  for (std::size_t i = 2; i < turns.size(); i += 2) {
    ASSERT_LT(i + 1, turns.size());
    EXPECT_NE(turns[i].at("side"), turns[i + 1].at("side")) << "a round holds both sides";
    for (const auto* t : {&turns[i], &turns[i + 1]}) {
      EXPECT_LE(t->at("repeats").get<int>(), block);
      EXPECT_EQ(t->at("round"), static_cast<int>((i - 2) / 2));
      EXPECT_EQ(t->at("first_repeat"), timed[t->at("side")]);
      timed[t->at("side")] += t->at("repeats").get<int>();
      turn_of_side[t->at("side")].insert(t->at("turn").get<int>());
      EXPECT_GE(t->at("wall_s").get<double>(), 0.0);
    }
  }
  EXPECT_EQ(timed["baseline"], repeats);
  EXPECT_EQ(timed["current"], repeats);
  const json& cur = model.at("cases")[static_cast<std::size_t>(index)];
  const json& base = ab.at("baseline").at("cases")[static_cast<std::size_t>(index)];
  for (const auto& [rec, side] : {std::pair{&cur, "current"}, std::pair{&base, "baseline"}}) {
    ASSERT_EQ(rec->at("repeats").size(), static_cast<std::size_t>(repeats)) << side;
    for (const auto& r : rec->at("repeats"))
      EXPECT_EQ(turn_of_side[side].count(r.at("turn").get<int>()), 1u) << side << " " << r;
    EXPECT_EQ(rec->at("repeat_stop").at("reason"), "count") << side;
  }
}

TEST(AbRun, TheSameBuildTwiceWithAnEnvironmentSide) {
  TempDir dir;
  const fs::path out = dir.path / "ab.h5";
  const int rc = scalebench(
      dir.path,
      fmt::format(
          "run --baseline rank={} --baseline label=main --current env:OMP_WAIT_POLICY=passive "
          "--preset tiny --workloads subset-mean --paths cpu1,cpuN --repeats 6 "
          "--ab-block 2 --ab-seed 5 --no-ceilings --out {}",
          rank_exe(), out.string()));
  const std::string err = slurp(dir.path / "stderr");
  ASSERT_TRUE(rc == 0 || rc == 1 || rc == 5) << rc << "\n" << err;
  const json model = sb::results::read_report(out.string());
  ASSERT_TRUE(model.contains("ab")) << err;
  const json& ab = model.at("ab");
  EXPECT_EQ(ab.at("seed"), 5);
  EXPECT_EQ(ab.at("block"), 2);
  EXPECT_EQ(ab.at("protocol"), 1);
  ASSERT_EQ(ab.at("sides").size(), 2u);
  const json& b = ab.at("sides")[0];
  const json& c = ab.at("sides")[1];
  EXPECT_EQ(b.at("side"), "baseline");
  EXPECT_EQ(b.at("label"), "main");
  EXPECT_EQ(b.at("rank_program"), rank_exe());
  EXPECT_EQ(b.at("rank_sha256"), sb::detail::file_sha256(rank_exe()));
  EXPECT_EQ(b.at("git_sha").get<std::string>().empty(), false);
  EXPECT_EQ(c.at("side"), "current");
  EXPECT_EQ(c.at("env"), "OMP_WAIT_POLICY=passive");
  EXPECT_EQ(b.at("env"), "");
  ASSERT_EQ(model.at("cases").size(), 2u);
  ASSERT_EQ(ab.at("baseline").at("cases").size(), 2u);
  for (int i : {0, 1}) {
    EXPECT_EQ(model.at("cases")[i].at("status"), "ok");
    EXPECT_EQ(ab.at("baseline").at("cases")[i].at("status"), "ok");
    EXPECT_EQ(ab.at("baseline").at("cases")[i].at("id"), model.at("cases")[i].at("id"));
    check_turns(model, i, 6, 2);
  }
  EXPECT_FALSE(ab.at("baseline").at("system").empty());
  EXPECT_EQ(model.at("attrs").at("jobs"), 2);
  // The run ends with the gate's table; `compare` on the report says the same.
  const std::string run_out = slurp(dir.path / "stdout");
  EXPECT_NE(run_out.find("A/B: both sides in one job"), std::string::npos) << run_out;
  EXPECT_EQ(scalebench(dir.path, fmt::format("compare {}", out.string())), rc)
      << slurp(dir.path / "stderr");
  const std::string cmp = slurp(dir.path / "stdout");
  EXPECT_NE(cmp.find("baseline main: " + rank_exe()), std::string::npos) << cmp;
  EXPECT_NE(cmp.find("MDE"), std::string::npos) << cmp;
  // Nothing of the run is left behind: no work folder, no process.
  for (const auto& e : fs::directory_iterator(dir.path))
    EXPECT_EQ(e.path().filename().string().rfind(".scalebench-", 0), std::string::npos) << e.path();
}

TEST(AbRun, TwoBuildsOfAPlugin) {
  TempDir dir;
  const fs::path out = dir.path / "plugin.h5";
  const int rc = scalebench(
      dir.path, fmt::format("run --plugin {} --baseline plugin={} --workloads tiled-dgemm "
                            "--preset tiny --paths cpu1 --repeats 5 --no-ceilings --out {}",
                            SB_AB_DGEMM_10, SB_AB_DGEMM_0, out.string()));
  const std::string err = slurp(dir.path / "stderr");
  ASSERT_TRUE(rc == 0 || rc == 1 || rc == 5) << rc << "\n" << err;
  const json model = sb::results::read_report(out.string());
  const json& sides = model.at("ab").at("sides");
  EXPECT_EQ(sides[0].at("plugins"), fs::canonical(SB_AB_DGEMM_0).string());
  EXPECT_EQ(sides[1].at("plugins"), fs::canonical(SB_AB_DGEMM_10).string());
  EXPECT_EQ(sides[0].at("plugin_sha256"), sb::detail::file_sha256(SB_AB_DGEMM_0));
  EXPECT_EQ(sides[1].at("plugin_sha256"), sb::detail::file_sha256(SB_AB_DGEMM_10));
  EXPECT_NE(sides[0].at("plugin_sha256"), sides[1].at("plugin_sha256"));
  ASSERT_EQ(model.at("cases").size(), 1u);
  EXPECT_EQ(model.at("cases")[0].at("status"), "ok") << model.at("cases")[0].at("message");
  const json& base = model.at("ab").at("baseline").at("cases")[0];
  EXPECT_EQ(base.at("status"), "ok") << base.at("message");
  EXPECT_EQ(base.at("workload"), "tiled-dgemm");
  // Both builds compute the same C: their validations pass and their sums agree.
  EXPECT_EQ(base.at("result"), model.at("cases")[0].at("result"));
}

TEST(AbRun, SuiteFileAndSideParameters) {
  TempDir dir;
  const fs::path suite = dir.path / "ab.toml";
  std::ofstream(suite) << fmt::format(R"(preset = "tiny"
repeats = 5
workloads = ["subset-mean"]
paths = ["multi-cpu"]
[baseline]
rank = "{}"
label = "n=2000"
params = {{ "subset-mean.n" = 2000 }}
[current]
env = {{ OMP_WAIT_POLICY = "passive" }}
params = {{ "subset-mean.n" = 2500 }}
[ab]
block = 1
seed = 3
on_noisy = "pass"
)",
                                      rank_exe());
  const fs::path out = dir.path / "suite.h5";
  const int rc = scalebench(
      dir.path, fmt::format("run --suite {} --no-ceilings --out {}", suite.string(), out.string()));
  ASSERT_TRUE(rc == 0 || rc == 1) << rc << "\n" << slurp(dir.path / "stderr");
  const json model = sb::results::read_report(out.string());
  const json& ab = model.at("ab");
  EXPECT_EQ(ab.at("seed"), 3);
  EXPECT_EQ(ab.at("on_noisy"), "pass");
  EXPECT_EQ(ab.at("sides")[0].at("label"), "n=2000");
  EXPECT_EQ(ab.at("sides")[0].at("params"), "subset-mean.n=2000");
  check_turns(model, 0, 5, 1);
  EXPECT_EQ(ab.at("baseline").at("cases")[0].at("params").at("n"), "2000");
  EXPECT_EQ(model.at("cases")[0].at("params").at("n"), "2500");
  ASSERT_EQ(scalebench(dir.path, fmt::format("compare {} --on-noisy pass", out.string())), rc);
  EXPECT_NE(slurp(dir.path / "stdout").find("baseline ran "), std::string::npos)
      << slurp(dir.path / "stdout");
}

/// A program that answers like a scalebench-rank of another kind.
fs::path fake_rank(const fs::path& dir, const std::string& name, const std::string& body) {
  const fs::path p = dir / name;
  std::ofstream(p) << "#!/bin/sh\n" << body << "\n";
  fs::permissions(p, fs::perms::owner_all);
  return p;
}

TEST(AbRun, BadInputIsOneLineBeforeAnyJob) {
  TempDir dir;
  const fs::path old_rank = fake_rank(
      dir.path, "old-rank",
      "echo 'scalebench-rank 0: usage: scalebench-rank --plan PLAN.json (started by `scalebench "
      "run`)' >&2; exit 1");
  const fs::path future_rank =
      fake_rank(dir.path, "future-rank", "echo '{\"protocol\": 99, \"workloads\": []}'");
  const std::string plan = "--preset tiny --workloads subset-mean --no-ceilings";
  const std::vector<std::pair<std::string, std::string>> bad{
      {"--baseline rank=/no/such/scalebench-rank", "no such file"},
      {"--baseline rank=" + old_rank.string(), "does not answer --probe"},
      {"--baseline rank=" + future_rank.string(), "speaks A/B protocol 99"},
      {"--baseline rank=" + dir.path.string(), "no scalebench-rank in that folder"},
      {"--baseline plugin=/no/such/lib.so", "no such file"},
      {fmt::format("--baseline plugin={}", SB_FIXTURE_BAD_VERSION), "API"},
      {"--baseline speed=fast", "unknown key 'speed'"},
      {"--baseline param:subset-mean.n=1000,2000", "one value"},
      {"--baseline param:subset-mean.nope=1", "--baseline param:'subset-mean.nope=1'"},
      {"--baseline label=x --paths each-node", "each-node"},
      {"--baseline label=x --target-spread 0.02 --repeats auto", "--target-spread"},
      {"--threshold 3%", "apply to an A/B run"},
      {"--baseline label=x --ab-block 0", "--ab-block"},
      {"--baseline label=x --resume " + (dir.path / "x.h5").string(), "--resume"},
  };
  for (const auto& [args, says] : bad) {
    const fs::path out = dir.path / "bad.h5";
    const int rc =
        scalebench(dir.path, fmt::format("run {} {} --out {}", plan, args, out.string()));
    const std::string err = slurp(dir.path / "stderr");
    EXPECT_EQ(rc, 2) << args << "\n" << err;
    EXPECT_NE(err.find(says), std::string::npos) << args << "\n" << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << args << "\n" << err;
    EXPECT_FALSE(fs::exists(out)) << args;
    for (const auto& e : fs::directory_iterator(dir.path))
      EXPECT_EQ(e.path().filename().string().rfind(".scalebench-", 0), std::string::npos)
          << args << ": " << e.path();
  }
}

TEST(AbRun, ASideKilledMidRunKeepsWhatFinished) {
  TempDir dir;
  const fs::path out = dir.path / "killed.h5";
  // Four cases; the baseline side's job is killed (kill -9 of one of its ranks) once it has
  // taken a timed turn of the second case.
  const std::string d = dir.path.string();
  const std::string cmd = fmt::format(
      "( {} run --baseline rank={} --preset tiny --workloads subset-mean --paths cpu1,cpuN "
      "--param subset-mean.n=4000,8000 --repeats 12 --ab-block 1 --no-ceilings --out {} > "
      "{}/stdout "
      "2> {}/stderr; echo $? > {}/rc ) & "
      "echo none > {}/waited; "
      "for i in $(seq 1 1200); do "
      "  if grep -qs '\"index\":1,\"totals\":\\[[0-9]' {}/.scalebench-*/baseline/stream-0.jsonl; "
      "  then echo seen > {}/waited; break; fi; sleep 0.1; done; "
      "pkill -9 -n -f 'scalebench-rank --plan {}/.scalebench-[0-9]*/baseline/plan-0.json'; wait",
      SB_LAUNCHER_EXE, rank_exe(), out.string(), d, d, d, d, d, d, d);
  run(cmd);
  ASSERT_EQ(slurp(dir.path / "waited"), "seen\n") << slurp(dir.path / "stderr");
  const std::string err = slurp(dir.path / "stderr");
  const int rc = std::atoi(slurp(dir.path / "rc").c_str());
  EXPECT_TRUE(rc == 0 || rc == 1 || rc == 5) << rc << "\n" << err;
  const json model = sb::results::read_report(out.string());
  const json& cur = model.at("cases");
  const json& base = model.at("ab").at("baseline").at("cases");
  ASSERT_EQ(cur.size(), base.size());
  ASSERT_GE(cur.size(), 3u);
  // The first case finished on both sides before the kill.
  EXPECT_EQ(cur[0].at("status"), "ok");
  EXPECT_EQ(base[0].at("status"), "ok");
  EXPECT_EQ(base[0].at("repeats").size(), 12u);
  // The killed case: failed on the baseline side, with the repeats it had taken; the current
  // side finished it on its own.
  EXPECT_EQ(base[1].at("status"), "failed");
  const std::string msg = base[1].at("message");
  EXPECT_NE(msg.find("baseline side's job ended while it ran"), std::string::npos) << msg;
  EXPECT_GE(base[1].at("repeats").size(), 1u);
  EXPECT_EQ(cur[1].at("status"), "ok") << cur[1].at("message");
  EXPECT_EQ(cur[1].at("repeat_stop").at("reason"), "alone");
  // The cases after it ran in a fresh baseline job, side by side again.
  for (std::size_t i = 2; i < cur.size(); ++i) {
    EXPECT_EQ(cur[i].at("status"), "ok") << cur[i].at("message");
    EXPECT_EQ(base[i].at("status"), "ok") << base[i].at("message");
  }
  EXPECT_EQ(model.at("attrs").at("jobs"), 3);
  EXPECT_EQ(scalebench(dir.path, fmt::format("compare {}", out.string())), rc);
  EXPECT_NE(slurp(dir.path / "stdout").find("baseline case did not finish ok"), std::string::npos)
      << slurp(dir.path / "stdout");
}

}  // namespace
