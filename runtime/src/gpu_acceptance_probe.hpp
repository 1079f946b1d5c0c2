#pragma once
/// @file gpu_acceptance_probe.hpp
/// (runtime internals) What a GPU worker records about its GPU at start-up in a run with each-gpu
/// cases (node acceptance, docs/acceptance.md): its health fields (gpu_health.hpp) and its link
/// to the host (host-to-device and device-to-host copy bandwidth from pinned memory, with the
/// PCIe link, the NUMA nodes and any other process on the GPU read while the copies run).

#include <mpi.h>

#include <vector>

#include <nlohmann/json.hpp>

#include "rank.hpp"
#include "scalebench/gpu_runtime.hpp"
#include "scalebench/job_plan.hpp"

namespace sb::detail {

struct GpuAcceptanceProbe {
  /// /system/gpu_health rows of this GPU: health_rows() with "node_gpu", "pci_bus_id", "model".
  nlohmann::json health = nlohmann::json::array();
  /// /system/host_links rows, one per direction: {"node_gpu", "pci_bus_id", "model",
  /// "direction" ("host-to-device", "device-to-host"), "bytes_per_s" (null: not measured),
  /// "bytes", "error", "pcie_generation", "pcie_width" (during the copies), "pcie_generation_max",
  /// "pcie_width_max", "gpu_numa_node", "host_numa_node", "others" (other compute processes on
  /// the GPU then; null: unknown), "other_processes" (them, for people)}.
  nlohmann::json links = nlohmann::json::array();
};

/// Probes this worker's GPU (`desc`: its describe_gpu(), for the bus id, name and ordinal).
/// `own_pids`: the job's ranks on this node. Never throws: what cannot be read is unavailable.
[[nodiscard]] GpuAcceptanceProbe probe_gpu_acceptance(GpuContext& ctx, const nlohmann::json& desc,
                                                      const std::vector<unsigned>& own_pids,
                                                      bool measure_links);

/// The pids of the workers on this node (collective over `node_workers`): the job's own
/// processes, which are not "other processes" on its GPUs.
[[nodiscard]] std::vector<unsigned> node_worker_pids(MPI_Comm node_workers);

/// Whether the plan judges GPUs one by one (each-gpu cases): the runs that probe them.
[[nodiscard]] bool plan_accepts_gpus(const JobPlan& plan);

/// In a run with each-gpu cases: probes this worker's GPU, one GPU of the node after another
/// (their host copies would share the host's memory and PCIe switches), and adds "gpu_health",
/// "host_links" and "acceptance_probe_s" to its start-up record `desc`. Collective over
/// ctx.node_workers (a worker without a GPU only takes part).
void add_acceptance_probe(const JobPlan& plan, RankContext& ctx, nlohmann::json& desc,
                          const std::vector<unsigned>& node_pids);

}  // namespace sb::detail
