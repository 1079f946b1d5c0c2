#pragma once
/// @file worker_gpu.hpp
/// The GPU worker of subset-mean (worker_gpu.cu). Only defined in CUDA builds
/// (SCALEBENCH_HAVE_CUDA); subset_mean.cpp calls it for Device::gpu.

#include <memory>

#include "scalebench/workload.hpp"

namespace sb::subset_mean {

/// Task layout and partials are those of the CPU worker: task t is block (t / blocks_per_row,
/// t % blocks_per_row) of chunk x chunk elements; partial = {subset_sum_of_z, full_sum_of_z}.
std::unique_ptr<WorkerCase> make_gpu_worker(const CaseSpec& spec, const CaseEnv& env);

}  // namespace sb::subset_mean
