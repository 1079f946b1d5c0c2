#pragma once
/// Synthetic report models for the results tests: every kind of field the writer must keep.

#include <unistd.h>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sb::results::test {

using json = nlohmann::json;

/// A fresh folder under the build tree, removed by the destructor.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& name) {
    path = std::filesystem::path(SB_BINARY_DIR) / "test-tmp" /
           (name + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  [[nodiscard]] std::string file(const std::string& name) const { return (path / name).string(); }
};

/// Repeats whose totals are `totals` (generate 10%, compute 80%, communicate 10%).
inline json repeats_of(const std::vector<double>& totals) {
  json r = json::array();
  for (double t : totals)
    r.push_back(
        {{"generate", 0.1 * t}, {"compute", 0.8 * t}, {"communicate", 0.1 * t}, {"total", t}});
  return r;
}

/// The params of the each-gpu subset-mean records below.
inline constexpr const char* kEachGpuParams = "chunk=10000,mu=10,n=100000,seed=42,sigma=1";

/// One each-gpu subset-mean device record: node `n`, GPU `g`, median `median_s` (five repeats
/// around it), device model `model`.
inline json each_gpu_record(int n, int g, double median_s,
                            const std::string& model = "NVIDIA H200") {
  const std::string host = "node" + std::to_string(n);
  const std::string dev = host + ":gpu" + std::to_string(g);
  const std::string planned = std::string("subset-mean/each-gpu/") + kEachGpuParams;
  return {
      {"id", planned + "/" + dev},
      {"planned_id", planned},
      {"device_id", dev},
      {"host", host},
      {"gpu", g},
      {"device_model", model},
      {"workload", "subset-mean"},
      {"path", "each-gpu"},
      {"params",
       {{"chunk", "10000"}, {"mu", "10"}, {"n", "100000"}, {"seed", "42"}, {"sigma", "1"}}},
      {"device", "gpu"},
      {"workers", 1},
      {"status", "ok"},
      {"message", ""},
      {"work", {{"units", 1e10}, {"unit", "draws"}, {"flops", 3e10}}},
      {"repeats", repeats_of({median_s, median_s * 1.001, median_s * 0.999, median_s, median_s})},
      {"metrics", {{"median_s", median_s}}}};
}

inline json task_events(int workers, int tasks) {
  json te = {{"repeat", json::array()}, {"worker", json::array()}, {"task", json::array()},
             {"phase", json::array()},  {"start", json::array()},  {"end", json::array()},
             {"bytes", json::array()}};
  int t = 0;
  for (int rep = 0; rep < 2; ++rep) {
    for (int k = 0; k < tasks; ++k, ++t) {
      const int w = 1 + k % workers;
      const double s = 0.001 * (k / workers);
      for (const char* phase : {"generate", "compute"}) {
        const bool gen = std::string(phase) == "generate";
        te["repeat"].push_back(rep);
        te["worker"].push_back(w);
        te["task"].push_back(k);
        te["phase"].push_back(phase);
        te["start"].push_back(gen ? s : s + 0.0002);
        te["end"].push_back(gen ? s + 0.0002 : s + 0.001);
        te["bytes"].push_back(gen ? 0 : 2000000);
      }
    }
  }
  return te;
}

