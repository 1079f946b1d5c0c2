#pragma once
/// @file startup_gather.hpp
/// The scheduler's first step (runtime internals): every worker's start-up record, gathered
/// into the job's system description (nodes, GPUs, versions, ceilings, NVML topology) and its
/// start-up figures (/system/startup), plus who the workers are.

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rank.hpp"

namespace sb::detail {

/// A worker as the scheduler knows it.
struct WorkerInfo {
  int rank = 0;
  int threads = 1;
  bool gpu = false;
  std::string host;
  int node_gpu = -1;  ///< the GPU's ordinal on its node (placement), -1 without a GPU
  std::string model;  ///< the GPU's name, or the node's CPU model without a GPU
};

struct StartupInfo {
  std::vector<WorkerInfo> workers;      ///< by rank
  std::vector<WorkerInfo> gpu_workers;  ///< the workers bound to a GPU, by rank
  std::string gpu_skip_reason;          ///< why GPU cases are skipped (no GPU worker)
  nlohmann::json record;                ///< the stream's "start" record
};

/// Receives one start-up record from every worker rank (collective with their start-up).
/// `waiting` (may be empty) hears the worker ranks not yet reported and the seconds waited, at
/// the start and then every second while some are missing.
[[nodiscard]] StartupInfo gather_startup(
    RankContext& ctx,
    const std::function<void(const std::vector<int>& missing, double elapsed_s)>& waiting = {});

}  // namespace sb::detail
