#pragma once
/// @file worker_gpu.hpp
/// The GPU workers of comms (CUDA builds): the collectives over the case's NCCL communicator
/// (gpu/sweep_gpu.cu), and the pair matrix (gpu/pairs_gpu.cu: CUDA IPC copies between GPUs of one
/// node, NCCL send/recv otherwise).

#include <memory>

#include "comms/config.hpp"
#include "scalebench/workload.hpp"

namespace sb::comms {

/// The case's GPU worker: a collective's sweep or the pair matrix (worker_gpu.cu).
[[nodiscard]] std::unique_ptr<WorkerCase> make_gpu_worker(const CaseSpec& spec, const CaseEnv& env);

[[nodiscard]] std::unique_ptr<WorkerCase> make_sweep_worker_gpu(const Config& cfg,
                                                                const CaseEnv& env);
[[nodiscard]] std::unique_ptr<WorkerCase> make_pairs_worker_gpu(const Config& cfg,
                                                                const CaseEnv& env);

}  // namespace sb::comms
