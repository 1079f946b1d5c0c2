// Node acceptance names the cause (issue #50) on synthetic fleets: a GPU shared with another
// process is `busy` and names it (not `throttled`, not `slow`); throttle reasons count only
// when nothing shared it; a device nothing judged says `not judged` (text, JUnit, the devices
// run --check turns into exit 5); health fields are judged with their reasons; host links
// against peers, references and the PCIe link's nominal rate; energy per answer in the
// tables and an `inefficient` device against its peers.
#include <gtest/gtest.h>

#include <cmath>
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

json fleet(int devices, int slow = -1, double factor = 1.0) {
  json cases = json::array();
  for (int i = 0; i < devices; ++i)
    cases.push_back(device(i / 8, i % 8, i == slow ? 0.0248 * factor : 0.0248 * (1 + 0.001 * i)));
  return {{"attrs", {{"schema_version", 1}}}, {"cases", cases}};
}

/// python3 (pid 441) on the record's GPU during `readings` of its 10 readings.
void share(json& c, double sm_pct, int readings = 10) {
  c["interference"]["gpu_processes"] = json::array({{{"host", c["host"]},
                                                     {"gpu", c["gpu"]},
                                                     {"pid", 441},
                                                     {"name", "python3"},
                                                     {"user", "root"},
                                                     {"command", "python3 -c import torch"},
                                                     {"memory_bytes", 2.25e9},
                                                     {"sm_util_max", sm_pct},
                                                     {"sm_util_median", sm_pct},
                                                     {"seen_before", true},
                                                     {"readings", readings},
                                                     {"of_readings", 10}}});
  c["interference"]["gpu_other_processes"] = 1;
  c["interference"]["gpu_others_sm_pct"] = sm_pct;
}

/// The power cap in every repeat and the SM clock under the application clock.
void power_capped(json& c) {
  c["telemetry"] = {{"repeats", json::array()}};
  for (int r = 0; r < 5; ++r) {
    c["repeats"][static_cast<std::size_t>(r)]["throttled"] = true;
    c["telemetry"]["repeats"].push_back({{"repeat", r},
                                         {"gpu_sm_mhz_median", 1838.0},
                                         {"gpu_app_sm_mhz", 1980.0},
                                         {"gpu_clock_event_reasons", 4}});
  }
}

json row_of(const json& verdicts, const std::string& host, int gpu, const std::string& workload) {
  for (const auto& v : verdicts)
    if (v["host"] == host && v["device"] == gpu && v["workload"] == workload) return v;
  return nullptr;
}

TEST(AcceptanceCauses, AGpuSharedWithAnotherProcessIsBusyAndNamesIt) {
  // One H200 with the shipped reference, 3x slower, with a GEMM loop of another process on it
  // and the power cap its work brought: busy, naming the process, not throttled.
  json m = fleet(1, 0, 74.03 / 24.79);
  share(m["cases"][0], 98);
  power_capped(m["cases"][0]);
  ReferenceSet refs;
  sb::results::read_references_text(
      fmt::format("[[reference]]\nmodel = \"NVIDIA H200*\"\ncase = "
                  "\"subset-mean/single-gpu/{}\"\nmedian_s = 0.02479\n",
                  kParams),
      "h200.toml", refs);
  const json v = judge_devices(m, refs);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0]["verdict"], "busy");
  const std::string why = v[0]["reason"];
  EXPECT_NE(why.find("slower than the reference"), std::string::npos) << why;
  EXPECT_NE(why.find("shared with python3 (pid 441, root, 2.1 GiB, up to 98% SM) while it ran"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("the other processes using 98% of its SMs"), std::string::npos) << why;
  EXPECT_NE(why.find("power cap active in 5 of 5 repeats"), std::string::npos) << why;
  const std::string text = sb::results::format_verdicts_text(v);
  EXPECT_NE(text.find("busy      GPU 0 on node0"), std::string::npos) << text;

  // The same slowness with nothing else on the GPU: the power cap is the cause.
  json alone = fleet(1, 0, 74.03 / 24.79);
  power_capped(alone["cases"][0]);
  EXPECT_EQ(judge_devices(alone, refs)[0]["verdict"], "throttled");
  // Nor with peers: among 8 GPUs the shared one is busy, the others ok.
  json eight = fleet(8, 2, 3.0);
  share(eight["cases"][2], 97);
  const json ev = judge_devices(eight, ReferenceSet{});
  for (int g = 0; g < 8; ++g) EXPECT_EQ(ev[g]["verdict"], g == 2 ? "busy" : "ok") << g;
}

