#pragma once
// In-process drivers of one groupby case (scheduler and workers in one process), shared by the
// groupby tests: the same call sequence as the runtime (workload.hpp), without the runtime.

#include <mpi.h>

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "groupby/groupby.hpp"
#include "scalebench/workload.hpp"

namespace sb::test {

struct CaseRun {
  nlohmann::json result;      ///< last repeat
  std::vector<Check> checks;  ///< SchedulerCase::validate
  Fingerprint fingerprint;
  std::vector<std::vector<double>> finish_partials;  ///< last repeat, by rank
};

inline CaseSpec make_spec(const Params& params, ExecPath path, int workers) {
  CaseSpec spec;
  spec.workload = "groupby";
  spec.id = "groupby/test/" + params.canonical();
  spec.path = path;
  spec.params = params;
  spec.workers = workers;
  spec.repeats = 2;
  spec.warmup = 0;
  return spec;
}

/// One worker (env.size == 1) running every task, `repeats` repeats.
inline CaseRun run_single(const Params& params, const CaseEnv& env, int repeats = 2) {
  const Workload w = groupby_workload();
  const CaseSpec spec =
      make_spec(params, env.device == Device::gpu ? ExecPath::single_gpu : ExecPath::single_cpu, 1);
  auto sched = w.make_scheduler(spec);
  auto worker = w.make_worker(spec, env);
  CaseRun run;
  for (int rep = 0; rep < repeats; ++rep) {
    sched->begin_repeat();
    worker->begin_repeat();
    for (std::int64_t t = 0; t < sched->num_tasks(); ++t) {
      worker->submit(t);
      while (worker->in_flight() > 2) sched->on_task(*worker->poll(true));
    }
    while (worker->in_flight() > 0) sched->on_task(*worker->poll(true));
    run.finish_partials = {worker->finish_repeat()};
    sched->on_worker_done(0, run.finish_partials[0]);
    run.result = sched->end_repeat();
  }
  run.checks = sched->validate({worker->validate()});
  run.fingerprint = sched->fingerprint();
  return run;
}

/// Every rank of `comm` is a worker; tasks are dealt round-robin; rank 0 plays the scheduler
/// (partials gathered over MPI). Collective; the returned run is meaningful on rank 0 only.
inline CaseRun run_mpi(const Params& params, MPI_Comm comm, int threads, int repeats = 2) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const Workload w = groupby_workload();
  const CaseSpec spec = make_spec(params, ExecPath::multi_cpu, size);
  CaseEnv env;
  env.rank = rank;
  env.size = size;
  env.threads = threads;
  env.comm = comm;
  auto sched = w.make_scheduler(spec);
  auto worker = w.make_worker(spec, env);

  auto gather = [&](const std::vector<double>& mine) {
    int n = static_cast<int>(mine.size());
    std::vector<int> counts(static_cast<std::size_t>(size)), displs(static_cast<std::size_t>(size));
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
        out.emplace_back(all.begin() + displs[static_cast<std::size_t>(i)],
                         all.begin() + displs[static_cast<std::size_t>(i)] +
                             counts[static_cast<std::size_t>(i)]);
    return out;
  };

  CaseRun run;
  for (int rep = 0; rep < repeats; ++rep) {
    sched->begin_repeat();
    worker->begin_repeat();
    std::vector<double> outcomes;  // (task, rows) pairs
    for (std::int64_t t = rank; t < sched->num_tasks(); t += size) {
      worker->submit(t);
      while (worker->in_flight() > 0) {
        const auto o = worker->poll(true);
        outcomes.push_back(static_cast<double>(o->task));
        outcomes.push_back(o->partial.at(0));
      }
    }
    const std::vector<double> fin = worker->finish_repeat();
    const auto all_outcomes = gather(outcomes);
    const auto all_fin = gather(fin);
    if (rank == 0) {
      for (const auto& v : all_outcomes)
        for (std::size_t i = 0; i + 1 < v.size(); i += 2) {
          TaskOutcome o;
          o.task = static_cast<std::int64_t>(v[i]);
          o.partial = {v[i + 1]};
          sched->on_task(o);
        }
      for (int r = 0; r < size; ++r) sched->on_worker_done(r, all_fin[static_cast<std::size_t>(r)]);
      run.result = sched->end_repeat();
      run.finish_partials = all_fin;
    }
  }
  const auto parts = gather(worker->validate());
  if (rank == 0) {
    run.checks = sched->validate(parts);
    run.fingerprint = sched->fingerprint();
  }
  return run;
}

}  // namespace sb::test
