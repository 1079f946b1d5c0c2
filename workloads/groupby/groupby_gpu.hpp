#pragma once
/// @file groupby_gpu.hpp
/// The GPU worker of groupby (worker_gpu.cu), defined in CUDA builds only
/// (SCALEBENCH_HAVE_CUDA): the same tasks, partials and validation as the CPU worker, with
/// generation and aggregation kernels on env.gpu->stream and the multi-GPU combine over
/// env.gpu->nccl (gpu_kernels.cuh). by-key stages rows by table region during the tasks and
/// aggregates region by region in finish_repeat when its table is several times the L2.

#include <memory>

#include "groupby/config.hpp"
#include "scalebench/workload.hpp"

namespace sb::groupby {

[[nodiscard]] std::unique_ptr<WorkerCase> make_gpu_worker(const Config& c, const CaseEnv& env);

}  // namespace sb::groupby
