// Merged reports (issue #51): provenance per case, cases of several reports told apart, devices
// judged against all their peers of the fleet, the schema refused with one line, the merged
// report written, read and rendered (table, HTML, JUnit, Markdown), read by compare and history;
// the scaling table of strong and weak studies; a fleet's duplicates and missing nodes; many
// reports read in a few child processes; a merged report's cases as one JSON text each, and the
// case groups of older merged reports still read.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <cmath>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "scalebench/compare.hpp"
#include "scalebench/error.hpp"
#include "scalebench/fleet.hpp"
#include "scalebench/h5_tree.hpp"
#include "scalebench/history.hpp"
#include "scalebench/merge.hpp"
#include "scalebench/report.hpp"
#include "scalebench/scaling.hpp"
#include "scalebench/verdicts.hpp"
#include "synthetic_model.hpp"

namespace {

using nlohmann::json;
using sb::results::MergeFleet;
using sb::results::ReferenceSet;
using sb::results::ReportMerger;
using sb::results::test::TempDir;

const char* kParams = "chunk=10000,n=100000,seed=42";

json params() {
  return {{"chunk", "10000"}, {"n", "100000"}, {"seed", "42"}};
}

/// An each-gpu record of GPU `g` on `host` with median `median_s` (five close repeats).
json gpu_record(const std::string& host, int g, double median_s) {
  const std::string dev = host + ":gpu" + std::to_string(g);
  const std::string planned = std::string("subset-mean/each-gpu/") + kParams;
  return {{"id", planned + "/" + dev},
          {"planned_id", planned},
          {"device_id", dev},
          {"host", host},
          {"hosts", {host}},
          {"gpu", g},
          {"device_model", "NVIDIA H200"},
          {"workload", "subset-mean"},
          {"path", "each-gpu"},
          {"params", params()},
          {"device", "gpu"},
          {"workers", 1},
          {"status", "ok"},
          {"message", ""},
          {"repeats", sb::results::test::repeats_of(
                          {median_s, median_s * 1.0005, median_s, median_s * 0.9995, median_s})},
          {"work", {{"units", 1e10}, {"unit", "draws"}, {"bytes", 8e10}, {"bound", "bytes"}}},
          {"metrics", {{"median_s", median_s}}},
          {"task_events", sb::results::test::task_events(1, 4)},
          {"telemetry", {{"period_s", 0.02}, {"series", {{"t", {0.0, 0.01}}}}}}};
}

/// A case of `path` with the given median; `nodes` > 0 marks it a scaling study's.
json plain_record(const std::string& host, const std::string& path, double median_s,
                  double units = 1e9) {
  json c = sb::results::test::make_case(0, "subset-mean", path, "cpu", 2,
                                        {median_s, median_s, median_s, median_s, median_s}, units,
                                        8 * units, 0);
  c["hosts"] = {host};
  c["metrics"]["median_s"] = median_s;
  return c;
}

/// A one-node report of `host` holding `cases`.
json report_of(const std::string& host, json cases,
               const std::string& start = "2026-12-02T10:00:00Z") {
  json m;
  m["attrs"] = {{"schema_version", sb::results::kSchemaVersion},
                {"scalebench_version", "0.1.0"},
                {"git_sha", "abc123"},
                {"host", host},
                {"start_utc", start},
                {"end_utc", "2026-12-02T10:05:00Z"},
                {"scheduler", "slurm"},
                {"job_id", "77_" + host},
                {"nodes", 1},
                {"ranks", 3},
                {"workers", 2},
                {"preset", "seed"},
                {"status", "ok"}};
  m["system"] = {{"nodes", {{{"host", host}, {"cpu_model", "AMD EPYC"}, {"cores", 64}}}},
                 {"gpus", json::array()},
                 {"versions", {{"mpi", "Open MPI"}}}};
  m["cases"] = std::move(cases);
  return m;
}

/// Reports of `nodes` nodes of `gpus` GPUs each; GPU 1 of node `slow` is `factor` slower.
std::vector<json> fleet(int nodes, int gpus, int slow, double factor) {
  std::vector<json> out;
  for (int n = 0; n < nodes; ++n) {
    const std::string host = "node" + std::to_string(n);
    json cases = json::array();
    for (int g = 0; g < gpus; ++g)
      cases.push_back(gpu_record(
          host, g, 0.0248 * (1 + 0.0005 * ((n + g) % 3)) * (n == slow && g == 1 ? factor : 1.0)));
    cases.push_back(plain_record(host, "single-cpu", 1.0));
    out.push_back(report_of(host, cases));
  }
  return out;
}

json merge(const std::vector<json>& reports, const MergeFleet* fleet_info = nullptr) {
  ReportMerger m;
  for (std::size_t i = 0; i < reports.size(); ++i)
    m.add("r" + std::to_string(i) + ".h5", reports[i]);
  return m.finish(ReferenceSet{}, fleet_info);
}

TEST(Merge, KeepsProvenanceAndTellsReportsApart) {
  const json merged = merge(fleet(2, 4, -1, 1.0));
  const json& cases = merged["cases"];
  ASSERT_EQ(cases.size(), 10u);
  EXPECT_EQ(merged["sources"].size(), 2u);
  EXPECT_EQ(merged["attrs"]["merged_reports"], 2);
  EXPECT_EQ(merged["attrs"]["nodes"], 2);
  EXPECT_EQ(merged["attrs"]["merge"], "reports");
  std::set<std::string> ids;
  for (const auto& c : cases) {
    ids.insert(c["id"].get<std::string>());
    const std::string host = c["source_host"];
    EXPECT_EQ(c["source_report"], host == "node0" ? "r0.h5" : "r1.h5");
    EXPECT_EQ(c["source_job"], "77_" + host);
    EXPECT_EQ(c["source_commit"], "abc123");
    EXPECT_FALSE(c.contains("task_events")) << "bulky arrays stay in the source reports";
    EXPECT_FALSE(c["telemetry"].contains("series"));
  }
  EXPECT_EQ(ids.size(), cases.size()) << "every case has an id of its own";
  // The single-cpu case of each report: the host tells them apart, as each-* records are.
  const std::string single = "subset-mean/single-cpu/chunk=500,n=2000,seed=42";
  EXPECT_EQ(ids.count(single + "/node0"), 1u);
  EXPECT_EQ(ids.count(single + "/node1"), 1u);
  for (const auto& c : cases)
    if (c["path"] == "single-cpu") {
      EXPECT_EQ(c["planned_id"], single);
      EXPECT_EQ(c["device_id"], c["source_host"]);
    }
  // each-gpu ids were already unique: unchanged.
  EXPECT_EQ(ids.count(std::string("subset-mean/each-gpu/") + kParams + "/node1:gpu3"), 1u);
}

TEST(Merge, JudgesEveryDeviceAgainstTheWholeFleet) {
  // Each report alone has 2 GPUs: an 8% slower one is within 10% of its one peer. In the
  // merged fleet of 16 it is slower than all its peers and named, and only it.
  const std::vector<json> reports = fleet(8, 2, 5, 1.08);
  for (const auto& r : reports)
    EXPECT_EQ(sb::results::count_not_ok(sb::results::judge_devices(r, ReferenceSet{})), 0u);
  const json merged = merge(reports);
  std::vector<std::string> bad;
  for (const auto& v : merged["verdicts"])
    if (v["verdict"] != "ok")
      bad.push_back(v["host"].get<std::string>() + ":" + v["device"].dump());
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad.front(), "node5:1");
  for (const auto& v : merged["verdicts"]) EXPECT_EQ(v["peers"], 15);
}

