#pragma once
/// @file worker_gpu.hpp
/// The GPU worker of groupby (worker_gpu.cu), defined in CUDA builds only (SCALEBENCH_HAVE_CUDA):
/// the same tasks, partials and validation as the CPU worker. Each task's rows are generated on
/// env.gpu->stream inside the kernel that first aggregates them (row_source.cuh; no column is
/// stored): low cardinality into dense_agg.cuh's block partials, high cardinality into
/// hash_table.cuh's table, staged by region (hash_stage.cuh) when the table is more than twice
/// the L2. Several GPUs combine over env.gpu->nccl: dense
/// accumulators by a reduction, groups by the exchange make_exchange chooses (exchange.cuh).

#include <memory>

#include "groupby/config.hpp"
#include "scalebench/workload.hpp"

namespace sb::groupby {

[[nodiscard]] std::unique_ptr<WorkerCase> make_gpu_worker(const Config& c, const CaseEnv& env);

}  // namespace sb::groupby
