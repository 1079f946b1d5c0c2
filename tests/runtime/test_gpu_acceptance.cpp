// Node acceptance's evidence on the runtime side (issue #50), without a GPU: the census of other
// processes on a GPU (own pids, MPS, another pid namespace), the health fields as rows (every
// field present, "unavailable" with its reason), RAPL's package energy from a fake powercap
// tree (sub-domains and psys left out, a wrap at max_energy_range_uj), the energy counters
// bracketing every repeat through the recorder, and the case record's energy and processes.
#include <gtest/gtest.h>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "case_energy.hpp"
#include "case_gpu_processes.hpp"
#include "case_telemetry.hpp"
#include "gpu_health.hpp"
#include "gpu_process_census.hpp"
#include "process_environment.hpp"
#include "scalebench/ab_protocol.hpp"
#include "scalebench/repeat_telemetry.hpp"
#include "scalebench/telemetry_recorder.hpp"
#include "scalebench/telemetry_source.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using sb::detail::GpuProcess;
using sb::detail::ProcessCensus;
using sb::detail::ProcessSnapshot;

GpuProcess proc(unsigned pid, const std::string& name, double sm = NAN, double mem = 1e9) {
  GpuProcess p;
  p.pid = pid;
  p.name = name;
  p.sm_util = sm;
  p.memory_bytes = mem;
  p.user = "root";
  return p;
}

ProcessSnapshot snap(std::vector<GpuProcess> ps, bool sampled = true) {
  ProcessSnapshot s;
  s.listed = true;
  s.sampled = sampled;
  s.processes = std::move(ps);
  return s;
}

TEST(ProcessCensus, TellsTheJobsOwnProcessesFromOthersAndNamesThem) {
  ProcessCensus c({100, 101});
  // Before the case: our worker and an idle notebook kernel.
  (void)c.add(snap({proc(100, "scalebench-rank", 90), proc(7, "python3", NAN, 5e8)}), true);
  // During: a GEMM loop arrives; the MPS server is infrastructure, not another user.
  auto r = c.add(snap({proc(100, "scalebench-rank", 50), proc(441, "python3", 98, 2.25e9),
                       proc(9, "nvidia-cuda-mps-server", NAN)}),
                 false);
  EXPECT_EQ(r.count, 1);
  EXPECT_EQ(r.sm_util, 98);
  r = c.add(snap({proc(100, "scalebench-rank", 50), proc(441, "python3", 96, 2.25e9),
                  proc(101, "scalebench-rank", 3)}),
            false);
  EXPECT_EQ(r.count, 1);
  const json s = c.summary();
  EXPECT_TRUE(s["listed"]);
  EXPECT_TRUE(s["own_seen"]);
  EXPECT_EQ(s["readings"], 2);
  ASSERT_EQ(s["others"].size(), 2u) << s.dump();
  const json& idle = s["others"][0];
  EXPECT_EQ(idle["pid"], 7);
  EXPECT_TRUE(idle["seen_before"]);
  EXPECT_EQ(idle["readings"], 0);
  const json& hog = s["others"][1];
  EXPECT_EQ(hog["pid"], 441);
  EXPECT_EQ(hog["name"], "python3");
  EXPECT_EQ(hog["readings"], 2);
  EXPECT_EQ(hog["sm_util_max"], 98);
  EXPECT_EQ(hog["sm_util_median"], 97);
  EXPECT_EQ(hog["memory_bytes"], 2.25e9);
  EXPECT_FALSE(s.contains("note"));
  // Alone on the GPU with samples: nobody else, 0% of the SMs.
  c.reset();
  r = c.add(snap({proc(100, "scalebench-rank", 99)}), false);
  EXPECT_EQ(r.count, 0);
  EXPECT_EQ(r.sm_util, 0);
  EXPECT_TRUE(c.summary()["others"].empty());
}