TEST(AcceptanceCauses, AnotherProcessMakesADeviceBusyOnlyWhenItComputed) {
  // As fast as its peers but the others took 40% of its SMs: what it measured was a shared GPU.
  json m = fleet(4);
  share(m["cases"][1], 40);
  EXPECT_EQ(judge_devices(m, ReferenceSet{})[1]["verdict"], "busy");
  // An idle process holding memory on a GPU that ran as fast as its peers: ok, but named.
  json idle = fleet(4);
  share(idle["cases"][1], 0);
  const json v = judge_devices(idle, ReferenceSet{});
  EXPECT_EQ(v[1]["verdict"], "ok");
  EXPECT_NE(v[1]["reason"].get<std::string>().find("python3 (pid 441"), std::string::npos);
  // Seen only as the case began, gone while it ran: not busy, but said.
  json before = fleet(4, 1, 1.5);
  share(before["cases"][1], 90, 0);
  const json b = judge_devices(before, ReferenceSet{});
  EXPECT_EQ(b[1]["verdict"], "slow");
  EXPECT_NE(b[1]["reason"].get<std::string>().find("on it as the case began"), std::string::npos)
      << b[1]["reason"];
  // NVML's pids from another pid namespace: the processes are named, not judged busy.
  json foreign = fleet(4, 1, 1.5);
  share(foreign["cases"][1], 90);
  foreign["cases"][1]["interference"]["gpu_processes_note"] =
      "NVML's process ids are not this container's";
  const json f = judge_devices(foreign, ReferenceSet{});
  EXPECT_EQ(f[1]["verdict"], "slow");
  EXPECT_NE(f[1]["reason"].get<std::string>().find("not this container's"), std::string::npos);
}

TEST(AcceptanceCauses, ADeviceNothingJudgedSaysSoEverywhere) {
  const json one = judge_devices(fleet(1), ReferenceSet{});
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0]["verdict"], "not judged");
  EXPECT_EQ(sb::results::count_not_ok(one), 0u);
  const auto unjudged = sb::results::unjudged_devices(one);
  ASSERT_EQ(unjudged.size(), 1u);
  EXPECT_EQ(unjudged[0].first, "node0");
  EXPECT_EQ(unjudged[0].second, 0);
  const std::string text = sb::results::format_verdicts_text(one);
  EXPECT_EQ(text.find("verdicts: 0 of 1 device ok, 1 not judged (1 case)\n"), 0u) << text;
  EXPECT_NE(text.find("not judged GPU 0 on node0"), std::string::npos) << text;
  EXPECT_EQ(text.find("all 1 device ok"), std::string::npos) << text;
  // JUnit: skipped, not passed.
  json m = fleet(1);
  m["verdicts"] = one;
  const std::string junit = sb::results::format_report(m, "junit");
  EXPECT_NE(junit.find("failures=\"0\" errors=\"0\" skipped=\"1\""), std::string::npos) << junit;
  EXPECT_NE(junit.find("<skipped message=\"not judged: GPU 0 on node0: no peer"), std::string::npos)
      << junit;
  // Judged devices beside one that nothing judged: the tally says both.
  json mixed = fleet(3);
  mixed["cases"].push_back(device(1, 0, 0.030, "NVIDIA H100"));
  const json mv = judge_devices(mixed, ReferenceSet{});
  EXPECT_EQ(sb::results::unjudged_devices(mv).size(), 1u);
  EXPECT_NE(sb::results::format_verdicts_text(mv).find("3 of 4 devices ok, 1 not judged"),
            std::string::npos)
      << sb::results::format_verdicts_text(mv);
}

