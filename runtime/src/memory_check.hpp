#pragma once
/// @file memory_check.hpp
/// The worker's pre-allocation check of a case (runtime internals): the workload's estimate of
/// the memory one worker needs (Workload::memory_needed) against what this worker has, so that a
/// case too large for the node or the GPU fails alone, with one line naming both sizes, before
/// anything is allocated, and the run goes on with the next case.

#include <mpi.h>

#include <string>

#include "scalebench/workload.hpp"

namespace sb::detail {

/// Host memory this process may still use, in bytes: /proc/meminfo's MemAvailable, or the
/// room left under this process's cgroup memory limit (v2 memory.max - memory.current, or v1
/// limit_in_bytes - usage_in_bytes) when that is lower. SCALEBENCH_HOST_MEMORY_BYTES overrides
/// both (tests). Returns a negative value when nothing can be read.
[[nodiscard]] double host_memory_available();

/// Workers on this node: all of them, and those bound to a GPU.
struct NodeWorkers {
  int all = 1;
  int gpu = 0;
};
/// Collective over `workers` (every worker rank); has_gpu: this worker has a GPU context.
[[nodiscard]] NodeWorkers node_workers(MPI_Comm workers, bool has_gpu);

/// What the check compares for one worker.
struct MemoryBudget {
  int host_sharers = 1;    ///< the case's workers on this node sharing host memory
  double host_total = -1;  ///< host bytes available on the node before sharing (<0: unknown)
  int gpu = -1;            ///< GPU ordinal, GPU paths only
  double gpu_free = -1;    ///< free bytes of that GPU (<0: not checked)
};

/// Throws sb::EnvironmentError "svd: needs 81.6 GB of GPU memory per worker, GPU 0 has 79.1 GB
/// free" (or the host equivalent) when `need` exceeds `budget`.
void check_memory(const std::string& workload, const MemoryNeed& need, const MemoryBudget& budget);

}  // namespace sb::detail