/// One case record as the scheduler streams it (docs: "Case record").
inline json make_case(int index, const std::string& workload, const std::string& path,
                      const std::string& device, int workers, const std::vector<double>& totals,
                      double units, double bytes, double flops, const std::string& status = "ok") {
  json c;
  c["index"] = index;
  c["workload"] = workload;
  c["path"] = path;
  c["params"] = {{"chunk", "500"}, {"n", "2000"}, {"seed", "42"}};
  c["id"] = workload + "/" + path + "/chunk=500,n=2000,seed=42";
  c["device"] = device;
  c["workers"] = workers;
  c["threads_per_worker"] = device == "cpu" && path != "single-cpu" ? 2 : 1;
  c["status"] = status;
  c["message"] = status == "ok" ? "" : "something went wrong";
  c["warmup"] = 1;
  c["repeats"] = repeats_of(totals);
  c["results"] = json::array();
  for (std::size_t i = 0; i < totals.size(); ++i)
    c["results"].push_back({{"answer", 11.0 + 1e-6 * static_cast<double>(i)}, {"full_mean", 10.0}});
  c["result"] = {{"answer", 11.000001}, {"full_mean", 10.0000002}, {"count", 1000000}};
  c["validation"] = json::array({{{"name", "answer"},
                                  {"value", 1.0e-6},
                                  {"limit", 6.0e-3},
                                  {"pass", true},
                                  {"detail", "|answer-11| <= 6/sqrt(count)"}},
                                 {{"name", "full_mean"},
                                  {"value", 2.0e-7},
                                  {"limit", 3.0e-3},
                                  {"pass", status == "ok"},
                                  {"detail", "|full mean - 10| <= 6/n"}}});
  c["work"] = {{"units", units},
               {"unit", "draws"},
               {"bytes", bytes},
               {"flops", flops},
               {"bound", bytes > 0 ? "bytes" : "flops"}};
  const double t0 = totals.empty() ? 1.0 : totals.front();
  c["metrics"] = {{"throughput", units / t0},
                  {"throughput_unit", "draws/s"},
                  {"gbytes_per_s", bytes / t0 / 1e9}};
  c["task_events"] = task_events(workers, 4);
  c["started_utc"] = "2026-11-22T10:00:00Z";
  c["ended_utc"] = "2026-11-22T10:00:05Z";
  return c;
}