/// /system/gpu_health rows of one GPU, every field available and healthy unless overridden.
json health(const std::string& host, int gpu, const json& over = json::object()) {
  json fields = {
      {"pcie_generation", {{"value", "Gen5"}, {"number", 5}, {"expected", 5}}},
      {"pcie_width", {{"value", "x16"}, {"number", 16}, {"expected", 16}}},
      {"row_remap_pending", {{"value", "no"}, {"number", 0}, {"expected", 0}}},
      {"row_remap_failed", {{"value", "no"}, {"number", 0}, {"expected", 0}}},
      {"rows_remapped", {{"value", "0 (0 correctable, 0 uncorrectable)"}, {"number", 0}}},
      {"nvlink_links", {{"value", "18 up of 18"}, {"number", 18}, {"expected", 18}}},
      {"nvlink_errors", {{"value", "CRC 0, replay 0, recovery 0"}, {"number", 0}}},
      {"persistence_mode", {{"value", "on"}, {"number", 1}}},
      {"compute_mode", {{"value", "default"}, {"number", 0}}},
      {"ecc_mode", {{"value", "on"}, {"number", 1}, {"expected", 1}}},
      {"app_sm_clock", {{"value", "1980 MHz"}, {"number", 1980}, {"expected", 1980}}},
      {"app_mem_clock", {{"value", "3201 MHz"}, {"number", 3201}, {"expected", 3201}}},
      {"power_limit", {{"value", "700 W"}, {"number", 700}, {"expected", 700}}},
      {"inforom", {{"value", "valid"}, {"number", 1}, {"expected", 1}}},
      {"driver", {{"value", "580.95.05"}}},
      {"vbios", {{"value", "96.00.AF.00.01"}}},
      {"numa_node", {{"value", "0"}, {"number", 0}}}};
  fields.update(over);
  json rows = json::array();
  for (const auto& [name, f] : fields.items()) {
    json r = {{"host", host},           {"node_gpu", gpu}, {"pci_bus_id", "0000:19:00.0"},
              {"model", "NVIDIA H200"}, {"field", name},   {"number", nullptr},
              {"expected", nullptr},    {"detail", ""}};
    r.update(f);
    rows.push_back(r);
  }
  return rows;
}

