#pragma once
// One comms case in-process on every rank of a communicator (each rank a worker, rank 0 also
// the scheduler; partials gathered over MPI): the call sequence of the runtime (workload.hpp)
// without it.

#include <mpi.h>

#include <vector>

#include <nlohmann/json.hpp>

#include "comms/comms.hpp"
#include "scalebench/workload.hpp"

namespace sb::comms::test {

struct CaseRun {
  std::vector<nlohmann::json> results;  ///< every repeat's (warm-up first)
  std::vector<Check> checks;
  nlohmann::json metrics;
};

inline std::vector<std::vector<double>> gather(const std::vector<double>& mine, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int n = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(size)), displs(counts.size());
  MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm);
  int total = 0;
  for (int i = 0; i < size; ++i) {
    displs[static_cast<std::size_t>(i)] = total;
    total += counts[static_cast<std::size_t>(i)];
  }
  std::vector<double> all(static_cast<std::size_t>(rank == 0 ? total : 0));
  MPI_Gatherv(mine.data(), n, MPI_DOUBLE, all.data(), counts.data(), displs.data(), MPI_DOUBLE, 0,
              comm);
  std::vector<std::vector<double>> out;
  if (rank == 0)
    for (int i = 0; i < size; ++i)
      out.emplace_back(
          all.begin() + displs[static_cast<std::size_t>(i)],
          all.begin() + displs[static_cast<std::size_t>(i)] + counts[static_cast<std::size_t>(i)]);
  return out;
}

/// Runs the case of `params` on every rank of `comm` (multi-cpu, 1 warm-up + `repeats`).
/// `tamper` (if set) may change a worker's partial before it is gathered (rank, partial).
/// Collective; the returned run is meaningful on rank 0 only.
template <typename Tamper>
CaseRun run_case(const Params& params, MPI_Comm comm, int repeats, Tamper tamper) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const Workload w = comms_workload();
  CaseSpec spec;
  spec.workload = "comms";
  spec.id = "comms/multi-cpu/" + params.canonical();
  spec.path = ExecPath::multi_cpu;
  spec.params = params;
  spec.workers = size;
  spec.repeats = repeats;
  spec.warmup = 1;
  CaseEnv env;
  env.rank = rank;
  env.size = size;
  env.threads = 1;
  env.comm = comm;
  env.host = "localhost";
  auto sched = w.make_scheduler(spec);
  auto worker = w.make_worker(spec, env);
  CaseRun run;
  for (int rep = 0; rep < spec.warmup + repeats; ++rep) {
    sched->begin_repeat();
    worker->begin_repeat();
    EXPECT_EQ(sched->num_tasks(), 0);
    std::vector<double> fin = worker->finish_repeat();
    tamper(rank, fin);
    const auto all = gather(fin, comm);
    if (rank == 0) {
      for (int r = 0; r < size; ++r) sched->on_worker_done(r, all[static_cast<std::size_t>(r)]);
      run.results.push_back(sched->end_repeat());
    }
  }
  const auto parts = gather(worker->validate(), comm);
  if (rank == 0) {
    run.checks = sched->validate(parts);
    run.metrics = sched->metrics();
  }
  return run;
}

inline CaseRun run_case(const Params& params, MPI_Comm comm, int repeats = 2) {
  return run_case(params, comm, repeats, [](int, std::vector<double>&) {});
}

}  // namespace sb::comms::test
