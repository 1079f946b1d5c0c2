#pragma once
/// @file rank_environment.hpp
/// Everything the launcher adds to the ranks' environment besides the placement
/// (batch/allocation.hpp makes the launch command; job_runner.cpp applies this to it), each
/// variable only when the user has not set it (docs/settings.md, "What the ranks' environment
/// gets").

#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "batch/allocation.hpp"

namespace sb {

/// A variable every rank gets unless the user set it.
struct RankDefault {
  const char* name;
  const char* value;
};

/// The ranks' defaults:
///  - OPENBLAS_THREAD_TIMEOUT=22: OpenBLAS's idle threads spin (sched_yield) for 2^28 cycles,
///    about 0.1 s, after every BLAS call, and after a validation on every worker of a GPU node
///    that is every core busy and the next case's first repeats 10x slower (groupby seed after
///    svd on each-gpu, run --trace on four GPUs). 2^22 cycles keep them warm between the calls
///    of one task and give the cores back within 2 ms.
///  - CUDA_DEVICE_MAX_CONNECTIONS=4: the driver makes each hardware queue of a context under a
///    lock that every process of the node shares, so GPU workers starting together wait for
///    each other's; four instead of eight take a quarter to a third off the contexts' time and cost
///    svd's eight streams under 1.5% (docs/performance.md, "Start-up").
[[nodiscard]] std::span<const RankDefault> rank_defaults();

/// OPENBLAS_CORETYPE for this node's ranks: Debian's OpenBLAS 0.3.21 takes some AVX-512 Xeons for
/// a Prescott and runs its slowest kernels (bench_svd_cpu's DGEMM), so "SkylakeX" (AVX-512) or
/// "Haswell" (AVX2) where it does; nullopt where it picks well or the user set the variable.
[[nodiscard]] std::optional<std::string> openblas_core_type();

/// Adds the rank defaults the user has not set to the plan's environment. An mpiexec plan that
/// names its variables with -x (other nodes) gets them named too; srun passes the environment on.
void add_rank_defaults(batch::LaunchPlan& plan);

/// Both sides' ranks of an A/B run get SCALEBENCH_AB_RUN=`mark` (JobPlan::ab_run): the side
/// parked while the other measures still holds its GPU contexts, and a worker that reads this
/// mark in such a process's environment does not count it as another user of its GPU.
void add_ab_mark(batch::LaunchPlan& plan, const std::string& mark);
/// Everything above and, for a job whose ranks all share one node, OpenMPI's shared-memory
/// transport and hwloc without GPU discovery (SCALEBENCH_MPI_TUNING; `extra` is
/// SCALEBENCH_MPIEXEC_ARGS, which may choose the transport itself). OPENBLAS_CORETYPE is this
/// node's: it is not named with -x for other nodes, whose CPUs may differ.
void add_rank_environment(batch::LaunchPlan& plan,
                          const std::vector<batch::RankPlacement>& placement,
                          const std::vector<std::string>& extra);

/// Adds an A/B side's environment (ab_request.hpp, env:NAME=VALUE) to the plan's, named with
/// -x as the defaults are where the plan forwards variables that way.
void add_side_environment(batch::LaunchPlan& plan, const std::map<std::string, std::string>& env);

}  // namespace sb