TEST(Merge, RefusesAnotherSchemaWithOneLine) {
  json r = fleet(1, 1, -1, 1.0).front();
  r["attrs"]["schema_version"] = 2;
  ReportMerger m;
  try {
    m.add("old.h5", r);
    FAIL() << "accepted";
  } catch (const sb::UsageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cannot merge old.h5: schema version 2"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos);
    EXPECT_EQ(e.exit_code(), 2);
  }
  EXPECT_THROW((void)ReportMerger().finish(ReferenceSet{}), sb::UsageError);
}

TEST(Merge, MergedReportsMergeAgainWithTheirSources) {
  const std::vector<json> reports = fleet(4, 2, -1, 1.0);
  const json ab = merge({reports[0], reports[1]});
  ReportMerger m;
  m.add("ab.h5", ab);
  m.add("r2.h5", reports[2]);
  m.add("r3.h5", reports[3]);
  const json all = m.finish(ReferenceSet{});
  ASSERT_EQ(all["sources"].size(), 4u);
  EXPECT_EQ(all["sources"][0]["report"], "r0.h5");
  EXPECT_EQ(all["sources"][2]["report"], "r2.h5");
  for (const auto& c : all["cases"])
    EXPECT_EQ(all["sources"][c["source"].get<std::size_t>()]["host"], c["source_host"]);
}