TEST(AcceptanceCauses, HealthFieldsAreJudgedEachWithItsReason) {
  json m = fleet(4);
  json rows = json::array();
  for (int g = 0; g < 4; ++g) {
    json over = json::object();
    if (g == 1) {
      over["pcie_width"] = {{"value", "x8"}, {"number", 8}, {"expected", 16}};
      over["row_remap_pending"] = {{"value", "yes"}, {"number", 1}, {"expected", 0}};
    }
    if (g == 2) {
      over["nvlink_links"] = {{"value", "17 up of 18: 3 down"},
                              {"number", 17},
                              {"expected", 18},
                              {"detail", "down: 3"}};
      over["vbios"] = {{"value", "96.00.74.00.1C"}};
      over["app_sm_clock"] = {{"value", "1500 MHz"}, {"number", 1500}, {"expected", 1980}};
    }
    if (g == 3) {
      // A VM that hides everything: unavailable, never ok.
      for (const char* f :
           {"pcie_generation", "pcie_width", "row_remap_pending", "row_remap_failed",
            "rows_remapped", "nvlink_links", "nvlink_errors", "persistence_mode", "compute_mode",
            "ecc_mode", "app_sm_clock", "app_mem_clock", "power_limit", "inforom", "driver",
            "vbios", "numa_node"})
        over[f] = {{"value", "unavailable"}, {"detail", "NVML: Not Supported"}};
    }
    for (const auto& r : health("node0", g, over)) rows.push_back(r);
  }
  m["system"]["gpu_health"] = rows;
  const json v = judge_devices(m, ReferenceSet{});
  EXPECT_EQ(row_of(v, "node0", 0, "health")["verdict"], "ok");
  EXPECT_NE(
      row_of(v, "node0", 0, "health")["reason"].get<std::string>().find("17 health fields ok"),
      std::string::npos)
      << row_of(v, "node0", 0, "health");
  const json g1 = row_of(v, "node0", 1, "health");
  EXPECT_EQ(g1["verdict"], "unhealthy");
  EXPECT_NE(g1["reason"].get<std::string>().find("PCIe x8 of x16"), std::string::npos) << g1;
  EXPECT_NE(g1["reason"].get<std::string>().find("row remapping pending"), std::string::npos);
  const json g2 = row_of(v, "node0", 2, "health");
  EXPECT_EQ(g2["verdict"], "unhealthy");
  const std::string r2 = g2["reason"];
  EXPECT_NE(r2.find("NVLink 3 down"), std::string::npos) << r2;
  EXPECT_NE(r2.find("VBIOS 96.00.74.00.1C differs from 2 of its 3 peers' 96.00.AF.00.01"),
            std::string::npos)
      << r2;
  EXPECT_NE(r2.find("application SM clock lowered: 1500 MHz of the default 1980"),
            std::string::npos)
      << r2;
  const json g3 = row_of(v, "node0", 3, "health");
  EXPECT_EQ(g3["verdict"], "not judged");
  EXPECT_NE(g3["reason"].get<std::string>().find("17 unavailable"), std::string::npos) << g3;
  // Health rows never make a device "judged": its case row does.
  EXPECT_TRUE(sb::results::unjudged_devices(v).empty());
  const std::string text = sb::results::format_verdicts_text(v);
  EXPECT_NE(text.find("unhealthy GPU 1 on node0  health"), std::string::npos) << text;
  // The report keeps the health rows as a table and gives the verdicts back.
  sb::results::test::TempDir dir("health");
  m["verdicts"] = v;
  sb::results::write_report(m, dir.file("r.h5"));
  const json back = sb::results::read_report(dir.file("r.h5"));
  EXPECT_EQ(back["system"]["gpu_health"].size(), 4u * 17u);
  EXPECT_EQ(row_of(back["verdicts"], "node0", 1, "health")["verdict"], "unhealthy");
}

TEST(AcceptanceCauses, PersistenceOffIsAFindingOnlyUnlikeItsNode) {
  json m = fleet(2);
  json rows = health("node0", 0, {{"persistence_mode", {{"value", "off"}, {"number", 0}}}});
  for (const auto& r : health("node0", 1)) rows.push_back(r);
  m["system"]["gpu_health"] = rows;
  EXPECT_EQ(row_of(judge_devices(m, ReferenceSet{}), "node0", 0, "health")["verdict"], "unhealthy");
  json lone = fleet(1);
  lone["system"]["gpu_health"] =
      health("node0", 0, {{"persistence_mode", {{"value", "off"}, {"number", 0}}}});
  const json h = row_of(judge_devices(lone, ReferenceSet{}), "node0", 0, "health");
  EXPECT_EQ(h["verdict"], "ok");
  EXPECT_NE(h["reason"].get<std::string>().find("persistence mode off"), std::string::npos);
}

json link(const std::string& host, int gpu, const std::string& dir, double bw,
          const json& over = json::object()) {
  json l = {{"host", host},
            {"node_gpu", gpu},
            {"pci_bus_id", "0000:19:00.0"},
            {"model", "NVIDIA H200"},
            {"direction", dir},
            {"bytes_per_s", bw},
            {"bytes", 134217728.0},
            {"error", ""},
            {"pcie_generation", 5},
            {"pcie_width", 16},
            {"pcie_generation_max", 5},
            {"pcie_width_max", 16},
            {"gpu_numa_node", gpu < 4 ? 0 : 1},
            {"host_numa_node", gpu < 4 ? 0 : 1},
            {"others", 0},
            {"other_processes", ""}};
  l.update(over);
  return l;
}

