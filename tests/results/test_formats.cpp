// `scalebench report --format`: table, markdown, csv, json, gbench-json, html.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "format_util.hpp"
#include "scalebench/error.hpp"
#include "scalebench/report.hpp"
#include "scalebench/stats.hpp"
#include "scalebench/system_info.hpp"
#include "synthetic_model.hpp"

namespace {

using nlohmann::json;
using sb::results::format_report;
using sb::results::test::make_model;

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

std::string slurp_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

TEST(Formats, Table) {
  const json m = make_model();
  const std::string t = format_report(m, "table");
  EXPECT_NE(t.find("scalebench 0.1.0 (git 0123456789ab)"), std::string::npos) << t;
  for (const auto& c : m["cases"]) EXPECT_NE(t.find(c["id"].get<std::string>()), std::string::npos);
  EXPECT_NE(t.find("4.00x"), std::string::npos) << t;   // multi-cpu vs single-cpu
  EXPECT_NE(t.find("200x"), std::string::npos) << t;    // multi-gpu vs single-cpu
  EXPECT_NE(t.find("100.0%"), std::string::npos) << t;  // gpu at the copy ceiling
  EXPECT_NE(t.find("2.00 M draws/s"), std::string::npos) << t;
  EXPECT_NE(t.find("problems:"), std::string::npos);
  EXPECT_NE(t.find("no GPU on this machine"), std::string::npos);
  EXPECT_NE(t.find("check full_mean failed"), std::string::npos);
  // columns line up: every data row is as wide as the header row at the "status" column
  const auto ls = lines(t);
  const auto header = std::find_if(ls.begin(), ls.end(),
                                   [](const std::string& l) { return l.rfind("case ", 0) == 0; });
  ASSERT_NE(header, ls.end());
  const std::size_t status_col = header->find("status");
  for (auto it = header + 2; it != ls.end() && !it->empty(); ++it)
    EXPECT_EQ(it->at(status_col - 1), ' ') << *it;
}

TEST(Formats, Markdown) {
  const std::string t = format_report(make_model(), "markdown");
  EXPECT_EQ(t.rfind("## scalebench report", 0), 0u);
  EXPECT_NE(t.find("| case | workers | status | reps |"), std::string::npos) << t;
  EXPECT_NE(t.find("|---|---|---|---:|"), std::string::npos) << t;
  // the summary's four, and the single-gpu device nothing judged in the verdicts (issue #50)
  EXPECT_EQ(count(t, "| subset-mean/"), 5u);
  EXPECT_NE(t.find("| not judged | ? | GPU 0 | subset-mean/single-gpu/"), std::string::npos) << t;
}

TEST(Formats, Csv) {
  const json m = make_model();
  const auto ls = lines(format_report(m, "csv"));
  ASSERT_EQ(ls.size(), m["cases"].size() + 1);
  EXPECT_EQ(
      ls[0],
      "case,workload,path,workers,threads_per_worker,status,repeats,median_s,min_s,max_s,"
      "stddev_s,runtime_s,throughput,throughput_unit,speedup_vs_single_cpu,speedup_vs_single_gpu,"
      "efficiency,ceiling,ceiling_value,ceiling_unit,notes,throttled_repeats,"
      "left_out_repeats,verdict,verdict_reason,energy_j,power_w,work_per_j,work_per_j_unit,"
      "flop_per_j,energy_source,energy_unavailable,spread,interference,interference_explains,"
      "param_chunk,param_n,param_seed,preset,hosts,device_id,message,started_utc,ended_utc,"
      "run_host,scheduler,job_id,git_sha,scalebench_version,run_start_utc,run_status");
  EXPECT_EQ(
      ls[2].rfind(
          "\"subset-mean/multi-cpu/chunk=500,n=2000,seed=42\",subset-mean,multi-cpu,2,2,ok,5,0.5,",
          0),
      0u)
      << ls[2];
  // the ceiling used: 2 workers x 2e10 B/s
  EXPECT_NE(ls[2].find(",stream_triad,40000000000,B/s,"), std::string::npos) << ls[2];
  // NaN cells are empty
  EXPECT_NE(ls[6].find(",skipped,0,,,,,"), std::string::npos) << ls[6];
}

TEST(Formats, Json) {
  const json m = make_model();
  const json j = json::parse(format_report(m, "json"));
  EXPECT_EQ(j["cases"], m["cases"]);
  ASSERT_EQ(j["summary"].size(), m["cases"].size());
  EXPECT_DOUBLE_EQ(j["summary"][1]["speedup_vs_single_cpu"].get<double>(), 4.0);
  EXPECT_TRUE(j["summary"][5]["median_s"].is_null());  // NaN is written as null
}

TEST(Formats, GoogleBenchmarkJson) {
  const json m = make_model();
  const json j = json::parse(format_report(m, "gbench-json"));
  ASSERT_TRUE(j.contains("context"));
  ASSERT_TRUE(j.contains("benchmarks"));
  for (const char* k : {"date", "host_name", "executable", "num_cpus", "mhz_per_cpu",
                        "cpu_scaling_enabled", "caches", "library_build_type"})
    EXPECT_TRUE(j["context"].contains(k)) << k;
  EXPECT_EQ(j["context"]["host_name"], "node0");
  EXPECT_EQ(j["context"]["num_cpus"], 2);
  EXPECT_TRUE(j["context"]["caches"].is_array());

  std::map<std::string, int> iterations, aggregates;
  for (const auto& b : j["benchmarks"]) {
    for (const char* k : {"name", "run_name", "run_type", "repetitions", "iterations", "real_time",
                          "cpu_time", "time_unit", "family_index", "per_family_instance_index"})
      ASSERT_TRUE(b.contains(k)) << k << " in " << b.dump();
    EXPECT_EQ(b["time_unit"], "ms");
    EXPECT_TRUE(b["real_time"].is_number());
    if (b["run_type"] == "iteration") {
      ASSERT_TRUE(b.contains("repetition_index"));
      EXPECT_EQ(b["iterations"], 1);
      EXPECT_EQ(b["name"], b["run_name"]);
      ++iterations[b["name"].get<std::string>()];
    } else {
      ASSERT_EQ(b["run_type"], "aggregate");
      const std::string agg = b["aggregate_name"].get<std::string>();
      EXPECT_TRUE(agg == "mean" || agg == "median" || agg == "stddev") << agg;
      EXPECT_EQ(b["name"], b["run_name"].get<std::string>() + "_" + agg);
      ++aggregates[b["run_name"].get<std::string>()];
    }
  }
  // every case with repeats: one entry per repeat plus three aggregates; the skipped one: none
  for (std::size_t i = 0; i < 5; ++i) {
    const std::string id = m["cases"][i]["id"];
    EXPECT_EQ(iterations[id], 5) << id;
    EXPECT_EQ(aggregates[id], 3) << id;
  }
  EXPECT_EQ(iterations.count(m["cases"][5]["id"].get<std::string>()), 0u);
  // values: repeat r of case 1 is its total in ms; the median aggregate is the median
  const auto& b = j["benchmarks"];
  const auto first = std::find_if(b.begin(), b.end(), [&](const json& e) {
    return e["name"] == m["cases"][1]["id"] && e["run_type"] == "iteration";
  });
  ASSERT_NE(first, b.end());
  EXPECT_DOUBLE_EQ((*first)["real_time"].get<double>(), 500.0);
  EXPECT_DOUBLE_EQ((*first)["items_per_second"].get<double>(), 8e6);
  const auto med = std::find_if(b.begin(), b.end(), [&](const json& e) {
    return e["name"] == m["cases"][0]["id"].get<std::string>() + "_median";
  });
  ASSERT_NE(med, b.end());
  EXPECT_DOUBLE_EQ((*med)["real_time"].get<double>(), 2000.0);
}

TEST(Formats, HtmlIsSelfContainedWithCharts) {
  const json m = make_model();
  const std::string h = format_report(m, "html");
  EXPECT_EQ(h.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(h.find("</html>"), std::string::npos);
  EXPECT_EQ(h.find("<script"), std::string::npos);
  EXPECT_EQ(h.find("src="), std::string::npos);
  EXPECT_EQ(h.find("href="), std::string::npos);
  EXPECT_EQ(h.find("url("), std::string::npos);
  // the only URL is the SVG namespace
  EXPECT_EQ(count(h, "http"), count(h, "xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_EQ(count(h, "<svg"), count(h, "</svg>"));
  EXPECT_GE(count(h, "<svg"), 4u);  // speedup, scaling, phases, task streams
  EXPECT_NE(h.find("Speedup"), std::string::npos);
  EXPECT_NE(h.find("Scaling"), std::string::npos);
  EXPECT_NE(h.find("Phase breakdown"), std::string::npos);
  EXPECT_NE(h.find("Task streams"), std::string::npos);
  EXPECT_NE(h.find("worker 1"), std::string::npos);
  EXPECT_NE(h.find("NVIDIA H200"), std::string::npos);
  EXPECT_EQ(count(h, "<table"), count(h, "</table>"));
  // text is escaped
  json m2 = m;
  m2["cases"][0]["id"] = "<b>&\"x\"";
  const std::string h2 = format_report(m2, "html");
  EXPECT_EQ(h2.find("<b>&"), std::string::npos);
  EXPECT_NE(h2.find("&lt;b&gt;&amp;&quot;x&quot;"), std::string::npos);
}

TEST(Formats, EmptyModelRendersInEveryFormat) {
  for (const auto& f : sb::results::report_formats())
    EXPECT_FALSE(format_report(json::object(), f).empty()) << f;
}

TEST(Formats, UnknownFormatIsAUsageError) {
  try {
    (void)format_report(make_model(), "xml");
    FAIL() << "no error";
  } catch (const sb::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown report format 'xml'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("gbench-json"), std::string::npos);
  }
}

/// make_model where multi-cpu is 10x slower than single-cpu (speedup 0.1) and single-cpu
/// subset-mean moves 3.2e11 bytes in 2 s: 1.6e11 B/s over the 2e10 B/s triad ceiling (800%).
json model_with_notes() {
  json m = make_model();
  m["cases"][1]["repeats"] = sb::results::test::repeats_of({20.0, 20.0, 20.0, 20.0, 20.0});
  m["cases"][0]["work"]["bytes"] = 3.2e11;
  return m;
}

TEST(Formats, NotesSayWhenACaseIsSlowerThanItsReferenceOrAboveItsCeiling) {
  const json m = model_with_notes();
  const json s = sb::results::summarize(m);
  const std::string slower =
      "slower than single-cpu (0.10x): at this size the work is too small for 2w\u00D72t and the "
      "overhead (dispatch, messages and waits) dominates, a larger preset (--preset small) shows "
      "the scaling";
  const std::string above =
      "above the measured ceiling (800.0% of stream_triad 20.0 GB/s): the ceiling or the work "
      "count is off";
  EXPECT_EQ(s[0]["notes"], above);
  EXPECT_EQ(s[1]["notes"], slower);
  for (std::size_t i = 2; i < s.size(); ++i) EXPECT_EQ(s[i]["notes"], "") << i;
  EXPECT_EQ(s[0]["ceiling"], "stream_triad");
  EXPECT_DOUBLE_EQ(s[0]["ceiling_value"].get<double>(), 2e10);
  EXPECT_EQ(s[0]["ceiling_unit"], "B/s");

  const std::string t = format_report(m, "table");
  EXPECT_NE(t.find("800.0%!"), std::string::npos) << t;
  EXPECT_NE(t.find("ceilings used: stream_triad 20.0 GB/s per CPU worker, dgemm 100 Gflop/s per "
                   "CPU worker, copy_bandwidth 4.00 TB/s per GPU"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("notes:\n  above the measured ceiling: "
                   "subset-mean/single-cpu/chunk=500,n=2000,seed=42 (800.0% of stream_triad "
                   "20.0 GB/s)\n    the ceiling or the work count is off\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("  slower than single-cpu: subset-mean/multi-cpu/chunk=500,n=2000,seed=42 "
                   "(0.10x)\n    at this size the work is too small for 2w\u00D72t"),
            std::string::npos)
      << t;

  const std::string md = format_report(m, "markdown");
  EXPECT_NE(md.find("- **above the measured ceiling**: subset-mean/single-cpu/"), std::string::npos)
      << md;
  EXPECT_NE(md.find("- **slower than single-cpu**: subset-mean/multi-cpu/"), std::string::npos);
  EXPECT_NE(md.find("| 800.0%! |"), std::string::npos) << md;

  const auto csv = lines(format_report(m, "csv"));
  EXPECT_NE(csv[1].find(",stream_triad,20000000000,B/s," + above), std::string::npos) << csv[1];
  EXPECT_NE(csv[2].find(slower), std::string::npos) << csv[2];
  EXPECT_EQ(json::parse(format_report(m, "json"))["summary"][1]["notes"], slower);

  const json g = json::parse(format_report(m, "gbench-json"));
  ASSERT_EQ(g["context"]["scalebench_notes"].size(), 2u);
  EXPECT_EQ(g["context"]["scalebench_notes"][0]["note"], above);
  std::size_t labelled = 0;
  for (const auto& b : g["benchmarks"])
    if (b["run_name"] == m["cases"][0]["id"]) {
      EXPECT_EQ(b.value("label", ""), above) << b.dump();
      ++labelled;
    }
  EXPECT_EQ(labelled, 8u);  // 5 repeats, 3 aggregates

  const std::string h = format_report(m, "html");
  EXPECT_NE(h.find("<td class=\"n warn\" title=\"" + above + "\">\u26A0 800.0%</td></tr>"),
            std::string::npos);
  EXPECT_NE(h.find("<b>above the measured ceiling</b>"), std::string::npos);
  EXPECT_NE(h.find("<b>slower than single-cpu</b>: subset-mean/multi-cpu/chunk=500,n=2000,seed=42 "
                   "(0.10x)"),
            std::string::npos);
  // multi-cpu at 2 workers: the ceiling is 2 x 20 GB/s (the efficiency cell's title)
  EXPECT_NE(h.find("title=\"of stream_triad 40.0 GB/s\">"), std::string::npos);

  // within the noise of short repeats (0.95x): no note
  json m2 = make_model();
  m2["cases"][1]["repeats"] = sb::results::test::repeats_of({2.1, 2.1, 2.1, 2.1, 2.1});
  EXPECT_EQ(sb::results::summarize(m2)[1]["notes"], "");
  // a GPU case against its own reference: multi-gpu vs single-gpu, with the run's next preset
  json m3 = make_model();
  m3["attrs"]["preset"] = "seed";
  m3["cases"][3]["repeats"] = sb::results::test::repeats_of({0.1, 0.1, 0.1, 0.1, 0.1});
  EXPECT_EQ(sb::results::summarize(m3)[3]["notes"],
            "slower than single-gpu (0.20x): at this size the work is too small for 2 GPUs and "
            "the overhead (dispatch and the exchange between GPUs) dominates, a larger preset "
            "(--preset large) shows the scaling");
}

TEST(Formats, CasesAreLabelledWithWorkersAndThreads) {
  json m = make_model();
  m["cases"][1]["workers"] = 1;  // 1 worker x 2 threads: what a 2-core laptop runs
  const std::string t = format_report(m, "table");
  auto row = [&](const std::string& id) {
    for (const auto& l : lines(t))
      if (l.rfind(id + " ", 0) == 0) return l;
    return std::string();
  };
  EXPECT_NE(row("subset-mean/single-cpu/chunk=500,n=2000,seed=42").find(" 1w\u00D71t "),
            std::string::npos)
      << t;
  EXPECT_NE(row("subset-mean/multi-cpu/chunk=500,n=2000,seed=42").find(" 1w\u00D72t "),
            std::string::npos)
      << t;
  EXPECT_NE(row("subset-mean/single-gpu/chunk=500,n=2000,seed=42").find(" 1 GPU "),
            std::string::npos);
  EXPECT_NE(row("subset-mean/multi-gpu/chunk=500,n=2000,seed=42").find(" 2 GPUs "),
            std::string::npos);
  EXPECT_NE(format_report(m, "markdown")
                .find("| subset-mean/multi-cpu/chunk=500,n=2000,seed=42 | "
                      "1w\u00D72t | ok |"),
            std::string::npos);
  const std::string h = format_report(m, "html");
  EXPECT_NE(h.find(">multi-cpu (1w\u00D72t)</text>"), std::string::npos);  // chart labels
  EXPECT_NE(h.find(">single-cpu (1w\u00D71t)</text>"), std::string::npos);
  EXPECT_NE(h.find("multi-cpu</td><td>1w\u00D72t</td>"), std::string::npos);  // summary
  EXPECT_NE(h.find("<h3>subset-mean/multi-cpu/chunk=500,n=2000,seed=42 (1w\u00D72t)</h3>"),
            std::string::npos);  // task stream
  EXPECT_EQ(h.find("(1w)"), std::string::npos);
  EXPECT_EQ(sb::results::summarize(m)[1]["threads_per_worker"], 2);
}

// Cases a machine cannot run by their nature (comms with one worker) are no problem.
TEST(Formats, CasesThatCannotRunHereAreNotProblems) {
  json m = make_model();
  for (int i : {2, 3}) {
    m["cases"][i]["status"] = "skipped";
    m["cases"][i]["not_applicable"] = true;
    m["cases"][i]["message"] = "comms needs at least 2 workers and multi-gpu has 1 here";
    m["cases"][i]["repeats"] = json::array();
  }
  const std::string t = format_report(m, "table");
  EXPECT_NE(t.find("not run here:\n  2 GPU cases: comms needs at least 2 workers and multi-gpu "
                   "has 1 here\n"),
            std::string::npos)
      << t;
  EXPECT_EQ(count(t, "comms needs"), 1u) << t;
  const std::string md = format_report(m, "markdown");
  EXPECT_NE(md.find("### Not run here"), std::string::npos) << md;
  EXPECT_EQ(md.find("- 2 GPU cases skipped"), std::string::npos) << md;
  const std::string h = format_report(m, "html");
  EXPECT_NE(h.find("id=\"not-run-here\""), std::string::npos);
}

TEST(Formats, ProblemsGroupIdenticalStatusesWithAHint) {
  json m = make_model();
  for (int i : {2, 3}) {  // three GPU cases skipped for the same reason
    m["cases"][i]["status"] = "skipped";
    m["cases"][i]["message"] = "no GPU on this machine";
    m["cases"][i]["repeats"] = json::array();
  }
  m["cases"][1]["status"] = "failed";  // two CPU cases failed with the same message
  m["cases"][1]["message"] = "something went wrong";
  const std::string grouped =
      "3 GPU cases skipped: no GPU on this machine; --paths cpu1,cpuN leaves them out";
  const std::string failed =
      "2 CPU cases failed: something went wrong (subset-mean/multi-cpu/chunk=500,n=2000,seed=42, "
      "svd/single-cpu/chunk=500,n=2000,seed=42); --resume FILE re-runs only the failed cases";
  const std::string t = format_report(m, "table");
  EXPECT_EQ(count(t, "no GPU on this machine"), 1u) << t;
  EXPECT_NE(t.find("problems:\n  " + failed + "\n  " + grouped + "\n"), std::string::npos) << t;
  EXPECT_NE(t.find("check full_mean failed"), std::string::npos);
  const std::string md = format_report(m, "markdown");
  EXPECT_NE(md.find("- " + grouped + "\n"), std::string::npos) << md;
  const std::string h = format_report(m, "html");
  EXPECT_NE(h.find("<li class=\"bad\">" + grouped + "</li>"), std::string::npos);
  // one case alone keeps its id
  EXPECT_NE(format_report(make_model(), "table")
                .find("groupby/multi-gpu/chunk=500,n=2000,seed=42: skipped: no GPU on this "
                      "machine; --paths cpu1,cpuN leaves it out"),
            std::string::npos);
}

TEST(Formats, GoogleBenchmarkContextFromTheNodeDescription) {
  json m = make_model();
  json& node = m["system"]["nodes"][0];
  node.erase("mhz_per_cpu");
  node["cpu_mhz"] = 2593.9;
  node["l1d_cache_bytes"] = 32768;
  node["l1d_cache_sharing"] = 2;
  node["l2_cache_bytes"] = 1048576;
  node["l2_cache_sharing"] = 2;
  node["l3_cache_bytes"] = 33554432;
  node["l3_cache_sharing"] = 16;
  node["load_avg_1m"] = 0.5;
  node["load_avg_5m"] = 1.0;
  node["load_avg_15m"] = 1.5;
  // the node table stays one HDF5 table with these flat fields
  const json ctx = json::parse(format_report(m, "gbench-json"))["context"];
  EXPECT_EQ(ctx["mhz_per_cpu"], 2594);
  EXPECT_EQ(ctx["load_avg"], json({0.5, 1.0, 1.5}));
  EXPECT_EQ(ctx["caches"], json::parse(R"([{"type":"Data","level":1,"size":32768,"num_sharing":2},
                            {"type":"Unified","level":2,"size":1048576,"num_sharing":2},
                            {"type":"Unified","level":3,"size":33554432,"num_sharing":16}])"));
}

TEST(Formats, GoogleBenchmarkContextOfThisMachine) {
  json m = make_model();
  m["system"]["nodes"] = json::array({sb::describe_node()});
  const json ctx = json::parse(format_report(m, "gbench-json"))["context"];
  ASSERT_EQ(ctx["load_avg"].size(), 3u) << ctx.dump();  // /proc/loadavg
  for (const auto& l : ctx["load_avg"]) EXPECT_GE(l.get<double>(), 0.0);
  if (std::filesystem::exists("/sys/devices/system/cpu/cpu0/cache/index0")) {
    ASSERT_FALSE(ctx["caches"].empty()) << ctx.dump();
    EXPECT_EQ(ctx["caches"][0]["level"], 1);
    EXPECT_GT(ctx["caches"][0]["size"].get<std::int64_t>(), 0);
  }
  if (std::filesystem::exists("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq") ||
      slurp_text("/proc/cpuinfo").find("cpu MHz") != std::string::npos) {
    EXPECT_GT(ctx["mhz_per_cpu"].get<std::int64_t>(), 0) << ctx.dump();
  }
}

TEST(Formats, HtmlReadsTopDownWithLegendsDistributionsAndUnits) {
  json m = make_model();
  // subset-mean single-cpu: half of compute unaccounted for, so the page explains "other"
  for (auto& r : m["cases"][0]["repeats"]) r["compute"] = r["compute"].get<double>() / 2;
  const std::string h = format_report(m, "html");
  // headline first: status, tally, host, CPU, GPU, scheduler; then attention, then the summary
  const auto head = h.find(
      "<section class=\"headline\" id=\"headline\" data-status=\"ok\" "
      "data-ok=\"4\" data-failed=\"1\" data-skipped=\"1\">");
  ASSERT_NE(head, std::string::npos);
  EXPECT_LT(head, h.find("id=\"problems\""));
  EXPECT_LT(h.find("id=\"problems\""), h.find("id=\"summary\""));
  EXPECT_NE(h.find("<p class=\"status bad\">Run ok</p>"), std::string::npos);  // a case failed
  EXPECT_NE(h.find("<span class=\"ok\">4 ok</span> · <span class=\"bad\">1 failed</span> · 1 "
                   "skipped — 6 cases"),
            std::string::npos);
  EXPECT_NE(h.find("<dt>host</dt><dd>node0</dd><dt>CPU</dt><dd>AMD EPYC 9654 (2 cores, 8.00 "
                   "GiB)</dd><dt>GPU</dt><dd>2 \u00D7 NVIDIA H200 (140 GiB)</dd><dt>scheduler</dt>"
                   "<dd>local</dd>"),
            std::string::npos);
  // the summary never wraps; the parameters a workload's cases share head its group of rows
  EXPECT_NE(h.find("white-space:nowrap"), std::string::npos);
  EXPECT_NE(h.find("<tr class=\"group\"><th colspan=\"10\">subset-mean — "
                   "chunk=500,n=2000,seed=42</th></tr>"),
            std::string::npos);
  // every chart kind, each followed by its legend
  for (const char* kind : {"speedup", "distribution", "scaling", "phases", "task-stream"}) {
    const auto chart = h.find(std::string("data-chart=\"") + kind + "\"");
    const auto legend = h.find(std::string("data-legend=\"") + kind + "\"");
    ASSERT_NE(chart, std::string::npos) << kind;
    ASSERT_NE(legend, std::string::npos) << kind;
    EXPECT_LT(chart, legend) << kind;
  }
  // one dot per timed repeat (5 cases x 5 repeats), a box and a median per case
  EXPECT_EQ(count(h, "<title>repeat "), 25u);
  EXPECT_EQ(count(h, "<title>median "), 5u);
  EXPECT_NE(h.find("other: the part of a repeat&#39;s wall time outside the workers&#39; "
                   "generate, compute and communicate phases (dispatch, messages, waits)"),
            std::string::npos);
  // units in the system tables; raw figures only in titles
  for (const char* u : {">8.00 GiB<", ">140 GiB<", ">1.98 GHz<", ">3.20 GHz<", ">4.00 TB/s<",
                        ">60.0 Tflop/s<", ">120.00 ms<", ">1.000 s<"})
    EXPECT_NE(h.find(u), std::string::npos) << u;
  EXPECT_EQ(h.find(">8589934592<"), std::string::npos);
  // the run's attributes in reading order, an empty job id said plainly
  EXPECT_LT(h.find("<th>start_utc</th>"), h.find("<th>end_utc</th>"));
  EXPECT_NE(h.find("<th>job_id</th><td>- (not a batch job)</td>"), std::string::npos);
}

}  // namespace

TEST(Formats, HtmlAndXmlEscapeMarkupAndXmlDropsControlCharacters) {
  using sb::results::detail::html_escape;
  using sb::results::detail::xml_escape;
  const std::string in = std::string("a<b>&\"c'\x01\td\n");
  EXPECT_EQ(html_escape(in), std::string("a&lt;b&gt;&amp;&quot;c&#39;\x01\td\n"));
  EXPECT_EQ(xml_escape(in), "a&lt;b&gt;&amp;&quot;c&apos;\td\n");
}