TEST(Merge, WrittenReadRenderedComparedAndAddedToHistory) {
  TempDir dir("merge-io");
  MergeFleet info;
  info.elements = 5;
  info.missing = {{"node-node9", "node9", "812", "no report"}};
  info.resubmit = "scalebench submit --scheduler slurm --fleet-dir /f --fleet-nodes node9 --";
  const json merged = merge(fleet(4, 2, 2, 1.5), &info);
  const std::string path = dir.file("merged.h5");
  sb::results::write_report(merged, path);
  const json back = sb::results::read_report(path);
  ASSERT_EQ(back["cases"].size(), merged["cases"].size());
  EXPECT_EQ(back["sources"].size(), 4u);
  EXPECT_EQ(back["fleet"]["missing"][0]["node"], "node9");
  EXPECT_EQ(back["cases"][0]["source_report"], "r0.h5");

  const std::string table = sb::results::format_report(back, "table");
  EXPECT_NE(table.find("missing   node9 (job 812): no report"), std::string::npos) << table;
  EXPECT_NE(table.find("--fleet-nodes node9"), std::string::npos);
  const std::string junit = sb::results::format_report(back, "junit");
  EXPECT_NE(junit.find("name=\"node node9: missing\""), std::string::npos);
  EXPECT_NE(junit.find("type=\"missing\""), std::string::npos);
  const std::string html = sb::results::format_report(back, "html");
  EXPECT_NE(html.find("id=\"fleet\""), std::string::npos);
  EXPECT_NE(html.find("data-verdict=\"missing\""), std::string::npos) << "missing row in the map";
  EXPECT_NE(html.find("id=\"resubmit\""), std::string::npos);
  const std::string md = sb::results::format_report(back, "markdown");
  EXPECT_NE(md.find("### Fleet"), std::string::npos);

  // compare: every case matched with itself, nothing missing.
  const sb::results::Comparison c = sb::results::compare_reports(back, back);
  EXPECT_FALSE(c.incomplete());
  EXPECT_FALSE(c.regressed());
  EXPECT_EQ(c.cases.size(), back["cases"].size());
  // history: one case per merged case, none folded into another.
  const sb::results::HistoryRun run = sb::results::history_run(back, "merged.h5");
  std::set<std::string> keys;
  for (const auto& hc : run.cases) keys.insert(hc.key);
  EXPECT_EQ(keys.size(), back["cases"].size());
}

/// A scaling study's report at `nodes` nodes: one multi-cpu case of median `t` and `units` work.
json study_report(long long nodes, double t, double units, const std::string& mode, double factor) {
  json c = plain_record("node0", "multi-cpu", t, units);
  if (mode == "weak") {
    c["scaling_id"] = c["id"];
    c["id"] = "subset-mean/multi-cpu/chunk=500,n=" +
              std::to_string(static_cast<int>(2000 * std::sqrt(factor))) + ",seed=42";
    c["params"]["n"] = std::to_string(static_cast<int>(2000 * std::sqrt(factor)));
  }
  c["workers"] = nodes;
  json r = report_of("node0", json::array({c}));
  r["attrs"]["scaling_mode"] = mode;
  r["attrs"]["scaling_nodes"] = nodes;
  r["attrs"]["weak_scale"] = factor;
  r["attrs"]["nodes"] = nodes;
  return r;
}

TEST(Merge, StrongScalingTable) {
  const json merged =
      merge({study_report(1, 1.0, 1e9, "strong", 1), study_report(2, 0.5, 1e9, "strong", 1),
             study_report(4, 0.3, 1e9, "strong", 1)});
  EXPECT_EQ(merged["attrs"]["merge"], "scaling");
  const json& rows = merged["scaling"]["rows"];
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(merged["scaling"]["mode"], "strong");
  EXPECT_NEAR(rows[1]["speedup"].get<double>(), 2.0, 1e-9);
  EXPECT_NEAR(rows[1]["efficiency"].get<double>(), 1.0, 1e-9);
  EXPECT_NEAR(rows[2]["speedup"].get<double>(), 1.0 / 0.3, 1e-9);
  EXPECT_NEAR(rows[2]["efficiency"].get<double>(), 1.0 / 0.3 / 4, 1e-9);
  // The node counts are told apart in the ids, so that compare and history keep them apart.
  std::set<std::string> ids;
  for (const auto& c : merged["cases"]) ids.insert(c["id"].get<std::string>());
  EXPECT_EQ(ids.count("subset-mean/multi-cpu/chunk=500,n=2000,seed=42/nodes=4"), 1u);
  const std::string text = sb::results::format_scaling_text(merged);
  EXPECT_NE(text.find("scaling (strong"), std::string::npos) << text;
  EXPECT_NE(text.find("83.3%"), std::string::npos) << text;
  const std::string html = sb::results::format_report(merged, "html");
  EXPECT_NE(html.find("data-chart=\"scaling-study\""), std::string::npos);
  EXPECT_NE(html.find("data-legend=\"scaling-study\""), std::string::npos);
}

