// Node acceptance verdicts (issue #30 item 3) on synthetic fleets: one slow device among 4, 8
// and 64 is named and only it; a fleet with none slow gets no false verdict; small fleets,
// references, throttling, slower vector units and failures; reference files; the /verdicts
// table and JUnit.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include <fmt/format.h>

#include "scalebench/references.hpp"
#include "scalebench/report.hpp"
#include "scalebench/verdicts.hpp"
#include "synthetic_model.hpp"

namespace {

using nlohmann::json;
using sb::results::judge_devices;
using sb::results::ReferenceSet;

constexpr const char* kParams = sb::results::test::kEachGpuParams;

json device(int n, int g, double median_s, const std::string& model = "NVIDIA H200") {
  return sb::results::test::each_gpu_record(n, g, median_s, model);
}

/// One each-node record: node `n`, CPU model `model`, median `median_s`.
json node(int n, double median_s, const std::string& model) {
  json c = device(n, 0, median_s);
  c["path"] = "each-node";
  c["gpu"] = -1;
  c["device_model"] = model;
  c["device_id"] = "node" + std::to_string(n);
  return c;
}

/// A fleet of `devices` GPUs (8 per node) with medians 24.8 ms +-1.5% noise; device `slow`
/// (if >= 0) `factor` times slower.
json fleet(int devices, int slow, double factor, unsigned seed = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> noise(-0.015, 0.015);
  json cases = json::array();
  for (int i = 0; i < devices; ++i) {
    double m = 0.0248 * (1.0 + noise(rng));
    if (i == slow) m *= factor;
    cases.push_back(device(i / 8, i % 8, m));
  }
  return {{"attrs", {{"schema_version", 1}}}, {"cases", cases}};
}

std::vector<std::string> not_ok(const json& verdicts) {
  std::vector<std::string> out;
  for (const auto& v : verdicts)
    if (v["verdict"] != "ok")
      out.push_back(v["host"].get<std::string>() + "/" + std::to_string(v["device"].get<int>()));
  return out;
}

TEST(Verdicts, OneSlowDeviceAmongManyIsNamedAndOnlyIt) {
  for (const int n : {4, 8, 64}) {
    for (const int slow : {0, n / 2, n - 1}) {
      const json v = judge_devices(fleet(n, slow, 1.14, 7u + n + slow), ReferenceSet{});
      ASSERT_EQ(v.size(), static_cast<std::size_t>(n));
      const std::string want = "node" + std::to_string(slow / 8) + "/" + std::to_string(slow % 8);
      EXPECT_EQ(not_ok(v), std::vector<std::string>{want}) << n << " devices, slow " << slow;
      const json& row = v[static_cast<std::size_t>(slow)];
      EXPECT_EQ(row["verdict"], "slow");
      const std::string reason = row["reason"];
      EXPECT_EQ(reason.rfind(fmt::format("GPU {} on node{}: ", slow % 8, slow / 8), 0), 0u)
          << reason;
      EXPECT_NE(reason.find(fmt::format("its {} peers", n - 1)), std::string::npos) << reason;
      EXPECT_NEAR(row["expected"].get<double>(), 0.0248, 0.0248 * 0.02);
    }
  }
}

TEST(Verdicts, NoneSlowGivesNoFalseVerdict) {
  for (const int n : {2, 3, 4, 8, 64})
    for (unsigned seed = 1; seed <= 20; ++seed)
      EXPECT_TRUE(not_ok(judge_devices(fleet(n, -1, 1.0, seed), ReferenceSet{})).empty())
          << n << " devices, seed " << seed;
}

TEST(Verdicts, SmallFleetsUseARelativeThresholdAndALoneDeviceIsNotJudged) {
  EXPECT_EQ(not_ok(judge_devices(fleet(2, 1, 1.15, 3), ReferenceSet{})),
            std::vector<std::string>{"node0/1"});
  EXPECT_TRUE(not_ok(judge_devices(fleet(2, 1, 1.05, 3), ReferenceSet{})).empty());
  EXPECT_EQ(not_ok(judge_devices(fleet(3, 2, 1.15, 3), ReferenceSet{})),
            std::vector<std::string>{"node0/2"});
  const json one = judge_devices(fleet(1, -1, 1.0), ReferenceSet{});
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0]["verdict"], "not judged");
  EXPECT_NE(one[0]["reason"].get<std::string>().find("not judged"), std::string::npos);
}

