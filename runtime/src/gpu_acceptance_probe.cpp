// A GPU's health and host link at start-up (gpu_acceptance_probe.hpp).
#include "gpu_acceptance_probe.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "gpu_process_census.hpp"
#include "nvml_health.hpp"
#include "nvml_processes.hpp"
#include "scalebench/clock.hpp"
#include "scalebench/error.hpp"

namespace sb::detail {
namespace {

using json = nlohmann::json;

/// 128 MiB each way: a copy of tens of milliseconds on PCIe, a few on NVLink-C2C.
constexpr std::size_t kLinkBytes = std::size_t{128} << 20;

json opt(const Reading<unsigned>& r) {
  return r.value ? json(*r.value) : json(nullptr);
}

}  // namespace

GpuAcceptanceProbe probe_gpu_acceptance(GpuContext& ctx, const json& desc,
                                        const std::vector<unsigned>& own_pids, bool measure_links) {
  GpuAcceptanceProbe out;
  try {
    const std::string bus = desc.value("pci_bus_id", std::string());
    const std::string model = desc.value("name", std::string());
    const int node_gpu = desc.value("node_gpu", -1);
    const NvmlLibrary nvml;
    const nvmlDevice_t dev = nvml.by_bus_id(bus);
    GpuHealthRaw h = read_gpu_health(nvml, dev);
    json others = nullptr;
    std::string names;
    HostCopyBandwidth bw;
    if (measure_links) {
      bw = measure_host_copy_bandwidth(ctx, kLinkBytes, [&] {
        read_pcie_link(nvml, dev, true, h);
        unsigned long long newest = 0;
        const ProcessSnapshot snap = read_process_snapshot(nvml, dev, newest);
        ProcessCensus census(std::set<unsigned>(own_pids.begin(), own_pids.end()));
        const OthersReading r = census.add(snap, false);
        if (std::isfinite(r.count)) others = r.count;
        for (const auto& p : snap.processes)
          if (std::count(own_pids.begin(), own_pids.end(), p.pid) == 0 && !is_mps_server(p))
            names += (names.empty() ? "" : ", ") + describe_process(p);
      });
    }
    if (!h.pcie_gen.value && !h.pcie_width.value) read_pcie_link(nvml, dev, false, h);
    if (!nvml.initialized) {
      // Every field says why: no NVML at all.
      h = GpuHealthRaw{};
      const std::string why = "NVML could not be loaded (libnvidia-ml.so.1)";
      for (auto* r : {&h.pcie_gen, &h.pcie_width, &h.pcie_gen_max, &h.pcie_gen_gpu_max,
                      &h.pcie_width_max, &h.remapped_correctable, &h.remapped_uncorrectable,
                      &h.app_sm_mhz, &h.app_sm_default_mhz, &h.app_mem_mhz, &h.app_mem_default_mhz})
        r->fail(why);
      for (auto* r : {&h.remap_pending, &h.remap_failed, &h.persistence, &h.ecc_current,
                      &h.ecc_pending, &h.inforom_valid})
        r->fail(why);
      h.nvlink_why = why;
      h.nvlink_errors.fail(why);
      h.compute_mode.fail(why);
      h.power_limit_w.fail(why);
      h.power_default_w.fail(why);
      h.driver.fail(why);
      h.vbios.fail(why);
      h.numa_node.fail(why);
    }
    for (auto row : health_rows(h)) {
      row["node_gpu"] = node_gpu;
      row["pci_bus_id"] = bus;
      row["model"] = model;
      out.health.push_back(std::move(row));
    }
    if (measure_links) {
      for (const bool h2d : {true, false}) {
        const double rate = h2d ? bw.h2d_bytes_per_s : bw.d2h_bytes_per_s;
        out.links.push_back(
            {{"node_gpu", node_gpu},
             {"pci_bus_id", bus},
             {"model", model},
             {"direction", h2d ? "host-to-device" : "device-to-host"},
             {"bytes_per_s", rate > 0 ? json(rate) : json(nullptr)},
             {"bytes", bw.bytes},
             {"error", bw.error},
             {"pcie_generation", h.pcie_under_load ? opt(h.pcie_gen) : json(nullptr)},
             {"pcie_width", h.pcie_under_load ? opt(h.pcie_width) : json(nullptr)},
             {"pcie_generation_max", opt(h.pcie_gen_max)},
             {"pcie_width_max", opt(h.pcie_width_max)},
             {"gpu_numa_node", h.numa_node.value ? json(*h.numa_node.value) : json(nullptr)},
             {"host_numa_node", bw.host_numa_node >= 0 ? json(bw.host_numa_node) : json(nullptr)},
             {"others", others},
             {"other_processes", names}});
      }
    }
  } catch (...) {
    // A probe that could not finish leaves what it has; the verdicts say what is missing.
  }
  return out;
}

std::vector<unsigned> node_worker_pids(MPI_Comm node_workers) {
  int n = 0;
  SB_MPI_CHECK(MPI_Comm_size(node_workers, &n));
  unsigned mine = static_cast<unsigned>(getpid());
  std::vector<unsigned> all(static_cast<std::size_t>(n));
  SB_MPI_CHECK(MPI_Allgather(&mine, 1, MPI_UNSIGNED, all.data(), 1, MPI_UNSIGNED, node_workers));
  return all;
}

bool plan_accepts_gpus(const JobPlan& plan) {
  return std::any_of(plan.cases.begin(), plan.cases.end(),
                     [](const CaseSpec& c) { return c.path == ExecPath::each_gpu; });
}

void add_acceptance_probe(const JobPlan& plan, RankContext& ctx, nlohmann::json& desc,
                          const std::vector<unsigned>& node_pids) {
  if (!plan_accepts_gpus(plan)) return;
  const double t0 = now();
  int me = 0, n = 1;
  SB_MPI_CHECK(MPI_Comm_rank(ctx.node_workers, &me));
  SB_MPI_CHECK(MPI_Comm_size(ctx.node_workers, &n));
  for (int turn = 0; turn < n; ++turn) {
    if (turn == me && ctx.gpu_ctx && desc.contains("gpu_description")) {
      GpuAcceptanceProbe p = probe_gpu_acceptance(*ctx.gpu_ctx, desc["gpu_description"], node_pids,
                                                  plan.measure_ceilings);
      desc["gpu_health"] = std::move(p.health);
      desc["host_links"] = std::move(p.links);
    }
    SB_MPI_CHECK(MPI_Barrier(ctx.node_workers));
  }
  desc["acceptance_probe_s"] = now() - t0;
}

}  // namespace sb::detail
