#pragma once
/// @file worker_cpu.hpp
/// The CPU worker of groupby: per task, generation of the query's columns (Phase::generate)
/// and hash aggregation into thread-local partitioned tables (Phase::compute), all with
/// env.threads OpenMP threads; at the end of a repeat the thread tables merge in parallel and,
/// with several workers, combine over env.comm (combine_mpi.hpp, Phase::communicate).

#include <memory>

#include "groupby/config.hpp"
#include "scalebench/workload.hpp"

namespace sb::groupby {

[[nodiscard]] std::unique_ptr<WorkerCase> make_cpu_worker(const Config& c, const CaseEnv& env);

}  // namespace sb::groupby
