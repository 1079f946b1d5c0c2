#pragma once
/// @file worker_gpu.hpp
/// The GPU worker of the svd workload (single-gpu and multi-gpu paths). Only defined in CUDA
/// builds (SCALEBENCH_HAVE_CUDA); svd.cpp calls it for Device::gpu.

#include <memory>

#include "scalebench/workload.hpp"

namespace sb::svd {

/// Same task layout and partials as the CPU worker (worker_cpu.hpp). submit() enqueues the
/// block's generation and QR on one of the worker's streams and returns at once; poll() hands
/// back finished blocks. finish_repeat() is collective over the case's GPU workers (NCCL) and
/// synchronous; validate() is collective over env.comm (MPI).
std::unique_ptr<WorkerCase> make_gpu_worker(const CaseSpec& spec, const CaseEnv& env);

}  // namespace sb::svd