// Three nodes sharing a busy machine (tests/batch/slurm_each_node.sh): one is held back, another
// wobbles; the middle of the three is the figure, so only the held-back node is named.
TEST(Verdicts, ThreeDevicesAreJudgedAgainstTheMiddleOne) {
  json cases = json::array();
  const double medians[] = {1.440, 1.914, 3.412};
  for (int n = 0; n < 3; ++n) cases.push_back(device(n, 0, medians[n]));
  const json v = judge_devices({{"cases", cases}}, ReferenceSet{});
  EXPECT_EQ(not_ok(v), std::vector<std::string>{"node2/0"});
  EXPECT_NE(v[2]["reason"].get<std::string>().find("78% slower than the median of the 3 devices"),
            std::string::npos)
      << v[2]["reason"];
  EXPECT_DOUBLE_EQ(v[2]["expected"].get<double>(), 1.914);
}

TEST(Verdicts, PeersAreDevicesOfTheSameModel) {
  json m = fleet(8, -1, 1.0);
  // Two H100s, each 30% slower than the H200s: peers of each other only.
  m["cases"].push_back(device(9, 0, 0.0248 * 1.3, "NVIDIA H100 80GB HBM3"));
  m["cases"].push_back(device(9, 1, 0.0248 * 1.31, "NVIDIA H100 80GB HBM3"));
  EXPECT_TRUE(not_ok(judge_devices(m, ReferenceSet{})).empty());
}

TEST(Verdicts, AReferenceJudgesALoneDeviceAndAWholeSlowFleet) {
  ReferenceSet refs;
  sb::results::read_references_text(
      std::string("[[reference]]\nmodel = \"NVIDIA H200*\"\ncase = \"subset-mean/single-gpu/") +
          kParams + "\"\nmedian_s = 0.0248\ntolerance = 0.10\nsource = \"test\"\n",
      "h200.toml", refs);
  // Every device of the fleet 20% slower: peers agree with each other, the reference does not.
  json m = fleet(4, -1, 1.0);
  for (auto& c : m["cases"])
    c["metrics"]["median_s"] = c["metrics"]["median_s"].get<double>() * 1.2;
  const json v = judge_devices(m, refs);
  EXPECT_EQ(not_ok(v).size(), 4u);
  EXPECT_NE(v[0]["reason"].get<std::string>().find("slower than the reference 24.80 ms"),
            std::string::npos)
      << v[0]["reason"];
  EXPECT_DOUBLE_EQ(v[0]["reference_s"].get<double>(), 0.0248);
  EXPECT_DOUBLE_EQ(v[0]["expected"].get<double>(), 0.0248) << "the figure that found it slow";
  const json ok = judge_devices(fleet(1, -1, 1.0), refs);
  EXPECT_EQ(ok[0]["verdict"], "ok");
  EXPECT_NE(ok[0]["reason"].get<std::string>().find("within the reference"), std::string::npos);
  EXPECT_DOUBLE_EQ(ok[0]["expected"].get<double>(), 0.0248);
}

