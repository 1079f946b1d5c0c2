#pragma once
/// @file rank_environment.hpp
/// What the launcher adds to the ranks' environment besides the placement (batch/allocation.hpp
/// makes the launch command; job_runner.cpp applies this to it).

#include "batch/allocation.hpp"

namespace sb {

/// OPENBLAS_THREAD_TIMEOUT=22 for every rank, unless the user set it: OpenBLAS's idle threads
/// spin (sched_yield) for 2^28 cycles, about 0.1 s, after every BLAS call, and after a
/// validation on every worker of a GPU node that is every core busy and the next case's first
/// repeats 10x slower (groupby seed after svd on each-gpu, run --trace on four GPUs). 2^22
/// cycles keep them warm between the calls of one task and give the cores back within 2 ms.
/// An mpiexec plan that names its variables with -x (other nodes) gets it named too; srun
/// passes the environment on.
void settle_idle_blas_threads(batch::LaunchPlan& plan);

}  // namespace sb
