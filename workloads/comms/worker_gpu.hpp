#pragma once
/// @file worker.hpp
/// The GPU workers of comms (CUDA builds): the collectives over the case's NCCL communicator,
/// and the pair matrix (CUDA IPC copies between GPUs of one node, NCCL send/recv otherwise).

#include <memory>

#include "comms/config.hpp"
#include "scalebench/workload.hpp"

namespace sb::comms {

[[nodiscard]] std::unique_ptr<WorkerCase> make_sweep_worker_gpu(const Config& cfg,
                                                                const CaseEnv& env);
[[nodiscard]] std::unique_ptr<WorkerCase> make_pairs_worker_gpu(const Config& cfg,
                                                                const CaseEnv& env);

}  // namespace sb::comms
