// An independent reader: Debian's python3 with h5py and pandas reads a report written by
// write_report (tests/results/read_report.py) and the values must match the model.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "scalebench/report.hpp"
#include "synthetic_model.hpp"

namespace {

using nlohmann::json;
using sb::results::test::make_model;
using sb::results::test::TempDir;

TEST(ReportPython, H5pyAndPandasReadTheReport) {
  const std::string python = SB_PYTHON3;
  if (python.empty() || !std::filesystem::exists(python)) GTEST_SKIP() << "no python3";
  TempDir dir("report-python");
  const json model = make_model();
  const std::string path = dir.file("r.h5");
  sb::results::write_report(model, path);
  const std::string out = dir.file("read.json");
  const std::string cmd =
      python + " " + SB_SOURCE_DIR + "/tests/results/read_report.py '" + path + "' > '" + out + "'";
  const int rc = std::system(cmd.c_str());
  if (WIFEXITED(rc) && WEXITSTATUS(rc) == 77) GTEST_SKIP() << "h5py or pandas missing";
  ASSERT_EQ(rc, 0) << cmd;
  std::ifstream in(out);
  const json r = json::parse(in);

  // Root attributes: plain Python str / int, no decoding needed.
  for (const char* k : {"scalebench_version", "git_sha", "command_line", "start_utc", "end_utc",
                        "scheduler", "job_id", "preset", "status", "unicode"}) {
    EXPECT_EQ(r["root"][k], model["attrs"][k]) << k;
    EXPECT_EQ(r["root_types"][k], "str") << k;
  }
  EXPECT_EQ(r["root"]["schema_version"], 1);
  EXPECT_EQ(r["root_types"]["schema_version"], "int64");
  EXPECT_EQ(r["root"]["ranks"], 3);
  EXPECT_EQ(r["root"]["resumed"], false);
  EXPECT_TRUE(r["root"]["note"].is_null());
  EXPECT_EQ(r["groups"], json({"cases", "extra", "summary", "system"}));

  // Cases
  ASSERT_EQ(r["cases"].size(), 6u);
  EXPECT_EQ(r["cases"][0], "0000_subset-mean_single-cpu");
  EXPECT_EQ(r["cases"][5], "0005_groupby_multi-gpu");
  const json& c0 = model["cases"][0];
  for (const char* k : {"id", "workload", "path", "device", "workers", "threads_per_worker",
                        "status", "message", "warmup", "started_utc", "ended_utc"})
    EXPECT_EQ(r["case0_attrs"][k], c0[k]) << k;
  EXPECT_EQ(r["case0_params"], c0["params"]);
  EXPECT_EQ(r["times_columns"], json({"repeat", "generate", "compute", "communicate", "total"}));
  ASSERT_EQ(r["times_total"].size(), c0["repeats"].size());
  for (std::size_t i = 0; i < c0["repeats"].size(); ++i)
    EXPECT_DOUBLE_EQ(r["times_total"][i].get<double>(), c0["repeats"][i]["total"].get<double>());
  EXPECT_EQ(r["times_units"], "s");
  ASSERT_EQ(r["validation"].size(), 2u);
  EXPECT_EQ(r["validation"][0]["name"], "answer");
  EXPECT_EQ(r["validation"][0]["pass"], true);
  EXPECT_DOUBLE_EQ(r["validation"][0]["limit"].get<double>(), 6.0e-3);
  EXPECT_EQ(r["validation"][0]["detail"], c0["validation"][0]["detail"]);
  EXPECT_EQ(r["task_events_rows"], c0["task_events"]["task"].size());
  EXPECT_EQ(r["task_events_columns"],
            json({"repeat", "worker", "task", "phase", "start", "end", "bytes"}));
  EXPECT_EQ(r["task_events_phases"], json({"compute", "generate"}));
  EXPECT_EQ(r["result"], c0["result"]);
  EXPECT_EQ(r["metrics"], c0["metrics"]);
  EXPECT_EQ(r["work"], c0["work"]);
  EXPECT_EQ(r["svd_singular_values"], model["cases"][4]["result"]["singular_values"]);
  // Text result fields: str attributes of result/, a text column of the results table.
  const json& svd = model["cases"][4];
  EXPECT_EQ(r["svd_result_routines"], json({{"local_routine", svd["result"]["local_routine"]},
                                            {"svd_routine", svd["result"]["svd_routine"]}}));
  ASSERT_EQ(r["svd_results_routines"].size(), svd["results"].size());
  for (std::size_t i = 0; i < svd["results"].size(); ++i) {
    EXPECT_EQ(r["svd_results_routines"][i]["local_routine"], svd["results"][i]["local_routine"]);
    EXPECT_EQ(r["svd_results_routines"][i]["svd_routine"], svd["results"][i]["svd_routine"]);
  }

  // Summary: pandas builds a DataFrame from /summary; values match summarize().
  const json summary = sb::results::summarize(model);
  EXPECT_EQ(r["summary_columns"][0], "case");
  ASSERT_EQ(r["summary"].size(), summary.size());
  for (std::size_t i = 0; i < summary.size(); ++i) {
    EXPECT_EQ(r["summary"][i]["case"], summary[i]["case"]);
    EXPECT_EQ(r["summary"][i]["repeats"], summary[i]["repeats"]);
    for (const char* k :
         {"median_s", "speedup_vs_single_cpu", "speedup_vs_single_gpu", "efficiency"}) {
      const double want = summary[i][k].get<double>();
      if (std::isnan(want)) {
        EXPECT_TRUE(r["summary"][i][k].is_null()) << i << " " << k;
      } else {
        EXPECT_NEAR(r["summary"][i][k].get<double>(), want, 1e-12 * std::abs(want))
            << i << " " << k;
      }
    }
  }

  // System
  EXPECT_EQ(r["nodes"], model["system"]["nodes"]);
  EXPECT_EQ(r["gpus"], model["system"]["gpus"]);
  EXPECT_EQ(r["ceilings"], model["system"]["ceilings"]);
  EXPECT_EQ(r["versions"], model["system"]["versions"]);
  EXPECT_EQ(r["topology"], model["system"]["topology"]);
  EXPECT_EQ(r["startup"], model["startup"]);
  EXPECT_EQ(r["custom_matrix"], model["system"]["custom"]["matrix"]);
  EXPECT_EQ(r["custom_bools"], model["system"]["custom"]["bools"]);
}

}  // namespace