TEST(Merge, WeakScalingCountsTheWorkDone) {
  // The problem grows with the nodes (the work doubles), the time grows 25% at 4 nodes.
  const json merged =
      merge({study_report(1, 1.0, 1e9, "weak", 1), study_report(2, 1.0, 2e9, "weak", 2),
             study_report(4, 1.25, 4e9, "weak", 4)});
  const json& rows = merged["scaling"]["rows"];
  ASSERT_EQ(rows.size(), 3u) << merged["scaling"].dump();
  EXPECT_EQ(merged["scaling"]["mode"], "weak");
  for (const auto& r : rows)
    EXPECT_EQ(r["case"], "subset-mean/multi-cpu/chunk=500,n=2000,seed=42") << "one case";
  EXPECT_NEAR(rows[1]["efficiency"].get<double>(), 1.0, 1e-9);
  EXPECT_NEAR(rows[2]["speedup"].get<double>(), 4.0 / 1.25, 1e-9);
  EXPECT_NEAR(rows[2]["efficiency"].get<double>(), 0.8, 1e-9);
}

TEST(Merge, KeepsTheNewestReportOfANode) {
  std::vector<json> reports = fleet(2, 2, -1, 1.0);
  json again =
      report_of("node1", json::array({gpu_record("node1", 0, 0.03)}), "2026-12-02T11:00:00Z");
  ReportMerger m;
  m.add("node0.h5", reports[0]);
  m.add("node1-old.h5", reports[1]);
  m.add("node1-new.h5", again);
  const std::vector<std::string> notes = m.keep_newest_per_host();
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("node1: 2 reports, the newest kept (node1-new.h5"), std::string::npos)
      << notes[0];
  EXPECT_NE(notes[0].find("left out: node1-old.h5"), std::string::npos);
  const json merged = m.finish(ReferenceSet{});
  for (const auto& c : merged["cases"]) EXPECT_NE(c["source_report"], "node1-old.h5");
  EXPECT_TRUE(merged["sources"][1].value("superseded", false));
}

TEST(Merge, FleetTableNamesNodesNotOkAndMissing) {
  MergeFleet info;
  info.elements = 4;
  info.missing = {{"element-3", "", "900_3", "no report"}};
  info.resubmit = "scalebench submit --scheduler slurm --fleet-elements 3";
  const json merged = merge(fleet(3, 4, 1, 1.5), &info);
  const json rows = sb::results::fleet_nodes(merged);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0]["host"], "node1");
  EXPECT_EQ(rows[0]["status"], "not ok");
  EXPECT_EQ(rows[0]["not_ok"], 1);
  EXPECT_EQ(rows[1]["host"], "element-3");
  EXPECT_EQ(rows[1]["status"], "missing");
  const std::string text = sb::results::format_fleet_text(merged);
  EXPECT_NE(text.find("fleet: 1 of 3 nodes not ok, 1 missing (3 of 4 elements reported"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("missing   element-3 (job 900_3): no report"), std::string::npos);
  EXPECT_EQ(text.find("node0"), std::string::npos) << "ok nodes are counted, not listed";
}

TEST(Merge, ReadsManyReportsInAFewProcesses) {
  TempDir dir("merge-read");
  std::vector<std::string> paths;
  const std::vector<json> reports = fleet(5, 1, -1, 1.0);
  for (std::size_t i = 0; i < reports.size(); ++i) {
    paths.push_back(dir.file("r" + std::to_string(i) + ".h5"));
    if (i == 2) {
      std::ofstream(paths.back()) << "not a report";
    } else {
      sb::results::write_report(reports[i], paths.back());
    }
  }
  std::vector<std::size_t> got, bad;
  sb::results::read_reports_isolated(
      paths, true, 2,
      [&](std::size_t i, json&& m) {
        got.push_back(i);
        EXPECT_EQ(m["attrs"]["host"], "node" + std::to_string(i));
        EXPECT_FALSE(m["cases"][0].contains("task_events"));
      },
      [&](std::size_t i, const std::string& msg) {
        bad.push_back(i);
        EXPECT_NE(msg.find("not an HDF5 file"), std::string::npos) << msg;
      });
  EXPECT_EQ(got, (std::vector<std::size_t>{0, 1, 3, 4}));
  EXPECT_EQ(bad, (std::vector<std::size_t>{2}));
}