TEST(Verdicts, ThrottledAndFailedDevicesSayWhy) {
  json m = fleet(8, 3, 1.2);
  json& slow = m["cases"][3];
  for (auto& r : slow["repeats"]) {
    r["throttled"] = true;
    r["throttle_reason"] = "power cap";
  }
  slow["telemetry"] = {{"repeats", json::array()}};
  for (int r = 0; r < 5; ++r)
    slow["telemetry"]["repeats"].push_back({{"repeat", r},
                                            {"gpu_sm_mhz_median", 1410.0},
                                            {"gpu_app_sm_mhz", 1980.0},
                                            {"gpu_clock_event_reasons", 4}});
  m["cases"][5]["status"] = "failed";
  m["cases"][5]["message"] = "rank 6: CUDA error: an illegal memory access";
  // A device with an XID during the case fails, fast or not.
  m["cases"][6]["telemetry"] = {
      {"repeats", {{{"repeat", 0}, {"gpu_xid", 1.0}, {"gpu_last_xid", 79.0}}}}};
  const json v = judge_devices(m, ReferenceSet{});
  EXPECT_EQ(v[3]["verdict"], "throttled");
  const std::string why = v[3]["reason"];
  EXPECT_NE(why.find("SM clock 1410 MHz of 1980"), std::string::npos) << why;
  EXPECT_NE(why.find("power cap active in 5 of 5 repeats"), std::string::npos) << why;
  EXPECT_EQ(v[5]["verdict"], "failed");
  EXPECT_NE(v[5]["reason"].get<std::string>().find("illegal memory access"), std::string::npos);
  EXPECT_EQ(v[6]["verdict"], "failed");
  EXPECT_NE(v[6]["reason"].get<std::string>().find("last XID 79"), std::string::npos);
  EXPECT_EQ(not_ok(v).size(), 3u);
  const std::string text = sb::results::format_verdicts_text(v);
  EXPECT_NE(text.find("3 of 8 devices not ok"), std::string::npos) << text;
  EXPECT_NE(text.find("throttled GPU 3 on node0"), std::string::npos) << text;
}

TEST(Verdicts, ACgroupQuotaMakesASlowNodeThrottled) {
  json cases = json::array();
  for (int n = 0; n < 3; ++n) {
    json c = node(n, n == 2 ? 1.9 : 0.4, "Intel Xeon");
    if (n == 2) c["interference"] = {{"other_cpu_fraction", 0.1}, {"cgroup_throttled_s", 6.0}};
    cases.push_back(c);
  }
  const json v = judge_devices({{"cases", cases}}, ReferenceSet{});
  EXPECT_EQ(not_ok(v), std::vector<std::string>{"node2/-1"});
  EXPECT_EQ(v[2]["verdict"], "throttled");
  EXPECT_NE(v[2]["reason"].get<std::string>().find("node node2: "), std::string::npos);
  EXPECT_NE(v[2]["reason"].get<std::string>().find("cgroup's CPU quota"), std::string::npos)
      << v[2]["reason"];
  EXPECT_EQ(sb::results::format_verdicts_text(judge_devices(fleet(4, -1, 1.0), ReferenceSet{})),
            "verdicts: all 4 devices ok (1 case)\n");
}

TEST(Verdicts, ASlowNodeWhoseVectorUnitsRanSlowerSaysSo) {
  json cases = json::array();
  for (int n = 0; n < 4; ++n) {
    json c = node(n, n == 3 ? 0.62 : 0.52, "AMD EPYC");
    c["interference"] = {{"other_cpu_fraction", 0.0},
                         {"vector_probe_s", n == 3 ? 15.8e-6 : (n == 1 ? 9.2e-6 : 9.0e-6)}};
    cases.push_back(c);
  }
  const json v = judge_devices({{"cases", cases}}, ReferenceSet{});
  EXPECT_EQ(not_ok(v), std::vector<std::string>{"node3/-1"});
  EXPECT_EQ(v[3]["verdict"], "slow");
  EXPECT_NE(v[3]["reason"].get<std::string>().find(
                "its vector units ran 76% slower than its peers' (the vector probe, 15.8 us "
                "against 9.0 us)"),
            std::string::npos)
      << v[3]["reason"];
  for (int n = 0; n < 3; ++n)
    EXPECT_EQ(v[n]["reason"].get<std::string>().find("vector"), std::string::npos) << n;
}

