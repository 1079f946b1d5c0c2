#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>

#include "case_plan.hpp"
#include "scalebench/error.hpp"
#include "scalebench/references.hpp"

namespace {

sb::RunRequest subset_mean_tiny() {
  sb::RunRequest r;
  r.preset = "tiny";
  r.workloads = {"subset-mean"};
  return r;
}

TEST(CasePlan, OrdersPathsWithSingleCpuFirst) {
  auto r = subset_mean_tiny();
  r.paths = sb::parse_paths("gpuN,cpu1,multi-cpu,gpu1");
  const auto cases = sb::plan_cases(r);
  ASSERT_EQ(cases.size(), 4u);
  EXPECT_EQ(cases[0].path, sb::ExecPath::single_cpu);
  EXPECT_EQ(cases[1].path, sb::ExecPath::multi_cpu);
  EXPECT_EQ(cases[2].path, sb::ExecPath::single_gpu);
  EXPECT_EQ(cases[3].path, sb::ExecPath::multi_gpu);
  for (std::size_t i = 0; i < cases.size(); ++i) EXPECT_EQ(cases[i].index, static_cast<int>(i));
  EXPECT_EQ(cases[0].params.str("n"), "2000");
  EXPECT_EQ(cases[0].id.rfind("subset-mean/single-cpu/", 0), 0u);
}

TEST(CasePlan, ParamOverridesApplyToTheirWorkloadOnly) {
  auto r = subset_mean_tiny();
  r.params = {"subset-mean.n=4000", "subset-mean.chunk=1000"};
  const auto cases = sb::plan_cases(r);
  ASSERT_FALSE(cases.empty());
  EXPECT_EQ(cases[0].params.str("n"), "4000");
  EXPECT_EQ(cases[0].params.str("chunk"), "1000");
}

TEST(CasePlan, DefaultRunsEveryWorkloadOnEveryPath) {
  sb::RunRequest r;
  r.preset = "tiny";
  const auto cases = sb::plan_cases(r);
  std::set<std::string> names;
  for (const auto& c : cases) names.insert(c.workload);
  EXPECT_EQ(names.size(), sb::workloads().size());
  EXPECT_EQ(cases.size() % 4, 0u);
}

TEST(CasePlan, RejectsBadRequestsWithUsageErrors) {
  auto r = subset_mean_tiny();
  r.preset = "huge";
  EXPECT_THROW((void)sb::plan_cases(r), sb::UsageError);
  r = subset_mean_tiny();
  r.workloads = {"fft"};
  EXPECT_THROW((void)sb::plan_cases(r), sb::UsageError);
  r = subset_mean_tiny();
  r.params = {"subset-mean.nn=4"};
  EXPECT_THROW((void)sb::plan_cases(r), sb::UsageError);
  r.params = {"nodot=4"};
  EXPECT_THROW((void)sb::plan_cases(r), sb::UsageError);
  r.params = {"subset-mean.n=abc"};
  EXPECT_THROW((void)sb::plan_cases(r), sb::UsageError);
  r.params = {"subset-mean.n=2001"};  // not a multiple of the chunk
  EXPECT_THROW((void)sb::plan_cases(r), sb::UsageError);
  r = subset_mean_tiny();
  r.repeats = 0;
  EXPECT_THROW((void)sb::plan_cases(r), sb::UsageError);
  EXPECT_THROW((void)sb::parse_paths("cpu1,tpu"), sb::UsageError);
  EXPECT_THROW((void)sb::parse_paths(","), sb::UsageError);
}

TEST(CasePlan, TuningKeysAreOptionalAndNamedInTheCaseId) {
  // Absent from every preset: the default case ids carry none of them.
  sb::RunRequest r;
  r.preset = "tiny";
  r.paths = sb::parse_paths("cpu1");
  for (const auto& c : sb::plan_cases(r))
    for (const char* key : {"push_blocks", "shuffle_chunks", "slice_rows", "simd"})
      EXPECT_EQ(c.id.find(key), std::string::npos) << c.id;
  // Given, they are part of the id (by-key only for groupby's).
  r.params = {"groupby.push_blocks=4", "groupby.shuffle_chunks=2", "svd.slice_rows=8",
              "subset-mean.simd=scalar"};
  int by_key = 0;
  for (const auto& c : sb::plan_cases(r)) {
    if (c.workload == "svd") {
      EXPECT_NE(c.id.find("slice_rows=8"), std::string::npos) << c.id;
    }
    if (c.workload == "subset-mean") {
      EXPECT_NE(c.id.find("simd=scalar"), std::string::npos) << c.id;
    }
    if (c.workload != "groupby") continue;
    const bool key = c.id.find("query=by-key") != std::string::npos;
    by_key += key ? 1 : 0;
    EXPECT_EQ(c.id.find("push_blocks=4") != std::string::npos, key) << c.id;
    EXPECT_EQ(c.id.find("shuffle_chunks=2") != std::string::npos, key) << c.id;
  }
  EXPECT_EQ(by_key, 1);
  // Out of range or misspelt: a UsageError before any job starts.
  for (const char* bad : {"groupby.push_blocks=0", "groupby.shuffle_chunks=9", "svd.slice_rows=0",
                          "subset-mean.simd=sse"}) {
    r.params = {bad};
    EXPECT_THROW((void)sb::plan_cases(r), sb::UsageError) << bad;
  }
}

TEST(CasePlan, DuplicateCasesRunOnce) {
  sb::RunRequest r;
  r.preset = "tiny";
  r.cases = {{"subset-mean", "", {sb::ExecPath::single_cpu}, {}},
             {"subset-mean", "", {sb::ExecPath::single_cpu}, {}}};
  EXPECT_EQ(sb::plan_cases(r).size(), 1u);
}

TEST(CasePlan, EachDevicePathsComeLastAndKeepTheirNames) {
  auto r = subset_mean_tiny();
  r.paths = sb::parse_paths("each-node,cpuN,each-gpu");
  const auto cases = sb::plan_cases(r);
  ASSERT_EQ(cases.size(), 3u);
  EXPECT_EQ(cases[0].path, sb::ExecPath::multi_cpu);
  EXPECT_EQ(cases[1].path, sb::ExecPath::each_gpu);
  EXPECT_EQ(cases[2].path, sb::ExecPath::each_node);
  EXPECT_EQ(cases[2].id.rfind("subset-mean/each-node/", 0), 0u) << cases[2].id;
  // Not among the paths a run takes when none is named.
  for (const auto& c : sb::plan_cases(subset_mean_tiny())) EXPECT_FALSE(sb::is_each_device(c.path));
}

// Every case a shipped reference file names is a case the presets plan, so that it judges
// something (examples/references, docs/acceptance.md).
TEST(CasePlan, TheShippedReferencesNamePlannedCases) {
  std::set<std::string> planned;
  for (const char* preset : {"tiny", "small", "seed", "large"}) {
    sb::RunRequest r;
    r.preset = preset;
    r.paths = sb::parse_paths("single-gpu,multi-gpu,each-gpu,each-node,multi-cpu");
    for (const auto& c : sb::plan_cases(r)) planned.insert(c.id);
  }
  std::size_t entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(SB_SOURCE_DIR) /
                                                           "examples/references")) {
    sb::results::ReferenceSet refs;
    sb::results::read_references(e.path().string(), refs);
    for (const auto& ref : refs.entries) {
      ++entries;
      const std::string id = ref.workload + "/" + ref.path + "/" + ref.params;
      EXPECT_EQ(planned.count(id), 1u) << e.path() << ": " << id;
    }
  }
  EXPECT_GT(entries, 0u);
}