TEST(ProcessCensus, UnavailableListsAndForeignPidsAreSaidNotGuessed) {
  ProcessCensus c({100});
  ProcessSnapshot refused;
  refused.why = "NVML: Insufficient Permissions";
  const auto r = c.add(refused, false);
  EXPECT_TRUE(std::isnan(r.count));
  json s = c.summary();
  EXPECT_FALSE(s["listed"]);
  EXPECT_EQ(s["why"], "NVML: Insufficient Permissions");
  // A container: NVML's pids are the host's, none of them ours.
  c.reset();
  const auto f = c.add(snap({proc(52310, "", 60), proc(52399, "", 30)}), false);
  EXPECT_TRUE(std::isnan(f.count)) << "how many are others is unknown";
  s = c.summary();
  EXPECT_FALSE(s["own_seen"]);
  ASSERT_TRUE(s.contains("note")) << s.dump();
  EXPECT_EQ(s["others"].size(), 2u) << "every listed process is kept, with the note";
}

TEST(ProcessCensus, TheOtherSideOfAnAbRunIsNotAnother) {
  // An A/B run: this side's worker 100, the parked baseline's worker 200, and a real other.
  ProcessCensus c({100});
  GpuProcess parked = proc(200, "scalebench-rank", 0);
  parked.other_side = true;
  (void)c.add(snap({proc(100, "scalebench-rank", 90), parked}), true);
  auto r = c.add(snap({proc(100, "scalebench-rank", 90), parked}), false);
  EXPECT_EQ(r.count, 0);
  EXPECT_EQ(r.sm_util, 0);
  r = c.add(snap({proc(100, "scalebench-rank", 60), parked, proc(441, "python3", 40)}), false);
  EXPECT_EQ(r.count, 1);
  const json s = c.summary();
  EXPECT_EQ(s["other_side"], 1);
  ASSERT_EQ(s["others"].size(), 1u) << s.dump();
  EXPECT_EQ(s["others"][0]["pid"], 441);
  // Only the other side's ranks listed (this worker not yet among them): not a container.
  c.reset();
  r = c.add(snap({parked}), false);
  EXPECT_EQ(r.count, 0);
  EXPECT_FALSE(c.summary().contains("note"));
}

TEST(ProcessEnvironment, AProcessStartedWithTheRunsMarkIsToldByIt) {
  // A real process started with the mark, as the launcher starts an A/B run's ranks.
  const std::string mark = "/tmp/sb-ab-run-" + std::to_string(getpid());
  std::vector<std::string> env = {"PATH=/usr/bin:/bin",
                                  std::string(sb::ab::kRunVariable) + "=" + mark};
  std::vector<char*> envp, argv;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string sleep = "sleep", secs = "30";
  argv = {sleep.data(), secs.data(), nullptr};
  pid_t child = 0;
  ASSERT_EQ(posix_spawnp(&child, "sleep", nullptr, nullptr, argv.data(), envp.data()), 0);
  const auto pid = static_cast<unsigned>(child);
  // posix_spawn returns once the child has its new memory, which may be before execve has put
  // its environment there: wait for its command line, laid out beside the environment.
  for (int i = 0; i < 500; ++i) {
    std::ifstream cmdline("/proc/" + std::to_string(pid) + "/cmdline");
    if (cmdline.peek() != std::ifstream::traits_type::eof()) break;
    usleep(10000);
  }
  EXPECT_TRUE(sb::detail::started_with(pid, sb::ab::kRunVariable, mark));
  EXPECT_FALSE(sb::detail::started_with(pid, sb::ab::kRunVariable, mark + "x"))
      << "another run's mark";
  EXPECT_FALSE(sb::detail::started_with(pid, sb::ab::kRunVariable, mark.substr(0, 8)));
  EXPECT_FALSE(
      sb::detail::started_with(static_cast<unsigned>(getpid()), sb::ab::kRunVariable, mark))
      << "this test was not started with it";
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_FALSE(sb::detail::started_with(pid, sb::ab::kRunVariable, mark)) << "a process gone";
}