TEST(References, BadFilesAreOneLineWithTheirPlace) {
  ReferenceSet set;
  auto bad = [&](const std::string& text) {
    try {
      sb::results::read_references_text(text, "r.toml", set);
    } catch (const sb::UsageError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(bad("[[reference]]\nmodel = \"x\"\n").find("needs model, case and median_s"),
            std::string::npos);
  EXPECT_NE(bad("[[reference]]\nmodel=\"x\"\ncase=\"a/b/c\"\nmedian_s=-1\n").find("above 0"),
            std::string::npos);
  EXPECT_NE(bad("[[reference]]\nmodel=\"x\"\ncase=\"a/b/c\"\nmedian_s=1\nspeed=2\n")
                .find("r.toml:5: unknown or mistyped key 'speed'"),
            std::string::npos);
  EXPECT_NE(bad("[[reference]]\nmodel=\"x\"\ncase=\"nopath\"\nmedian_s=1\n")
                .find("not workload/path/parameters"),
            std::string::npos);
  EXPECT_NE(bad("title = 3\n").find("unknown key 'title'"), std::string::npos);
  EXPECT_NE(bad("[[reference]\n").find("r.toml:1:"), std::string::npos);
}

TEST(References, MadeFromARunTheyJudgeThatRunOk) {
  const json m = fleet(8, -1, 1.0);
  const std::string text = sb::results::make_references(m, 0.10, "good.h5");
  ReferenceSet refs;
  sb::results::read_references_text(text, "made.toml", refs);
  ASSERT_EQ(refs.entries.size(), 1u);
  EXPECT_EQ(refs.entries[0].model, "NVIDIA H200");
  EXPECT_EQ(refs.entries[0].path, "single-gpu");
  EXPECT_NEAR(refs.entries[0].median_s, 0.0248, 0.0248 * 0.02);
  EXPECT_GE(refs.entries[0].tolerance, 0.10);
  EXPECT_TRUE(not_ok(judge_devices(m, refs)).empty());
  EXPECT_THROW((void)sb::results::make_references({{"cases", json::array()}}, 0.1, "x.h5"),
               sb::UsageError);
}

TEST(References, TheShippedFilesRead) {
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(SB_SOURCE_DIR) /
                                                           "examples/references")) {
    ReferenceSet refs;
    ASSERT_NO_THROW(sb::results::read_references(e.path().string(), refs)) << e.path();
    EXPECT_FALSE(refs.entries.empty()) << e.path();
  }
}

TEST(VerdictsReport, TheTableRoundTripsAndJunitNamesTheFailingGpu) {
  sb::results::test::TempDir dir("verdicts");
  json m = fleet(8, 5, 1.3);
  m["verdicts"] = judge_devices(m, ReferenceSet{});
  const std::string path = dir.file("r.h5");
  sb::results::write_report(m, path);
  const json back = sb::results::read_report(path);
  ASSERT_TRUE(back.contains("verdicts"));
  ASSERT_EQ(back["verdicts"].size(), 8u);
  EXPECT_EQ(back["verdicts"][5]["verdict"], "slow");
  EXPECT_EQ(back["verdicts"][5]["host"], "node0");
  EXPECT_EQ(back["verdicts"][5]["device"], 5);
  const std::string junit = sb::results::format_report(back, "junit");
  EXPECT_NE(junit.find("failures=\"1\""), std::string::npos) << junit;
  EXPECT_NE(junit.find("name=\"GPU 5 on node0: subset-mean/each-gpu/"), std::string::npos);
  EXPECT_NE(junit.find("<failure type=\"slow\""), std::string::npos);
  const std::string csv = sb::results::format_report(back, "csv");
  EXPECT_NE(csv.find(",slow,"), std::string::npos) << csv;
  const std::string md = sb::results::format_report(back, "markdown");
  EXPECT_NE(md.find("### Verdicts"), std::string::npos);
  const std::string table = sb::results::format_report(back, "table");
  EXPECT_NE(table.find("verdicts: 1 of 8 devices not ok"), std::string::npos) << table;
  const json j = json::parse(sb::results::format_report(back, "json"));
  EXPECT_EQ(j["verdicts"].size(), 8u);
  const std::string html = sb::results::format_report(back, "html");
  EXPECT_NE(html.find("data-chart=\"verdicts\""), std::string::npos);
  EXPECT_NE(html.find("data-legend=\"verdicts\""), std::string::npos);
}

