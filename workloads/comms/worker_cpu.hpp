#pragma once
/// @file worker_cpu.hpp
/// The CPU workers of comms: collectives (sweep_cpu.cpp) and pair transfers (pairs_cpu.cpp) over
/// MPI between CPU workers (one per node, or per GPU on GPU nodes), inside a node through MPI's
/// shared memory, across nodes through its network.

#include <memory>

#include "comms/config.hpp"
#include "scalebench/workload.hpp"

namespace sb::comms {

/// The case's CPU worker: a collective's sweep or the pair matrix (worker_cpu.cpp).
[[nodiscard]] std::unique_ptr<WorkerCase> make_cpu_worker(const CaseSpec& spec, const CaseEnv& env);

[[nodiscard]] std::unique_ptr<WorkerCase> make_sweep_worker_cpu(const Config& cfg,
                                                                const CaseEnv& env);
[[nodiscard]] std::unique_ptr<WorkerCase> make_pairs_worker_cpu(const Config& cfg,
                                                                const CaseEnv& env);

}  // namespace sb::comms