TEST(GpuHealth, EveryFieldIsARowWithAValueOrUnavailable) {
  sb::detail::GpuHealthRaw h;  // nothing read: every field unavailable, with its reason
  json rows = sb::detail::health_rows(h);
  const auto& names = sb::detail::health_field_names();
  ASSERT_EQ(rows.size(), names.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i]["field"], names[i]);
    EXPECT_EQ(rows[i]["value"], "unavailable") << rows[i].dump();
    EXPECT_FALSE(rows[i]["detail"].get<std::string>().empty());
    EXPECT_TRUE(rows[i]["number"].is_null());
  }
  h.pcie_gen.set(4);
  h.pcie_width.set(8);
  h.pcie_gen_max.set(5);
  h.pcie_width_max.set(16);
  h.pcie_gen_gpu_max.set(5);
  h.remap_pending.set(true);
  h.remap_failed.set(false);
  h.remapped_correctable.set(1);
  h.remapped_uncorrectable.set(2);
  h.nvlinks = {{0, true}, {1, true}, {2, true}, {3, false}};
  h.persistence.fail("NVML: Not Supported");
  h.compute_mode.set(3);
  h.ecc_current.set(true);
  h.ecc_pending.set(false);
  h.app_sm_mhz.set(1500);
  h.app_sm_default_mhz.set(1980);
  h.power_limit_w.set(500);
  h.power_default_w.set(700);
  h.inforom_valid.set(false);
  h.driver.set("580.95.05");
  h.vbios.set("96.00.AF.00.01");
  h.numa_node.set(1);
  rows = sb::detail::health_rows(h);
  auto field = [&](const std::string& f) {
    for (const auto& r : rows)
      if (r["field"] == f) return r;
    return json();
  };
  // Read while idle: the generation is recorded but not given an expected value.
  EXPECT_EQ(field("pcie_generation")["value"], "Gen4");
  EXPECT_TRUE(field("pcie_generation")["expected"].is_null());
  EXPECT_NE(field("pcie_generation")["detail"].get<std::string>().find("read while idle"),
            std::string::npos);
  h.pcie_under_load = true;
  rows = sb::detail::health_rows(h);
  EXPECT_EQ(field("pcie_generation")["expected"], 5);
  EXPECT_EQ(field("pcie_width")["value"], "x8");
  EXPECT_EQ(field("pcie_width")["expected"], 16);
  EXPECT_EQ(field("row_remap_pending")["number"], 1);
  EXPECT_EQ(field("rows_remapped")["value"], "3 (1 correctable, 2 uncorrectable)");
  EXPECT_EQ(field("nvlink_links")["value"], "3 up of 4: 3 down");
  EXPECT_EQ(field("nvlink_links")["detail"], "down: 3");
  EXPECT_EQ(field("nvlink_errors")["value"], "unavailable");
  EXPECT_EQ(field("persistence_mode")["value"], "unavailable");
  EXPECT_EQ(field("persistence_mode")["detail"], "NVML: Not Supported");
  EXPECT_EQ(field("compute_mode")["value"], "exclusive process");
  EXPECT_EQ(field("ecc_mode")["value"], "on (off after the next reset)");
  EXPECT_EQ(field("app_sm_clock")["number"], 1500);
  EXPECT_EQ(field("app_sm_clock")["expected"], 1980);
  EXPECT_EQ(field("power_limit")["value"], "500 W");
  EXPECT_EQ(field("inforom")["value"], "corrupted");
  EXPECT_EQ(field("numa_node")["value"], "1");
}