// The HTML page of a two-node fleet: a cell per GPU in the heat map, the throttled GPU's cell
// in its colour with its reason, and its telemetry timeline with the throttled repeats shaded.
TEST(VerdictsReport, TheHeatMapHasACellPerGpuAndTheTimelineShadesThrottledRepeats) {
  json m = fleet(16, 11, 1.25);
  json& slow = m["cases"][11];
  json rows = json::array(),
       series = {{"t", json::array()},           {"repeat", json::array()},
                 {"worker", json::array()},      {"gpu_sm_mhz", json::array()},
                 {"gpu_power_w", json::array()}, {"gpu_temp_c", json::array()}};
  for (int r = 0; r < 5; ++r) {
    const bool capped = r >= 2;
    slow["repeats"][r]["throttled"] = capped;
    if (capped) slow["repeats"][r]["throttle_reason"] = "power cap";
    rows.push_back({{"repeat", r},
                    {"worker", 0},
                    {"t_begin", 0.04 * r},
                    {"t_end", 0.04 * r + 0.03},
                    {"throttled", capped},
                    {"throttle_reason", capped ? "power cap" : ""},
                    {"gpu_sm_mhz_median", capped ? 1410.0 : 1980.0},
                    {"gpu_app_sm_mhz", 1980.0},
                    {"gpu_clock_event_reasons", capped ? 4 : 0}});
    for (int k = 0; k < 4; ++k) {
      series["t"].push_back(0.04 * r + 0.01 * k);
      series["repeat"].push_back(r);
      series["worker"].push_back(0);
      series["gpu_sm_mhz"].push_back(capped ? 1410.0 : 1980.0);
      series["gpu_power_w"].push_back(capped ? 699.0 : 610.0);
      series["gpu_temp_c"].push_back(60.0 + r);
    }
  }
  slow["telemetry"] = {{"period_s", 0.01}, {"repeats", rows}, {"series", series}};
  m["verdicts"] = judge_devices(m, ReferenceSet{});
  EXPECT_EQ(m["verdicts"][11]["verdict"], "throttled") << m["verdicts"][11].dump();
  const std::string html = sb::results::format_report(m, "html");
  std::size_t cells = 0;
  for (auto at = html.find("data-verdict=\""); at != std::string::npos;
       at = html.find("data-verdict=\"", at + 1))
    ++cells;
  EXPECT_EQ(cells, 16u) << "two nodes x eight GPUs";
  EXPECT_NE(html.find("data-verdict=\"throttled\"><title>node1 GPU 3"), std::string::npos);
  EXPECT_NE(html.find("data-chart=\"telemetry\""), std::string::npos);
  EXPECT_NE(html.find("<title>repeat 2 throttled: power cap</title>"), std::string::npos);
  EXPECT_NE(html.find("a repeat that ran throttled"), std::string::npos) << "its legend key";
}

