#include "svd_driver.hpp"

#include <algorithm>
#include <memory>

#include "svd/svd.hpp"

namespace sb::svd::test {

Config make_config(std::int64_t m, std::int64_t n, std::int64_t chunk, double condition) {
  Config c;
  c.m = m;
  c.n = n;
  c.chunk = chunk;
  c.condition = condition;
  return c;
}

CaseSpec make_spec(std::int64_t m, std::int64_t n, std::int64_t chunk, double condition,
                   std::uint64_t seed) {
  CaseSpec spec;
  spec.workload = "svd";
  spec.params.set("m", std::to_string(m));
  spec.params.set("n", std::to_string(n));
  spec.params.set("chunk", std::to_string(chunk));
  spec.params.set("seed", std::to_string(seed));
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", condition);
  spec.params.set("condition", buf);
  spec.id = "svd/test/" + spec.params.canonical();
  return spec;
}

namespace {
/// Concatenates every rank's vector on rank 0; returns per-rank vectors there.
std::vector<std::vector<double>> gather(const std::vector<double>& mine, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int count = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(size)), displs(static_cast<std::size_t>(size));
  MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm);
  int total = 0;
  for (int r = 0; r < size; ++r) {
    displs[static_cast<std::size_t>(r)] = total;
    total += counts[static_cast<std::size_t>(r)];
  }
  std::vector<double> all(static_cast<std::size_t>(std::max(total, 1)));
  MPI_Gatherv(mine.data(), count, MPI_DOUBLE, all.data(), counts.data(), displs.data(), MPI_DOUBLE,
              0, comm);
  std::vector<std::vector<double>> out;
  if (rank != 0) return out;
  for (int r = 0; r < size; ++r) {
    const auto b = all.begin() + displs[static_cast<std::size_t>(r)];
    out.emplace_back(b, b + counts[static_cast<std::size_t>(r)]);
  }
  return out;
}
}  // namespace

Driven drive(const CaseSpec& spec, const CaseEnv& env, WorkerCase& worker,
             const std::vector<std::vector<std::int64_t>>& tasks_per_repeat) {
  const Workload w = svd_workload();
  std::unique_ptr<SchedulerCase> sched;
  if (env.rank == 0) sched = w.make_scheduler(spec);
  Driven out;
  for (const auto& tasks : tasks_per_repeat) {
    if (sched) sched->begin_repeat();
    worker.begin_repeat();
    std::vector<double> done_tasks;
    std::size_t next = 0;
    const auto depth = static_cast<std::size_t>(std::max(1, worker.prefetch()));
    while (next < tasks.size() || worker.in_flight() > 0) {
      while (next < tasks.size() && worker.in_flight() < depth) worker.submit(tasks[next++]);
      if (auto o = worker.poll(true)) done_tasks.push_back(static_cast<double>(o->task));
    }
    const std::vector<double> partial = worker.finish_repeat();
    const auto all_tasks = gather(done_tasks, env.comm);
    const auto all_partials = gather(partial, env.comm);
    if (sched) {
      for (const auto& per_rank : all_tasks)
        for (double t : per_rank) {
          TaskOutcome o;
          o.task = static_cast<std::int64_t>(t);
          sched->on_task(o);
        }
      for (std::size_t r = 0; r < all_partials.size(); ++r)
        sched->on_worker_done(static_cast<int>(r), all_partials[r]);
      out.results.push_back(sched->end_repeat());
    }
  }
  const auto parts = gather(worker.validate(), env.comm);
  if (sched) {
    out.checks = sched->validate(parts);
    out.fingerprint = sched->fingerprint();
  }
  return out;
}

void ensure_mpi() {
  int ok = 0;
  MPI_Initialized(&ok);
  if (ok) return;
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  std::atexit([] {
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin) MPI_Finalize();
  });
}

}  // namespace sb::svd::test
