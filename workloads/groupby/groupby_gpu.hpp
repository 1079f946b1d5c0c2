#pragma once
/// @file groupby_gpu.hpp
/// The GPU worker of groupby (worker_gpu.cu), defined in CUDA builds only
/// (SCALEBENCH_HAVE_CUDA): the same tasks, partials and validation as the CPU worker, with
/// generation and aggregation kernels on env.gpu->stream and the multi-GPU combine over
/// env.gpu->nccl (aggregate_gpu.cuh).

#include <memory>

#include "groupby/config.hpp"
#include "scalebench/workload.hpp"

namespace sb::groupby {

[[nodiscard]] std::unique_ptr<WorkerCase> make_gpu_worker(const Config& c, const CaseEnv& env);

}  // namespace sb::groupby