/// A comms pair matrix of 4 GPUs on node0 as the workload records it (metrics/links, each link
/// judged against its kind's peers by workloads/comms/link_health.cpp, and the judgements in
/// the contract's generic metrics/verdicts): GPU 3 -> GPU 1 slow.
json pair_matrix_case() {
  json links = json::array();
  json verdicts = json::array();
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      if (i == j) continue;
      const bool slow = i == 3 && j == 1;
      links.push_back(
          {{"src", i},
           {"dst", j},
           {"src_name", fmt::format("GPU {}", i)},
           {"dst_name", fmt::format("GPU {}", j)},
           {"src_host", "node0"},
           {"src_gpu", i},
           {"dst_host", "node0"},
           {"dst_gpu", j},
           {"kind", "NVLink"},
           {"bandwidth_gbps", slow ? 41.0 : 370.0},
           {"latency_us", 3.0},
           {"slow", slow},
           {"peers", 11},
           {"peer_bandwidth_gbps", 370.0},
           {"health", slow ? "41.0 GB/s, median of its 11 NVLink peers 370 GB/s"
                           : "370 GB/s, within its 11 NVLink peers (median 370 GB/s)"}});
      verdicts.push_back({{"subject", fmt::format("GPU {} -> GPU {}", i, j)},
                          {"host", "node0"},
                          {"device", i},
                          {"kind", "NVLink"},
                          {"value", slow ? 41e9 : 370e9},
                          {"unit", "B/s"},
                          {"verdict", slow ? "slow" : "ok"},
                          {"expected", 370e9},
                          {"peers", 11},
                          {"reason", links.back()["health"]}});
    }
  return {{"id", "comms/multi-gpu/op=pairs,seed=42"},
          {"workload", "comms"},
          {"path", "multi-gpu"},
          {"params", {{"op", "pairs"}, {"seed", "42"}}},
          {"device", "gpu"},
          {"workers", 4},
          {"status", "ok"},
          {"repeats", sb::results::test::repeats_of({0.17, 0.17, 0.18})},
          {"metrics", {{"median_s", 0.17}, {"links", links}, {"verdicts", verdicts}}}};
}

// Issue #27 item 3: the verdict table gains a row per link, and the slow one is named.
TEST(VerdictsReport, LinksOfAPairMatrixAreRowsAndTheSlowOneIsNamed) {
  json m = fleet(4, -1, 1.0);
  m["cases"].push_back(pair_matrix_case());
  const json v = judge_devices(m, ReferenceSet{});
  ASSERT_EQ(v.size(), 4u + 12u) << "four GPUs, then twelve links";
  std::vector<std::string> bad;
  for (const auto& row : v) {
    if (row["link"] == "") continue;
    EXPECT_EQ(row["unit"], "B/s");
    EXPECT_EQ(row["model"], "NVLink");
    if (row["verdict"] != "ok") bad.push_back(row["link"].get<std::string>());
  }
  ASSERT_EQ(bad, std::vector<std::string>{"GPU 3 -> GPU 1"});
  const json& slow = v[4 + 10];  // GPU 3's links come last: -> 0, -> 1, -> 2
  EXPECT_EQ(slow["verdict"], "slow");
  EXPECT_EQ(slow["host"], "node0");
  EXPECT_EQ(slow["device"], 3);
  EXPECT_DOUBLE_EQ(slow["value"].get<double>(), 41e9);
  EXPECT_DOUBLE_EQ(slow["expected"].get<double>(), 370e9);
  EXPECT_EQ(slow["reason"], "GPU 3 -> GPU 1: 41.0 GB/s, median of its 11 NVLink peers 370 GB/s");
  const std::string text = sb::results::format_verdicts_text(v);
  EXPECT_NE(text.find("verdicts: 0 of 4 devices, 1 of 12 links not ok (1 of 16 verdicts)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("slow      link GPU 3 -> GPU 1 on node0  comms/multi-gpu/op=pairs,seed=42  "
                      "41.0 GB/s (expected 370 GB/s)"),
            std::string::npos)
      << text;
  m["verdicts"] = v;
  const std::string junit = sb::results::format_report(m, "junit");
  EXPECT_NE(junit.find("name=\"link GPU 3 -&gt; GPU 1 on node0: comms/multi-gpu/"),
            std::string::npos)
      << junit;
  const std::string html = sb::results::format_report(m, "html");
  std::size_t cells = 0;
  for (auto at = html.find("data-verdict=\""); at != std::string::npos;
       at = html.find("data-verdict=\"", at + 1))
    ++cells;
  EXPECT_EQ(cells, 4u) << "the heat map has the GPUs; links have the pair matrix";
  m["cases"][4]["metrics"]["verdicts"][10]["verdict"] = "ok";
  EXPECT_EQ(sb::results::format_verdicts_text(judge_devices(m, ReferenceSet{})),
            "verdicts: all 4 devices, 12 links ok (2 cases)\n");
}

}  // namespace
