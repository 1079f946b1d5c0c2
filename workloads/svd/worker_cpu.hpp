#pragma once
/// @file worker_cpu.hpp
/// The CPU worker of the svd workload (single-cpu and multi-cpu paths).

#include <memory>

#include "scalebench/workload.hpp"

namespace sb::svd {

/// Tasks are row blocks; submit() queues the block on the worker's thread pool (env.threads
/// threads) and returns at once, so keep at least env.threads tasks in flight (prefetch()).
/// Task partial: {} (the block's work is recorded by TaskOutcome). finish_repeat() is
/// collective over env.comm; it returns encode_finish (routines.hpp) of the engine's
/// local_routine() on every worker, plus svd_routine() and the singular values on case rank 0.
/// validate() is collective over env.comm; it returns {||A - U S V^T||_F^2, ||A||_F^2,
/// ||U^T U - I||_F} on case rank 0 and {} elsewhere.
std::unique_ptr<WorkerCase> make_cpu_worker(const CaseSpec& spec, const CaseEnv& env);

}  // namespace sb::svd