/// The kind of object /cases is in the report `path`: H5I_GROUP or H5I_DATASET.
H5I_type_t cases_kind(const std::string& path) {
  sb::results::h5::quiet_errors();
  const sb::results::h5::Handle f{H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose};
  const sb::results::h5::Handle c{H5Oopen(f.get(), "cases", H5P_DEFAULT), H5Oclose};
  return H5Iget_type(c.get());
}

TEST(Merge, CasesAreOneJsonTextEachAndReadBackTheSame) {
  TempDir dir("merge-json");
  MergeFleet info;
  info.elements = 4;
  sb::results::MergeOptions keep;
  keep.keep_series = true;
  ReportMerger m(keep);
  const std::vector<json> reports = fleet(4, 3, 1, 1.4);
  for (std::size_t i = 0; i < reports.size(); ++i)
    m.add("r" + std::to_string(i) + ".h5", reports[i]);
  json merged = m.finish(ReferenceSet{}, &info);
  merged["cases"][0]["message"] = "non-ASCII: 25 \u00b0C, \u00b5s";
  merged["cases"][1]["metrics"]["big"] = std::uint64_t{18446744073709551615ULL};
  const std::string path = dir.file("merged.h5");
  sb::results::write_report(merged, path);
  EXPECT_EQ(cases_kind(path), H5I_DATASET);
  const json back = sb::results::read_report(path);
  EXPECT_EQ(back["cases"], merged["cases"]);
  ASSERT_EQ(back["verdicts"].size(), merged["verdicts"].size());
  EXPECT_EQ(back["verdicts"][4]["verdict"], "slow");
  EXPECT_EQ(back["sources"].size(), 4u);
  ASSERT_TRUE(back["cases"][0].contains("task_events"));

  // Read for another merge: the bulky arrays left out, the rest as it was.
  const json slim = sb::results::read_report_slim(path);
  ASSERT_EQ(slim["cases"].size(), merged["cases"].size());
  EXPECT_FALSE(slim["cases"][0].contains("task_events"));
  EXPECT_FALSE(slim["cases"][0]["telemetry"].contains("series"));
  EXPECT_EQ(slim["cases"][0]["telemetry"]["period_s"], 0.02);
  EXPECT_EQ(slim["cases"][2]["metrics"], merged["cases"][2]["metrics"]);

  // A report of no cases, and a single run's report, keep their layouts.
  json none = merge({reports[0]});
  none["cases"] = json::array();
  sb::results::write_report(none, dir.file("none.h5"));
  EXPECT_EQ(sb::results::read_report(dir.file("none.h5"))["cases"], json::array());
  sb::results::write_report(reports[0], dir.file("one.h5"));
  EXPECT_EQ(cases_kind(dir.file("one.h5")), H5I_GROUP);
}

TEST(Merge, OlderMergedReportsWithCaseGroupsStillRead) {
  // Merged reports of earlier versions kept a group per case: such a file is made here by
  // writing the merged model as a run's report and marking it merged afterwards.
  TempDir dir("merge-old");
  const json merged = merge(fleet(3, 2, -1, 1.0));
  json run = merged;
  run["attrs"].erase("merge");
  const std::string path = dir.file("old.h5");
  sb::results::write_report(run, path);
  {
    sb::results::h5::quiet_errors();
    sb::results::h5::Handle f{H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose};
    ASSERT_GE(f.get(), 0);
    sb::results::h5::write_attr(f.get(), "merge", "reports");
    f.close();
  }
  EXPECT_EQ(cases_kind(path), H5I_GROUP);
  const json back = sb::results::read_report(path);
  EXPECT_EQ(back["attrs"]["merge"], "reports");
  EXPECT_EQ(back["cases"], merged["cases"]);
  EXPECT_EQ(sb::results::read_report_slim(path)["cases"].size(), merged["cases"].size());
}

}  // namespace
