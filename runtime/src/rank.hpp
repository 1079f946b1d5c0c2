#pragma once
/// @file rank.hpp
/// The MPI job's two roles: rank 0 schedules, ranks 1..W work (runtime internals).

#include <mpi.h>

#include <memory>
#include <string>

#include "nvml_warm_up.hpp"
#include "scalebench/gpu_runtime.hpp"
#include "scalebench/job_plan.hpp"
#include "scalebench/rank_protocol.hpp"

namespace sb::detail {

struct RankContext {
  MPI_Comm world = MPI_COMM_WORLD;
  int rank = 0;
  int size = 1;
  MPI_Comm workers = MPI_COMM_NULL;       ///< every worker rank (not rank 0)
  MPI_Comm gpu_workers = MPI_COMM_NULL;   ///< workers bound to a GPU
  MPI_Comm node_workers = MPI_COMM_NULL;  ///< the workers of this worker's node (each-node)
  std::string host;
  int local_rank = 0;
  int threads = 1;  ///< CPU threads of this worker
  int gpu = -1;     ///< GPU ordinal on this node (workers), -1 for none
  /// The CUDA ordinal of that GPU in this process: 0 when the rank narrowed
  /// CUDA_VISIBLE_DEVICES to it before CUDA started (gpu_isolation.hpp), else `gpu`.
  int device = -1;
  bool gpu_isolated = false;  ///< CUDA_VISIBLE_DEVICES narrowed to GPU `isolated_gpu`
  int isolated_gpu = -1;
  std::string cuda_visible_devices;  ///< the variable as this worker's CUDA saw it ("" = unset)
  double mpi_init_s = 0;
  double launch_epoch = 0;  ///< when the launcher started the job (system clock, seconds)
  double main_epoch = 0;    ///< when this process entered main() (system clock, seconds)
  double main_steady = 0;   ///< the same moment on sb::now()'s steady clock
  GpuContextPtr gpu_ctx;
  GpuEarlyContextPtr gpu_early;  ///< started before MPI_Init; adopted or released by run_worker
  std::unique_ptr<NvmlWarmUp> nvml_warm;  ///< NVML coming up beside gpu_early
  GpuStartup gpu_startup;
};

/// Rank 0. Returns the process exit code (0, or kExitRestart after an abort-worthy failure,
/// in which case MPI_Abort has been called).
int run_scheduler(const JobPlan& plan, RankContext& ctx);

/// Ranks 1..W: start-up (GPU, ceilings), then serve the scheduler until it shuts us down.
void run_worker(const JobPlan& plan, RankContext& ctx);

}  // namespace sb::detail