TEST(CasePlan, WeakScalingGrowsEveryVariantAndKeepsItsIdAtFactorOne) {
  // groupby's preset is query=all: three cases, each grown by the rule on its own parameters.
  sb::RunRequest r;
  r.preset = "tiny";
  r.workloads = {"groupby", "subset-mean"};
  r.paths = sb::parse_paths("multi-cpu");
  r.params = {"groupby.days=6"};
  const auto base = sb::plan_cases(r);
  r.scale_factor = 2;
  std::map<std::string, std::string> ids;
  const auto grown = sb::plan_cases(r, nullptr, &ids);
  ASSERT_EQ(grown.size(), base.size());
  ASSERT_EQ(grown.size(), 4u);  // subset-mean, groupby by-name, by-id, by-key
  std::set<std::string> queries;
  for (std::size_t i = 0; i < grown.size(); ++i) {
    EXPECT_EQ(ids.at(grown[i].id), base[i].id);
    if (grown[i].workload == "groupby") {
      queries.insert(grown[i].params.str("query"));
      EXPECT_EQ(grown[i].params.str("days"), "12") << grown[i].id;
      EXPECT_EQ(grown[i].params.str("query"), base[i].params.str("query"));
    } else {
      // n x n draws: n by sqrt(2), to the nearest multiple of the chunk
      EXPECT_GT(grown[i].params.i64("n", 0), base[i].params.i64("n", 0)) << grown[i].id;
      EXPECT_EQ(grown[i].params.i64("n", 0) % grown[i].params.i64("chunk", 1), 0);
    }
  }
  EXPECT_EQ(queries, (std::set<std::string>{"by-name", "by-id", "by-key"}));
}

}  // namespace