/// A powercap tree in a temporary folder: packages 0 and 1 with their parts, and psys.
struct FakePowercap {
  fs::path root = fs::temp_directory_path() / ("sb-powercap-" + std::to_string(getpid()));
  FakePowercap() {
    fs::remove_all(root);
    domain("intel-rapl:0", "package-0", 1'000'000, 262'143'328'850);
    domain("intel-rapl:0:0", "core", 555, 262'143'328'850);
    domain("intel-rapl:1", "package-1", 2'000'000, 262'143'328'850);
    domain("intel-rapl:1:1", "dram", 777, 262'143'328'850);
    domain("intel-rapl:2", "psys", 999, 262'143'328'850);
  }
  ~FakePowercap() { fs::remove_all(root); }
  void domain(const std::string& dir, const std::string& name, unsigned long long uj,
              unsigned long long range) {
    fs::create_directories(root / dir);
    std::ofstream(root / dir / "name") << name << "\n";
    set(dir, uj);
    std::ofstream(root / dir / "max_energy_range_uj") << range << "\n";
  }
  void set(const std::string& dir, unsigned long long uj) const {
    std::ofstream(root / dir / "energy_uj") << uj << "\n";
  }
};

TEST(RaplTelemetry, SumsThePackagesAndUnwrapsTheirCounters) {
  FakePowercap pc;
  auto src = sb::make_rapl_telemetry(pc.root.string());
  ASSERT_TRUE(src);
  EXPECT_TRUE(src->cpu_cases_only());
  EXPECT_EQ(src->name(), "cpu_energy");
  EXPECT_EQ(src->describe()["cpu_energy"], "rapl: package-0, package-1");
  sb::TelemetrySample a, b, c;
  src->read(a);
  pc.set("intel-rapl:0", 3'000'000);    // +2 J
  pc.set("intel-rapl:1", 2'500'000);    // +0.5 J
  pc.set("intel-rapl:0:0", 9'999'999);  // a part of package 0: not counted again
  pc.set("intel-rapl:2", 9'999'999);    // psys: the platform, not the CPUs
  src->read(b);
  EXPECT_NEAR(b.cpu_energy_j - a.cpu_energy_j, 2.5, 1e-9);
  // Package 1 wraps at its range: 262143.32885 J - 2.5 J + 1 J later it reads 1 J.
  pc.set("intel-rapl:1", 1'000'000);
  src->read(c);
  EXPECT_NEAR(c.cpu_energy_j - b.cpu_energy_j, 262'143'328'850e-6 - 2.5 + 1.0, 1e-6);
}

TEST(RaplTelemetry, WithoutADomainItSaysWhyAndReadsNothing) {
  auto src = sb::make_rapl_telemetry("/nonexistent/powercap");
  ASSERT_TRUE(src);
  const std::string why = src->describe().value("cpu_energy_unavailable", std::string());
  EXPECT_NE(why.find("no RAPL package domain under /nonexistent/powercap"), std::string::npos)
      << why;
  sb::TelemetrySample s;
  src->read(s);
  EXPECT_TRUE(std::isnan(s.cpu_energy_j));
  // This machine: readable or not, the source says which.
  auto here = sb::make_rapl_telemetry("/sys/class/powercap");
  const json d = here->describe();
  EXPECT_TRUE(d.contains("cpu_energy") != d.contains("cpu_energy_unavailable")) << d.dump();
}

/// An energy counter: 2 J per reading, the first source of the recorder.
class FakeEnergy final : public sb::TelemetrySource {
 public:
  explicit FakeEnergy(bool gpu) : gpu_(gpu) {}
  void read(sb::TelemetrySample& s) noexcept override {
    joules_ += 2;
    (gpu_ ? s.gpu_energy_j : s.cpu_energy_j) = joules_;
  }
  [[nodiscard]] json describe() const override {
    return {{gpu_ ? "gpu_energy" : "cpu_energy", "fake"}};
  }
  [[nodiscard]] bool gpu() const override { return gpu_; }
  [[nodiscard]] bool cpu_cases_only() const override { return !gpu_; }

 private:
  bool gpu_;
  double joules_ = 1000;
};

TEST(EnergyTelemetry, TheCountersBracketEveryRepeatAndTheCase) {
  std::vector<std::unique_ptr<sb::TelemetrySource>> v;
  v.push_back(std::make_unique<FakeEnergy>(true));
  v.push_back(std::make_unique<FakeEnergy>(false));
  sb::TelemetryRecorder rec(std::move(v), 0.0);  // readings at the marks only
  rec.begin_case(true);
  for (int r = 0; r < 3; ++r) {
    rec.begin_repeat(r);
    rec.end_repeat(r);
  }
  const json t = rec.finish_case(512);
  ASSERT_EQ(t["repeats"].size(), 3u);
  for (const auto& r : t["repeats"]) {
    EXPECT_EQ(r["gpu_energy_j"], 2.0) << r.dump();  // its begin and its end
    EXPECT_TRUE(r["cpu_energy_j"].is_null()) << "the RAPL source sits out GPU cases";
  }
  ASSERT_TRUE(t["energy"].contains("gpu")) << t["energy"].dump();
  const json& span = t["energy"]["gpu"];
  EXPECT_EQ(span["joules"], 10.0);  // six readings, 2 J apart
  EXPECT_EQ(span["updates"], 5);
  EXPECT_GT(span["t_end_unix"].get<double>(), 1.7e9);
  EXPECT_GE(span["t_end_unix"].get<double>(), span["t_begin_unix"].get<double>());
  EXPECT_FALSE(t["energy"].contains("cpu"));
}

json worker_data(double joules_per_repeat, int repeats, bool gpu, const std::string& source) {
  json reps = json::array();
  for (int r = 0; r < repeats; ++r)
    reps.push_back({{"repeat", r},
                    {"samples", 2},
                    {"wall_s", 0.5},
                    {gpu ? "gpu_energy_j" : "cpu_energy_j", joules_per_repeat}});
  json sources =
      source.empty()
          ? json{{gpu ? "gpu_energy_unavailable" : "cpu_energy_unavailable", "NVML: Not Supported"}}
          : json{{gpu ? "gpu_energy" : "cpu_energy", source}};
  return {{"repeats", reps},
          {"sources", sources},
          {"energy",
           {{gpu ? "gpu" : "cpu",
             {{"joules", joules_per_repeat * repeats},
              {"seconds", 0.5 * repeats},
              {"t_begin_unix", 1.8e9},
              {"t_end_unix", 1.8e9 + 0.5 * repeats},
              {"updates", 4 * repeats}}}}}};
}

TEST(CaseEnergy, GpusAddUpAndANodesPackagesCountOnce) {
  using sb::detail::WorkerTelemetry;
  // Two GPUs of a multi-gpu case: their energies add up.
  const std::vector<WorkerTelemetry> gpus{{0, "n1", 0, worker_data(300, 3, true, "nvml")},
                                          {1, "n1", 1, worker_data(310, 3, true, "nvml")}};
  json e = sb::detail::combine_energy(gpus, true, 3);
  EXPECT_TRUE(e["available"]);
  EXPECT_EQ(e["source"], "nvml");
  EXPECT_EQ(e["devices"], 2);
  EXPECT_EQ(e["per_repeat_j"], json({610.0, 610.0, 610.0}));
  EXPECT_DOUBLE_EQ(e["joules_per_repeat"].get<double>(), 610.0);
  EXPECT_DOUBLE_EQ(e["power_w"].get<double>(), 1220.0);
  EXPECT_DOUBLE_EQ(e["span"]["joules"].get<double>(), 1830.0);
  // Two CPU workers of one node read the same packages: counted once; two nodes add up.
  const std::vector<WorkerTelemetry> cpus{{0, "n1", -1, worker_data(100, 2, false, "rapl")},
                                          {1, "n1", -1, worker_data(104, 2, false, "rapl")},
                                          {2, "n2", -1, worker_data(90, 2, false, "rapl")}};
  e = sb::detail::combine_energy(cpus, false, 2);
  EXPECT_EQ(e["devices"], 2);
  EXPECT_DOUBLE_EQ(e["joules_per_repeat"].get<double>(), 102.0 + 90.0);
  // Without a counter: unavailable with the reason.
  const std::vector<WorkerTelemetry> none{{0, "n1", -1, worker_data(0, 2, false, "")}};
  e = sb::detail::combine_energy(none, false, 2);
  EXPECT_FALSE(e["available"]);
  EXPECT_EQ(e["why"], "NVML: Not Supported");
  EXPECT_TRUE(sb::detail::combine_energy({}, false, 2).is_null());
}

// NVML's counter steps every few milliseconds: sub-millisecond repeats see a whole step or none,
// which is no figure per repeat (an H200's by-name seed case read 0 J, by-key "3304 W").
TEST(CaseEnergy, ACounterCoarserThanTheRepeatsGivesWayToThePowerReadings) {
  using sb::detail::WorkerTelemetry;
  json data = worker_data(0, 5, true, "nvml");
  for (auto& r : data["repeats"]) r["wall_s"] = 0.00045;
  data["repeats"][3]["gpu_energy_j"] = 2.6;
  json e = sb::detail::combine_energy({{0, "vm", 0, data}}, true, 5);
  EXPECT_FALSE(e["available"]) << e.dump();
  EXPECT_EQ(
      e["why"],
      "the energy counter moved in 1 of 5 timed repeats (each 450.00 us long): coarser than the "
      "repeats; more repeats or a larger preset resolve it");
  // With the GPU's power readings over each repeat, those give the energy.
  for (auto& r : data["repeats"]) r["gpu_power_w_median"] = 600.0;
  e = sb::detail::combine_energy({{0, "vm", 0, data}}, true, 5);
  EXPECT_TRUE(e["available"]) << e.dump();
  EXPECT_EQ(e["method"], "power");
  EXPECT_NEAR(e["joules_per_repeat"].get<double>(), 600.0 * 0.00045, 1e-12);
  EXPECT_EQ(
      e["note"],
      "the energy counter moved in 1 of 5 timed repeats (each 450.00 us long); from the GPUs' "
      "power readings over each repeat instead");
  // 400 repeats, a step in one of four: the steps add up to the case's energy.
  data = worker_data(0, 400, true, "nvml");
  for (std::size_t i = 0; i < 400; i += 4) data["repeats"][i]["gpu_energy_j"] = 1.0;
  e = sb::detail::combine_energy({{0, "vm", 0, data}}, true, 400);
  EXPECT_TRUE(e["available"]) << e.dump();
  EXPECT_EQ(e["method"], "counter");
  EXPECT_DOUBLE_EQ(e["joules_per_repeat"].get<double>(), 0.25);
}

TEST(CaseGpuProcesses, TheInterferenceNamesTheOthersPerGpu) {
  using sb::detail::WorkerTelemetry;
  json data = worker_data(300, 2, true, "nvml");
  ProcessCensus c({100});
  (void)c.add(snap({proc(100, "scalebench-rank", 40), proc(441, "python3", 97, 2.25e9)}), false);
  data["summaries"]["gpu_processes"] = c.summary();
  data["repeats"][0]["gpu_others"] = 1;
  data["repeats"][0]["gpu_others_sm_pct_median"] = 97;
  data["repeats"][1]["gpu_others"] = 1;
  data["repeats"][1]["gpu_others_sm_pct_median"] = 95;
  const json in = sb::detail::combine_gpu_processes({{0, "vm", 0, data}}, 2);
  ASSERT_EQ(in["gpu_processes"].size(), 1u) << in.dump();
  EXPECT_EQ(in["gpu_processes"][0]["host"], "vm");
  EXPECT_EQ(in["gpu_processes"][0]["gpu"], 0);
  EXPECT_EQ(in["gpu_processes"][0]["pid"], 441);
  EXPECT_EQ(in["gpu_processes"][0]["of_readings"], 1);
  EXPECT_EQ(in["gpu_other_processes"], 1);
  EXPECT_EQ(in["gpu_others_sm_pct"], 96);
  // And through the case record: "energy" for the record's device, the processes in
  // "interference".
  const sb::detail::CaseTelemetry t =
      sb::detail::combine_telemetry({{0, "vm", 0, data}}, sb::detail::SchedulerCpu{}, 2);
  json rec = {{"device", "gpu"}, {"repeats", {{{"total", 0.5}}, {{"total", 0.5}}}}};
  sb::detail::add_telemetry(rec, t);
  EXPECT_EQ(rec["energy"]["source"], "nvml") << rec.dump();
  EXPECT_EQ(rec["interference"]["gpu_processes"][0]["name"], "python3");
}

}  // namespace