/// A complete model: attrs, system (nodes, gpus, versions, topology, ceilings, extra keys of
/// every kind), startup, six cases (ok, failed validation, skipped), an unknown top-level key.
inline json make_model() {
  json m;
  m["attrs"] = {{"schema_version", 1},
                {"scalebench_version", "0.1.0"},
                {"git_sha", "0123456789ab"},
                {"command_line", "scalebench run --preset tiny --out \"r.h5\""},
                {"start_utc", "2026-11-22T10:00:00Z"},
                {"end_utc", "2026-11-22T10:05:00Z"},
                {"scheduler", "local"},
                {"job_id", ""},
                {"nodes", 1},
                {"ranks", 3},
                {"workers", 2},
                {"preset", "tiny"},
                {"status", "ok"},
                {"wall_s", 300.5},
                {"resumed", false},
                {"note", nullptr},
                {"unicode", "\xC2\xB5s \xE2\x80\x93 \xC3\xBC"}};
  json sys;
  sys["nodes"] = json::array({{{"host", "node0"},
                               {"cpu_model", "AMD EPYC 9654"},
                               {"cores", 2},
                               {"numa_domains", 1},
                               {"memory_bytes", 8589934592LL},
                               {"mhz_per_cpu", 2400}}});
  sys["gpus"] = json::array();
  for (int g = 0; g < 2; ++g) {
    sys["gpus"].push_back({{"host", "node0"},
                           {"index", g},
                           {"name", "NVIDIA H200"},
                           {"uuid", "GPU-0000-" + std::to_string(g)},
                           {"memory_bytes", 150754820096LL},
                           {"sm_count", 132},
                           {"clock_mhz", 1980},
                           {"memory_clock_mhz", 3201},
                           {"driver", "580.65"},
                           {"pci_bus_id", "0000:1" + std::to_string(g) + ":00.0"}});
  }
  sys["versions"] = {{"mpi", "Open MPI v4.1.4"},
                     {"hdf5", "1.10.8"},
                     {"blas", "OpenBLAS 0.3.21"},
                     {"cuda_runtime", "13.0"},
                     {"nccl", "2.27.3"}};
  sys["topology"] = "\tGPU0\tGPU1\nGPU0\t X \tNV18\nGPU1\tNV18\t X \n";
  sys["ceilings"] = json::array({{{"scope", "gpu"},
                                  {"device", "GPU-0000-0"},
                                  {"kind", "copy_bandwidth"},
                                  {"value", 4.0e12},
                                  {"unit", "B/s"}},
                                 {{"scope", "gpu"},
                                  {"device", "GPU-0000-1"},
                                  {"kind", "copy_bandwidth"},
                                  {"value", 4000.0},
                                  {"unit", "GB/s"}},
                                 {{"scope", "gpu"},
                                  {"device", "GPU-0000-0"},
                                  {"kind", "fp64_gemm"},
                                  {"value", 60.0},
                                  {"unit", "TFLOP/s"}},
                                 {{"scope", "cpu"},
                                  {"device", "worker1"},
                                  {"kind", "stream_triad"},
                                  {"value", 2.0e10},
                                  {"unit", "B/s"}},
                                 {{"scope", "cpu"},
                                  {"device", "worker1"},
                                  {"kind", "dgemm"},
                                  {"value", 1.0e11},
                                  {"unit", "flop/s"}}});
  sys["custom"] = {
      {"nested", {{"deep", 3}, {"big", 18446744073709551615ULL}, {"neg", -7}}},
      {"list", {1, 2, 3}},
      {"floats", {0.5, 1.25, -3.0}},
      {"strs", {"a", "b", ""}},
      {"bools", {true, false}},
      {"matrix", {{1.5, 2.0}, {3.0, 4.0}}},
      {"imatrix", {{1, 2, 3}, {4, 5, 6}}},
      {"mixed", {1, "two", {{"three", 3}}, nullptr, {1, 2}}},
      {"empty", json::array()},
      {"empty_obj", json::object()},
      {"objs", {{{"a", 1}, {"b", "x"}, {"c", true}}, {{"a", 2}, {"b", "y"}, {"c", false}}}},
      {"ragged", {{{"a", 1}}, {{"b", 2}}}},
      {"slash/key", "s"},
      {"%percent", 1},
      {".", "dot"},
      {"", "empty key"}};
  m["system"] = sys;
  m["startup"] = {
      {"mpi_init_s", 0.12}, {"cuda_init_s", 0.5}, {"nccl_init_s", 0.3}, {"total_s", 1.0}};
  json cases = json::array();
  // subset-mean on the four paths: 4e6 draws, 3.2e7 bytes
  cases.push_back(make_case(0, "subset-mean", "single-cpu", "cpu", 1, {2.0, 2.1, 1.9, 2.0, 2.2},
                            4e6, 3.2e7, 0));
  cases.push_back(make_case(1, "subset-mean", "multi-cpu", "cpu", 2, {0.5, 0.52, 0.49, 0.5, 0.51},
                            4e6, 3.2e7, 0));
  cases.push_back(make_case(2, "subset-mean", "single-gpu", "gpu", 1,
                            {0.02, 0.021, 0.019, 0.02, 0.02}, 4e6, 8e10, 0));
  cases.push_back(make_case(3, "subset-mean", "multi-gpu", "gpu", 2,
                            {0.01, 0.011, 0.009, 0.01, 0.01}, 4e6, 8e10, 0));
  // svd single-cpu failed validation; flops-bound
  json svd = make_case(4, "svd", "single-cpu", "cpu", 1, {1.0, 1.1, 0.9, 1.0, 1.0}, 1e6, 0, 5e10,
                       "failed");
  svd["result"]["singular_values"] = {45.2, 10.1, 9.9, 9.7};
  // Text fields of a result (which routines ran), per repeat and in the last repeat's result.
  for (std::size_t i = 0; i < svd["results"].size(); ++i) {
    svd["results"][i]["local_routine"] = i == 0 ? "sketch,none" : "sketch";
    svd["results"][i]["svd_routine"] = "gram";
  }
  svd["result"]["local_routine"] = "sketch";
  svd["result"]["svd_routine"] = "gram";
  svd["validation"][1]["limit"] = nullptr;  // a check without a numeric limit
  svd["repeats"][0]["wait"] = 0.001;        // an extra phase in one repeat only
  for (std::size_t i = 1; i < svd["repeats"].size(); ++i) svd["repeats"][i]["wait"] = nullptr;
  cases.push_back(svd);
  // groupby multi-gpu skipped: nothing ran
  json gb = make_case(5, "groupby", "multi-gpu", "gpu", 2, {1.0}, 1, 1, 0, "skipped");
  gb["message"] = "no GPU on this machine";
  gb["repeats"] = json::array();
  gb["results"] = json::array();
  gb["validation"] = json::array();
  gb["task_events"] = json::object();
  gb["result"] = json::object();
  gb.erase("metrics");
  cases.push_back(gb);
  m["cases"] = cases;
  m["resume"] = {{"from", "old.h5"}, {"cases_kept", 3}};
  return m;
}

}  // namespace sb::results::test
