#pragma once
// A stand-in for the runtime in svd tests: runs one case with every rank of env.comm as a
// worker and case rank 0 also as the scheduler, through the WorkerCase/SchedulerCase contract.

#include <mpi.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalebench/workload.hpp"
#include "svd/config.hpp"

namespace sb::svd::test {

struct Driven {
  std::vector<nlohmann::json> results;  ///< per repeat (rank 0)
  std::vector<Check> checks;            ///< rank 0
  Fingerprint fingerprint;              ///< rank 0
};

/// CaseSpec for svd with these parameters.
CaseSpec make_spec(std::int64_t m, std::int64_t n, std::int64_t chunk, double condition = 1,
                   std::uint64_t seed = 42);

/// Config of an m x n matrix in blocks of `chunk` rows (the other fields at their defaults).
Config make_config(std::int64_t m, std::int64_t n, std::int64_t chunk, double condition = 1);

/// Runs `repeats` repeats; tasks_of(repeat) gives this rank's tasks of that repeat, in order.
/// The worker must come from svd_workload().make_worker(spec, env).
Driven drive(const CaseSpec& spec, const CaseEnv& env, WorkerCase& worker,
             const std::vector<std::vector<std::int64_t>>& tasks_per_repeat);

/// MPI for GoogleTest programs built with gtest_main: initialised on first use, finalised at exit.
void ensure_mpi();

}  // namespace sb::svd::test
