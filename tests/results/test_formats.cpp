// `scalebench report --format`: table, markdown, csv, json, gbench-json, html.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "format_util.hpp"
#include "scalebench/error.hpp"
#include "scalebench/report.hpp"
#include "scalebench/stats.hpp"
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
  EXPECT_NE(t.find("| case | status | reps |"), std::string::npos) << t;
  EXPECT_NE(t.find("|---|---|---:|"), std::string::npos) << t;
  EXPECT_EQ(count(t, "| subset-mean/"), 4u);
}

TEST(Formats, Csv) {
  const json m = make_model();
  const auto ls = lines(format_report(m, "csv"));
  ASSERT_EQ(ls.size(), m["cases"].size() + 1);
  EXPECT_EQ(ls[0],
            "case,workload,path,workers,status,repeats,median_s,min_s,max_s,stddev_s,throughput,"
            "throughput_unit,speedup_vs_single_cpu,speedup_vs_single_gpu,efficiency,ceiling");
  EXPECT_EQ(
      ls[2].rfind(
          "\"subset-mean/multi-cpu/chunk=500,n=2000,seed=42\",subset-mean,multi-cpu,2,ok,5,0.5,",
          0),
      0u)
      << ls[2];
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

}  // namespace

TEST(Formats, HtmlAndXmlEscapeMarkupAndXmlDropsControlCharacters) {
  using sb::results::detail::html_escape;
  using sb::results::detail::xml_escape;
  const std::string in = std::string("a<b>&\"c'\x01\td\n");
  EXPECT_EQ(html_escape(in), std::string("a&lt;b&gt;&amp;&quot;c&#39;\x01\td\n"));
  EXPECT_EQ(xml_escape(in), "a&lt;b&gt;&amp;&quot;c&apos;\td\n");
}
