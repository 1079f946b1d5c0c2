// Writes the folder of a fleet sweep as `scalebench submit --fleet-nodes` leaves it once every
// element has run, without running anything: fleet.json and one single-node acceptance report
// per node, shaped like a GPU node's (each-gpu on every GPU and each-node, for subset-mean and
// svd: repeats, validation, per-repeat telemetry of every signal, a 512-point telemetry series
// and the task events per device), for bench/merge_fleet.sh.
//
//   make_fleet_reports DIR NODES [--gpus G] [--slow NODE] [--missing K]
//
// --slow NODE: that node's GPU 3 runs 20% slower; --missing K: K more nodes in the manifest
// that left no report.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "scalebench/report.hpp"

namespace {

using json = nlohmann::json;

std::string node_name(int i) {
  return fmt::format("gpu{:04d}", i);
}

json telemetry_of(const std::string& host, int gpu, int repeats, double total) {
  json rows = json::array();
  for (int r = 0; r < repeats; ++r) {
    json row = {{"repeat", r},
                {"worker", 0},
                {"host", host},
                {"gpu", gpu},
                {"throttled", false},
                {"throttle_reason", ""},
                {"t_begin", r * total},
                {"t_end", (r + 1) * total},
                {"samples", 3},
                {"wall_s", total},
                {"gpu_app_sm_mhz", 1980},
                {"gpu_clock_event_reasons", 0},
                {"gpu_ecc_uncorrected", 0},
                {"gpu_ecc_corrected", 0},
                {"gpu_xid", 0},
                {"gpu_retired_pages", 0}};
    for (const char* s :
         {"gpu_sm_mhz", "gpu_mem_mhz", "gpu_power_w", "gpu_temp_c", "gpu_power_limit_w", "cpu_mhz"})
      for (const char* stat : {"_min", "_median", "_max"})
        row[std::string(s) + stat] = 1000.0 + 10.0 * r;
    rows.push_back(std::move(row));
  }
  json series = json::object();
  constexpr int kPoints = 512;
  for (const char* col :
       {"t", "worker", "repeat", "cpu_mhz", "gpu_sm_mhz", "gpu_mem_mhz", "gpu_power_w",
        "gpu_temp_c", "gpu_power_limit_w", "gpu_clock_event_reasons"}) {
    json v = json::array();
    for (int i = 0; i < kPoints; ++i)
      v.push_back(std::string(col) == "t"        ? i * total * repeats / kPoints
                  : std::string(col) == "worker" ? 0.0
                  : std::string(col) == "repeat" ? static_cast<double>(i * repeats / kPoints)
                                                 : 900.0 + i % 7);
    series[col] = std::move(v);
  }
  return {{"period_s", 0.02}, {"repeats", rows}, {"series", series}};
}

json events_of(int tasks, int repeats, double total) {
  json te = json::object();
  for (const char* k : {"repeat", "worker", "task", "phase", "start", "end", "bytes"})
    te[k] = json::array();
  for (int r = 0; r < repeats; ++r)
    for (int t = 0; t < tasks; ++t) {
      te["repeat"].push_back(r);
      te["worker"].push_back(0);
      te["task"].push_back(t);
      te["phase"].push_back("compute");
      te["start"].push_back(total * t / tasks);
      te["end"].push_back(total * (t + 1) / tasks);
      te["bytes"].push_back(80000000);
    }
  return te;
}

json device_case(int index, const std::string& workload, const std::string& path,
                 const std::string& host, int gpu, double total) {
  const bool node = gpu < 0;
  const std::string params =
      workload == "svd" ? "chunk=20000,m=2000000,n=64,seed=42" : "chunk=10000,n=100000,seed=42";
  const std::string planned = workload + "/" + path + "/" + params;
  const std::string device = node ? host : fmt::format("{}:gpu{}", host, gpu);
  constexpr int kRepeats = 5;
  json c;
  c["index"] = index;
  c["id"] = planned + "/" + device;
  c["planned_id"] = planned;
  c["device_id"] = device;
  c["workload"] = workload;
  c["path"] = path;
  c["params"] = workload == "svd"
                    ? json{{"chunk", "20000"}, {"m", "2000000"}, {"n", "64"}, {"seed", "42"}}
                    : json{{"chunk", "10000"}, {"n", "100000"}, {"seed", "42"}};
  c["preset"] = "seed";
  c["device"] = node ? "cpu" : "gpu";
  c["workers"] = node ? 8 : 1;
  c["threads_per_worker"] = node ? 14 : 1;
  c["host"] = host;
  c["hosts"] = json::array({host});
  c["gpu"] = gpu;
  c["device_model"] = node ? "AMD EPYC 9654 96-Core Processor" : "NVIDIA H200";
  c["devices"] = node ? 1 : 8;
  c["status"] = "ok";
  c["message"] = "";
  c["warmup"] = 1;
  c["setup_s"] = 0.004;
  json reps = json::array(), results = json::array();
  for (int r = 0; r < kRepeats; ++r) {
    const double t = total * (1.0 + 0.002 * r);
    reps.push_back({{"generate", 0.1 * t},
                    {"compute", 0.85 * t},
                    {"communicate", 0.0},
                    {"total", t},
                    {"runtime", 0.05 * t},
                    {"messages", 0.01 * t},
                    {"host_stall", 0.0}});
    results.push_back({{"answer", 11.000001}, {"full_mean", 10.0}});
  }
  c["repeats"] = reps;
  c["repeat_stop"] = {{"reason", "count"}, {"repeats", kRepeats}, {"spread", 0.003}};
  c["results"] = results;
  c["result"] = results.back();
  c["validation"] = json::array(
      {{{"name", "answer"}, {"value", 1e-6}, {"limit", 6e-3}, {"pass", true}, {"detail", "ok"}},
       {{"name", "cross:answer"},
        {"value", 0.0},
        {"limit", 1e-9},
        {"pass", true},
        {"detail", "vs single-gpu"}}});
  c["work"] = {
      {"units", 1e10}, {"unit", "draws"}, {"bytes", 8e10}, {"flops", 0.0}, {"bound", "bytes"}};
  c["metrics"] = {{"median_s", total * 1.004},
                  {"throughput", 1e10 / total},
                  {"throughput_unit", "draws/s"},
                  {"gbytes_per_s", 80.0 / total},
                  {"gflops", 0.0},
                  {"median_compute_s", 0.85 * total},
                  {"compute_throughput", 1e10 / (0.85 * total)},
                  {"throttled_repeats", 0},
                  {"host_stalled_repeats", 0},
                  {"left_out_repeats", 0},
                  {"median_runtime_s", 0.05 * total}};
  c["task_events"] = events_of(100, kRepeats, total);
  c["telemetry"] = telemetry_of(host, gpu, kRepeats, total);
  c["interference"] = {{"other_cpu_fraction", 0.01},
                       {"cpu_mhz", {{"min", 2400}, {"median", 2450}, {"max", 2500}}},
                       {"cgroup_throttled_s", 0.0},
                       {"vector_probe_s", node ? 9e-6 : 0.0}};
  c["started_utc"] = "2026-12-02T10:00:00Z";
  c["ended_utc"] = "2026-12-02T10:00:10Z";
  return c;
}

json node_report(int i, int gpus, bool slow) {
  const std::string host = node_name(i);
  json m;
  m["attrs"] = {{"schema_version", sb::results::kSchemaVersion},
                {"scalebench_version", "0.1.0"},
                {"git_sha", "0123456789ab"},
                {"command_line", "scalebench run --preset seed --paths each-gpu,each-node"},
                {"host", host},
                {"start_utc", "2026-12-02T10:00:00.000Z"},
                {"end_utc", "2026-12-02T10:05:00.000Z"},
                {"scheduler", "slurm"},
                {"job_id", std::to_string(1000 + i)},
                {"nodes", 1},
                {"ranks", gpus + 1},
                {"workers", gpus},
                {"preset", "seed"},
                {"status", "ok"}};
  json nodes = json::array({{{"host", host},
                             {"cpu_model", "AMD EPYC 9654 96-Core Processor"},
                             {"cores", 192},
                             {"numa_domains", 2},
                             {"memory_bytes", 1649267441664LL}}});
  json gpu_rows = json::array(), ceilings = json::array();
  for (int g = 0; g < gpus; ++g) {
    gpu_rows.push_back({{"host", host},
                        {"index", g},
                        {"name", "NVIDIA H200"},
                        {"uuid", fmt::format("GPU-{:04d}-{}", i, g)},
                        {"memory_bytes", 150754820096LL},
                        {"sm_count", 132},
                        {"clock_mhz", 1980},
                        {"memory_clock_mhz", 3201},
                        {"driver", "580.65"},
                        {"pci_bus_id", fmt::format("0000:{:02x}:00.0", 0x10 + g)}});
    for (const char* kind : {"copy_bandwidth", "fp64_gemm"})
      ceilings.push_back({{"scope", "gpu"},
                          {"device", fmt::format("GPU-{:04d}-{}", i, g)},
                          {"kind", kind},
                          {"value", std::string(kind) == "fp64_gemm" ? 6.0e13 : 4.0e12},
                          {"unit", std::string(kind) == "fp64_gemm" ? "flop/s" : "B/s"},
                          {"host", host},
                          {"worker_rank", g + 1}});
  }
  m["system"] = {{"nodes", nodes},
                 {"gpus", gpu_rows},
                 {"ceilings", ceilings},
                 {"versions", {{"mpi", "Open MPI v4.1.4"}, {"hdf5", "1.10.8"}}},
                 {"topology", std::string(600, ' ')}};
  m["startup"] = {{"mpi_init_s", 0.12}, {"cuda_init_s", 0.5}, {"total_s", 1.4}};
  json cases = json::array();
  int index = 0;
  for (const char* wl : {"subset-mean", "svd"}) {
    const double base = std::string(wl) == "svd" ? 0.050 : 0.0248;
    for (int g = 0; g < gpus; ++g)
      cases.push_back(device_case(index, wl, "each-gpu", host, g,
                                  base * (slow && g == 3 ? 1.2 : 1.0) * (1.0 + 0.001 * (i % 7))));
    cases.push_back(device_case(index + 1, wl, "each-node", host, -1, base * 20));
    index += 2;
  }
  m["cases"] = cases;
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: make_fleet_reports DIR NODES [--gpus G] [--slow NODE] [--missing K]\n";
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  const int count = std::atoi(argv[2]);
  int gpus = 8, slow = -1, missing = 0;
  for (int a = 3; a + 1 < argc; a += 2) {
    const std::string opt = argv[a];
    if (opt == "--gpus") gpus = std::atoi(argv[a + 1]);
    if (opt == "--slow") slow = std::atoi(argv[a + 1]);
    if (opt == "--missing") missing = std::atoi(argv[a + 1]);
  }
  std::filesystem::create_directories(dir);
  json elements = json::array();
  for (int i = 0; i < count + missing; ++i) {
    const std::string host = node_name(i);
    elements.push_back({{"element", "node-" + host},
                        {"node", host},
                        {"job_id", std::to_string(1000 + i)},
                        {"submitted_utc", "2026-12-02T09:59:00Z"}});
    if (i < count)
      sb::results::write_report(node_report(i, gpus, i == slow),
                                (dir / ("node-" + host + ".h5")).string());
  }
  const json manifest = {
      {"format", "scalebench-fleet"},
      {"version", 1},
      {"scheduler", "slurm"},
      {"submit",
       {"--scheduler", "slurm", "--gpus-per-node", std::to_string(gpus), "--time", "00:30:00"}},
      {"run",
       {"--preset", "seed", "--workloads", "subset-mean,svd", "--paths", "each-gpu,each-node",
        "--check"}},
      {"elements", elements}};
  std::ofstream(dir / "fleet.json") << manifest.dump(1) << "\n";
  std::cout << "wrote " << count << " reports (" << missing << " more nodes without one) in "
            << dir.string() << "\n";
  return 0;
}