TEST(AcceptanceCauses, HostLinksAreJudgedAgainstPeersReferencesAndTheirPcieLink) {
  json m = fleet(8);
  json links = json::array();
  for (int g = 0; g < 8; ++g)
    for (const char* dir : {"host-to-device", "device-to-host"}) {
      json over = json::object();
      double bw = 53e9 * (1 + 0.002 * g);
      if (g == 5) {  // a degraded link
        over = {{"pcie_width", 8}};
        bw = 26e9;
      }
      if (g == 6 && std::string(dir) == "host-to-device") {  // the wrong NUMA node
        over = {{"host_numa_node", 0}};
        bw = 40e9;
      }
      links.push_back(link("node0", g, dir, bw, over));
    }
  m["system"]["host_links"] = links;
  const json v = judge_devices(m, ReferenceSet{});
  std::vector<std::string> slow;
  for (const auto& r : v)
    if (r["workload"] == "link" && r["verdict"] != "ok")
      slow.push_back(fmt::format("{} {}", r["device"].get<int>(), r["case"].get<std::string>()));
  EXPECT_EQ(slow, (std::vector<std::string>{"5 link/host-to-device", "5 link/device-to-host",
                                            "6 link/host-to-device"}));
  for (const auto& r : v) {
    if (r["workload"] != "link" || r["verdict"] == "ok") continue;
    const std::string why = r["reason"];
    EXPECT_EQ(r["unit"], "B/s");
    if (r["device"] == 5)
      EXPECT_NE(why.find("PCIe Gen5 x8 during the copies, of Gen5 x16"), std::string::npos) << why;
    if (r["device"] == 6)
      EXPECT_NE(why.find("its host buffer on NUMA node 0, the GPU on node 1"), std::string::npos)
          << why;
  }
  const std::string text = sb::results::format_verdicts_text(v);
  EXPECT_NE(text.find("slow      GPU 5 on node0  link/host-to-device  26.0 GB/s"),
            std::string::npos)
      << text;

  // Alone, a GPU is judged against its link's nominal rate: Gen5 x16 is 63 GB/s.
  json lone = fleet(1);
  lone["system"]["host_links"] = json::array({link("node0", 0, "host-to-device", 12e9)});
  const json l = row_of(judge_devices(lone, ReferenceSet{}), "node0", 0, "link");
  EXPECT_EQ(l["verdict"], "slow");
  EXPECT_NE(l["reason"].get<std::string>().find("19% of PCIe Gen5 x16's nominal 63.0 GB/s"),
            std::string::npos)
      << l;
  // A reference file's link entry judges it too; no PCIe figures, no peer, no reference: not
  // judged; not measured: says why.
  ReferenceSet refs;
  sb::results::read_references_text(
      "[[reference]]\nmodel = \"NVIDIA H200\"\ncase = \"link/host-to-device\"\nbytes_per_s = "
      "5.3e10\ntolerance = 0.15\n",
      "links.toml", refs);
  lone["system"]["host_links"] =
      json::array({link("node0", 0, "host-to-device", 30e9,
                        {{"pcie_generation_max", nullptr}, {"pcie_width_max", nullptr}}),
                   link("node0", 0, "device-to-host", 30e9,
                        {{"pcie_generation_max", nullptr}, {"pcie_width_max", nullptr}}),
                   link("node1", 0, "host-to-device", 0,
                        {{"bytes_per_s", nullptr}, {"error", "out of memory"}})});
  const json lv = judge_devices(lone, refs);
  int seen = 0;
  for (const auto& r : lv) {
    if (r["workload"] != "link") continue;
    ++seen;
    const std::string why = r["reason"];
    if (r["host"] == "node1") {
      EXPECT_EQ(r["verdict"], "not judged");
      EXPECT_NE(why.find("not measured: out of memory"), std::string::npos) << why;
    } else if (r["case"] == "link/host-to-device") {
      EXPECT_EQ(r["verdict"], "slow");
      EXPECT_NE(why.find("below the reference 53.0 GB/s"), std::string::npos) << why;
    } else {
      EXPECT_EQ(r["verdict"], "not judged") << why;
    }
  }
  EXPECT_EQ(seen, 3);
}

