// The scheduler's start-up step (startup_gather.hpp).
#include "startup_gather.hpp"

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>
#include <unordered_set>

#include "message.hpp"
#include "scalebench/clock.hpp"
#include "scalebench/gpu_runtime.hpp"
#include "scalebench/nvml_probe.hpp"
#include "scalebench/system_info.hpp"

namespace sb::detail {

StartupInfo gather_startup(
    RankContext& ctx,
    const std::function<void(const std::vector<int>& missing, double elapsed_s)>& waiting) {
  StartupInfo info;
  const int nworkers = ctx.size - 1;
  // NVML's topology matrix (tens to hundreds of ms on a GPU node) while the workers start.
  std::string topology;
  std::thread topology_probe([&topology] {
    try {
      topology = nvml_topology_matrix();
    } catch (...) {
      topology.clear();  // no topology is a valid report
    }
  });
  struct Joiner {
    std::thread& t;
    ~Joiner() {
      if (t.joinable()) t.join();
    }
  } join_probe{topology_probe};
  nlohmann::json nodes = nlohmann::json::array();
  nlohmann::json gpus = nlohmann::json::array();
  nlohmann::json ceilings = nlohmann::json::array();
  nlohmann::json gpu_health = nlohmann::json::array();  // node acceptance (gpu_acceptance_probe)
  nlohmann::json host_links = nlohmann::json::array();
  double acceptance_probe_s = 0;
  nlohmann::json versions = library_versions();
  std::unordered_set<std::string> hosts;  // a lookup per worker, whatever their number
  double mpi_init = ctx.mpi_init_s, cuda_init = 0, nccl_init = 0, ceilings_s = 0;
  // Finer start-up figures (max over workers): where the time before `ready` went.
  double launch_to_main = ctx.launch_epoch > 0 ? ctx.main_epoch - ctx.launch_epoch : 0.0;
  double cuda_wait = 0, nccl_wait = 0, describe = 0, ready_after_main = 0, gpu_libraries = 0;
  double describe_node_s = 0, describe_gpu_s = 0;
  int gpu_ranks = 0, cuda_early = 0, nccl_ranks = 0, nccl_overlapped = 0;
  auto add_node = [&](const nlohmann::json& node) {
    const auto host = node.at("host").get<std::string>();
    if (hosts.insert(host).second) nodes.push_back(node);
  };
  add_node(describe_node());
  Message m;
  std::set<int> missing;
  for (int r = 1; r <= nworkers; ++r) missing.insert(r);
  const double wait_t0 = now();
  auto tell = [&] {
    if (waiting) waiting(std::vector<int>(missing.begin(), missing.end()), now() - wait_t0);
  };
  tell();
  for (int i = 0; i < nworkers; ++i) {
    while (!receive(ctx.world, MPI_ANY_SOURCE, kTagStartup, m, now() + 1.0)) tell();
    missing.erase(m.source);
    Reader r(m.data);
    const auto w = nlohmann::json::parse(r.get_str());
    WorkerInfo wi;
    wi.rank = m.source;
    wi.threads = w.at("threads").get<int>();
    wi.gpu = w.at("gpu").get<int>() >= 0;
    wi.host = w.at("host").get<std::string>();
    wi.node_gpu = wi.gpu ? w.at("gpu").get<int>() : -1;
    wi.model = wi.gpu && w.contains("gpu_description")
                   ? w["gpu_description"].value("name", std::string())
                   : w.at("node").value("cpu_model", std::string());
    info.workers.push_back(wi);
    add_node(w.at("node"));
    mpi_init = std::max(mpi_init, w.value("mpi_init_s", 0.0));
    cuda_init = std::max(cuda_init, w.value("cuda_init_s", 0.0));
    nccl_init = std::max(nccl_init, w.value("nccl_init_s", 0.0));
    ceilings_s = std::max(ceilings_s, w.value("ceilings_s", 0.0));
    launch_to_main = std::max(launch_to_main, w.value("launch_to_main_s", 0.0));
    cuda_wait = std::max(cuda_wait, w.value("cuda_wait_s", 0.0));
    gpu_libraries = std::max(gpu_libraries, w.value("gpu_libraries_s", 0.0));
    nccl_wait = std::max(nccl_wait, w.value("nccl_wait_s", 0.0));
    describe = std::max(describe, w.value("describe_s", 0.0));
    describe_node_s = std::max(describe_node_s, w.value("describe_node_s", 0.0));
    describe_gpu_s = std::max(describe_gpu_s, w.value("describe_gpu_s", 0.0));
    ready_after_main = std::max(ready_after_main, w.value("ready_after_main_s", 0.0));
    if (wi.gpu) {
      ++gpu_ranks;
      cuda_early += w.value("cuda_early", false) ? 1 : 0;
      if (w.value("nccl_init_s", 0.0) > 0) {
        ++nccl_ranks;
        nccl_overlapped += w.value("nccl_overlapped", false) ? 1 : 0;
      }
    }
    if (w.contains("gpu_description")) {
      auto g = w.at("gpu_description");
      g["host"] = wi.host;
      g["worker_rank"] = wi.rank;
      gpus.push_back(g);
      for (const auto& [k, v] : w.at("gpu_versions").items()) versions[k] = v;
    }
    if (w.contains("gpu_ceilings")) {
      for (auto c : w.at("gpu_ceilings")) {
        c["host"] = wi.host;
        c["worker_rank"] = wi.rank;
        ceilings.push_back(c);
      }
    }
    for (const char* key : {"gpu_health", "host_links"})
      for (auto row : w.value(key, nlohmann::json::array())) {
        row["host"] = wi.host;
        row["worker_rank"] = wi.rank;
        (key[0] == 'g' ? gpu_health : host_links).push_back(std::move(row));
      }
    acceptance_probe_s = std::max(acceptance_probe_s, w.value("acceptance_probe_s", 0.0));
    if (w.contains("cpu_ceilings")) {
      for (auto c : w.at("cpu_ceilings")) {
        c["host"] = wi.host;
        c["worker_rank"] = wi.rank;
        ceilings.push_back(c);
      }
    }
  }
  std::sort(info.workers.begin(), info.workers.end(),
            [](const WorkerInfo& a, const WorkerInfo& b) { return a.rank < b.rank; });
  for (const auto& w : info.workers)
    if (w.gpu) info.gpu_workers.push_back(w);
  if (info.gpu_workers.empty()) {
    if (!cuda_built()) {
      info.gpu_skip_reason = "no GPU: scalebench was built without CUDA";
    } else {
      std::string why;
      const int vis = visible_gpu_count(&why);
      info.gpu_skip_reason = vis == 0 ? (why.empty() ? "no GPU visible to the workers" : why)
                                      : "no worker is bound to a GPU";
    }
  }
  topology_probe.join();
  const double ready =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  nlohmann::json startup = {
      {"mpi_init_s", mpi_init},
      {"cuda_init_s", cuda_init},
      {"nccl_init_s", nccl_init},
      {"ceilings_s", ceilings_s},
      {"total_s", ctx.launch_epoch > 0 ? ready - ctx.launch_epoch : 0.0},
      {"launch_to_main_s", launch_to_main},
      {"describe_s", describe},
      {"describe_node_s", describe_node_s},
      {"describe_gpu_s", describe_gpu_s},
      {"cuda_wait_s", cuda_wait},
      {"gpu_libraries_s", gpu_libraries},
      {"nccl_wait_s", nccl_wait},
      {"ready_after_main_s", ready_after_main},
      {"acceptance_probe_s", acceptance_probe_s},
      // 1 when every GPU worker did it, else 0 (numbers, as the
      // report keeps start-up figures as float64 attributes)
      {"cuda_overlapped_mpi_init", gpu_ranks > 0 && cuda_early == gpu_ranks ? 1.0 : 0.0},
      {"nccl_overlapped_ceilings", nccl_ranks > 0 && nccl_overlapped == nccl_ranks ? 1.0 : 0.0}};
  nlohmann::json system = {{"nodes", nodes},
                           {"gpus", gpus},
                           {"versions", versions},
                           {"ceilings", ceilings},
                           {"topology", topology}};
  if (!gpu_health.empty()) system["gpu_health"] = std::move(gpu_health);
  if (!host_links.empty()) system["host_links"] = std::move(host_links);
  info.record = {{"type", "start"},
                 {"system", system},
                 {"startup", startup},
                 {"ranks", ctx.size},
                 {"workers", nworkers},
                 {"gpu_workers", static_cast<int>(info.gpu_workers.size())},
                 {"nodes", static_cast<int>(nodes.size())}};
  return info;
}

}  // namespace sb::detail