TEST(AcceptanceCauses, ReferenceFilesTakeLinkEntries) {
  ReferenceSet refs;
  sb::results::read_references_text(
      "[[reference]]\nmodel = \"NVIDIA H200\"\ncase = \"link/device-to-host\"\nbytes_per_s = "
      "5.5e10\n",
      "ok.toml", refs);
  ASSERT_EQ(refs.entries.size(), 1u);
  EXPECT_EQ(refs.entries[0].workload, "link");
  EXPECT_EQ(refs.entries[0].path, "device-to-host");
  EXPECT_NE(sb::results::find_reference(refs, "NVIDIA H200", "link", "device-to-host", ""),
            nullptr);
  auto bad = [](const std::string& text) {
    ReferenceSet s;
    try {
      sb::results::read_references_text(text, "bad.toml", s);
    } catch (const sb::UsageError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(bad("[[reference]]\nmodel = \"x\"\ncase = \"link/host-to-device\"\nmedian_s = 1\n")
                .find("takes bytes_per_s, not median_s"),
            std::string::npos);
  EXPECT_NE(bad(fmt::format("[[reference]]\nmodel = \"x\"\ncase = \"subset-mean/single-gpu/{}\"\n"
                            "median_s = 1\nbytes_per_s = 2\n",
                            kParams))
                .find("bytes_per_s is for link/"),
            std::string::npos);
  EXPECT_NE(bad("[[reference]]\nmodel = \"x\"\ncase = \"link/host-to-device\"\nbytes_per_s = -1\n")
                .find("bytes_per_s must be above 0"),
            std::string::npos);
  // Made from a run: the links' medians per model and direction.
  json m = fleet(2);
  m["system"]["host_links"] = json::array(
      {link("node0", 0, "host-to-device", 50e9), link("node0", 1, "host-to-device", 52e9)});
  const std::string made = sb::results::make_references(m, 0.10, "run.h5");
  EXPECT_NE(made.find("case = \"link/host-to-device\"\nbytes_per_s = 5.1e+10\ntolerance = 0.15"),
            std::string::npos)
      << made;
  ReferenceSet again;
  sb::results::read_references_text(made, "made.toml", again);
  EXPECT_EQ(again.entries.size(), 2u);
}

/// `joules` per repeat over `seconds` of timed repeats with `updates` counter updates.
void energy(json& c, double joules, double seconds = 5.0, int updates = 50) {
  c["energy"] = {{"source", "nvml"},
                 {"available", true},
                 {"devices", 1},
                 {"per_repeat_j", {joules, joules, joules, joules, joules}},
                 {"joules", 5 * joules},
                 {"repeats_measured", 5},
                 {"joules_per_repeat", joules},
                 {"power_w", joules / 0.0248},
                 {"span",
                  {{"joules", 5 * joules},
                   {"seconds", seconds},
                   {"t_begin_unix", 1.8e9},
                   {"t_end_unix", 1.8e9 + seconds},
                   {"updates", updates}}}};
}

TEST(AcceptanceCauses, EnergyPerAnswerIsReportedAndAnEnergyHungryDeviceFlagged) {
  json m = fleet(4);
  for (int g = 0; g < 4; ++g) energy(m["cases"][static_cast<std::size_t>(g)], g == 3 ? 20.0 : 17.0);
  const json v = judge_devices(m, ReferenceSet{});
  EXPECT_EQ(v[3]["verdict"], "inefficient");
  EXPECT_NE(v[3]["reason"].get<std::string>().find(
                "needs 18% more energy than its peers for the same work (20 J per repeat"),
            std::string::npos)
      << v[3]["reason"];
  EXPECT_EQ(v[0]["verdict"], "ok");
  EXPECT_NE(v[0]["reason"].get<std::string>().find("17 J per repeat at 685 W"), std::string::npos)
      << v[0]["reason"];
  // Within 15%: ok. Too short to resolve the counter: not compared.
  json close = fleet(4);
  for (int g = 0; g < 4; ++g)
    energy(close["cases"][static_cast<std::size_t>(g)], g == 3 ? 19.0 : 17.0);
  EXPECT_EQ(judge_devices(close, ReferenceSet{})[3]["verdict"], "ok");
  json brief = fleet(4);
  for (int g = 0; g < 4; ++g)
    energy(brief["cases"][static_cast<std::size_t>(g)], g == 3 ? 30.0 : 17.0, 0.13, 2);
  EXPECT_EQ(judge_devices(brief, ReferenceSet{})[3]["verdict"], "ok");

  // The summary, CSV, table, HTML and gbench-json carry energy per answer and work per joule.
  const json summary = sb::results::summarize(m);
  EXPECT_DOUBLE_EQ(summary[0]["energy_j"].get<double>(), 17.0);
  EXPECT_DOUBLE_EQ(summary[0]["work_per_j"].get<double>(), 1e10 / 17.0);
  EXPECT_EQ(summary[0]["work_per_j_unit"], "draws/J");
  EXPECT_DOUBLE_EQ(summary[0]["flop_per_j"].get<double>(), 3e10 / 17.0);
  EXPECT_EQ(summary[0]["energy_source"], "nvml");
  const std::string csv = sb::results::format_report(m, "csv");
  EXPECT_NE(csv.find(",energy_j,power_w,work_per_j,work_per_j_unit,flop_per_j,energy_source,"
                     "energy_unavailable,"),
            std::string::npos)
      << csv;
  const std::string table = sb::results::format_report(m, "table", 0);
  EXPECT_NE(table.find("work/J"), std::string::npos) << table;
  EXPECT_NE(table.find("17 J"), std::string::npos) << table;
  EXPECT_NE(table.find("588 M draws/J"), std::string::npos) << table;
  const std::string html = sb::results::format_report(m, "html");
  EXPECT_NE(html.find("<th>energy</th><th>work/J</th>"), std::string::npos);
  const json gb = json::parse(sb::results::format_report(m, "gbench-json"));
  const json& first = gb["benchmarks"][0];
  EXPECT_DOUBLE_EQ(first["energy_j"].get<double>(), 17.0);
  EXPECT_DOUBLE_EQ(first["items_per_joule"].get<double>(), 1e10 / 17.0);
  EXPECT_TRUE(first.contains("power_w"));

  // Unavailable (a CPU case without RAPL): said, never zero.
  json cpu = fleet(1);
  cpu["cases"][0]["energy"] = {{"source", "rapl"},
                               {"available", false},
                               {"why", "no RAPL package domain under /sys/class/powercap"}};
  const json s = sb::results::summarize(cpu);
  EXPECT_TRUE(s[0]["energy_j"].is_null() || std::isnan(s[0]["energy_j"].get<double>()));
  EXPECT_EQ(s[0]["energy_source"], "unavailable");
  const std::string t = sb::results::format_report(cpu, "table", 0);
  EXPECT_NE(t.find("energy unavailable: no RAPL package domain"), std::string::npos) << t;
}

TEST(AcceptanceCauses, NvlinkErrorsWhileItRanMakeADeviceUnhealthy) {
  json m = fleet(4);
  m["cases"][2]["telemetry"] = {{"repeats", {{{"repeat", 0}, {"gpu_nvlink_errors", 12.0}}}}};
  const json v = judge_devices(m, ReferenceSet{});
  EXPECT_EQ(v[2]["verdict"], "unhealthy");
  EXPECT_NE(v[2]["reason"].get<std::string>().find("12 NVLink error(s)"), std::string::npos);
}

}  // namespace
