#include "groupby/worker_cpu.hpp"

#include <omp.h>

#include <deque>
#include <utility>
#include <vector>

#include "groupby/aggregate_cpu.hpp"
#include "groupby/combine_mpi.hpp"
#include "groupby/generate.hpp"
#include "groupby/protocol.hpp"
#include "groupby/validation.hpp"
#include "scalebench/clock.hpp"

namespace sb::groupby {

namespace {

/// Partitions of the thread and result tables: enough for parallel merges of large results.
int partition_bits_for(const Config& c) {
  return c.def.high_cardinality ? 6 : 0;
}

class CpuWorker final : public WorkerCase {
 public:
  CpuWorker(const Config& c, const CaseEnv& env)
      : cfg_(c), env_(env), threads_(env.threads < 1 ? 1 : env.threads) {
    const auto n = static_cast<std::size_t>(c.partition < c.rows ? c.partition : c.rows);
    const unsigned cols = c.def.columns;
    if (cols & kColName) name_.resize(n);
    if (cols & kColId) id_.resize(n);
    if (cols & kColKey) key_.resize(n);
    if (cols & kColX) x_.resize(n);
    if (cols & kColY) y_.resize(n);
    cols_.name = name_.data();
    cols_.id = id_.data();
    cols_.key = key_.data();
    cols_.x = x_.data();
    cols_.y = y_.data();
    // Thread tables sized for the groups one thread is likely to see, so the timed repeats
    // rarely grow them: all of a small domain, else the expected distinct keys among the rows
    // a thread aggregates (min(cardinality, rows per thread)).
    const int bits = partition_bits_for(c);
    const std::int64_t per_thread = c.rows / (static_cast<std::int64_t>(env.size) * threads_) + 1;
    const auto expect = static_cast<std::size_t>(c.max_groups(per_thread));
    for (int t = 0; t < threads_; ++t) tables_.emplace_back(bits, expect);
    result_ = PartitionedTable(bits, expect);  // swapped with tables_[0] after each merge
    (void)id_poisson_table();
  }

  void begin_repeat() override {
    for (auto& t : tables_) t.clear();
    result_.clear();
    times_ = PhaseTimes{};
    stats_ = ShuffleStats{};
    done_.clear();
    t0_ = now();
  }

  void submit(std::int64_t task) override {
    // Not a structured binding: b is used inside an OpenMP region below (clang < 16 rejects
    // captured bindings there).
    const auto rows = cfg_.task_rows(task);
    const std::int64_t b = rows.first, e = rows.second;
    const std::int64_t n = e - b;
    TaskOutcome out;
    out.task = task;
    out.start = now() - t0_;
    if (threads_ <= 1 || n < 4096) {
      {
        ScopedPhase p(times_, Phase::generate);
        generate_rows(cfg_.table(), b, n, cfg_.def.columns, cols_);
      }
      ScopedPhase p(times_, Phase::compute);
      aggregate_rows(cfg_.def, cols_, 0, n, tables_[0]);
    } else {
      // One parallel region per task: threads take chunks of rows dynamically, generate each
      // and aggregate it into their own table right away (the chunk is still in cache; no
      // barrier between the phases). generate = the busiest thread's generation time,
      // compute = the rest of the region.
      const double t0 = now();
      double gen = 0.0;
      constexpr std::int64_t kChunk = 4096;
      const std::int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel num_threads(threads_) reduction(max : gen)
      {
        const auto t = static_cast<std::size_t>(omp_get_thread_num());
        double mine = 0.0;
#pragma omp for schedule(dynamic, 1) nowait
        for (std::int64_t c = 0; c < chunks; ++c) {
          const std::int64_t lo = c * kChunk;
          const std::int64_t hi = lo + kChunk < n ? lo + kChunk : n;
          const double a = now();
          generate_rows(cfg_.table(), b + lo, hi - lo, cfg_.def.columns, shifted(lo));
          mine += now() - a;
          aggregate_rows(cfg_.def, cols_, lo, hi, tables_[t]);
        }
        gen = mine;
      }
      const double dt = now() - t0;
      times_.generate += gen;
      times_.compute += dt - gen;
    }
    out.end = now() - t0_;
    out.partial = {static_cast<double>(n)};
    out.bytes = n * cfg_.def.bytes_per_row();
    out.phase = Phase::compute;
    done_.push_back(std::move(out));
  }

  [[nodiscard]] std::size_t in_flight() const override {
    return done_.size();
  }

  std::optional<TaskOutcome> poll(bool) override {
    if (done_.empty()) return std::nullopt;
    TaskOutcome o = std::move(done_.front());
    done_.pop_front();
    return o;
  }

  std::vector<double> finish_repeat() override {
    {
      ScopedPhase p(times_, Phase::compute);
      std::vector<PartitionedTable*> tables;
      for (auto& t : tables_) tables.push_back(&t);
      PartitionedTable::merge_into(tables_[0], tables, threads_);
    }
    if (env_.size <= 1) {
      std::swap(result_, tables_[0]);
    } else if (!cfg_.def.high_cardinality) {
      const double t = now();
      reduce_dense(cfg_.def, tables_[0], env_.comm, stats_);
      times_.communicate += stats_.seconds;
      times_.compute += (now() - t) - stats_.seconds;
      std::swap(result_, tables_[0]);
    } else {
      const double t = now();
      result_ = shuffle_alltoall(cfg_.def, tables_[0], env_.comm, partition_bits_for(cfg_),
                                 threads_, stats_);
      times_.communicate += stats_.seconds;
      times_.compute += (now() - t) - stats_.seconds;
    }
    const bool records = !cfg_.def.high_cardinality && env_.rank == 0;
    return finish_partial(result_, cfg_.def.fields, stats_, records);
  }

  [[nodiscard]] PhaseTimes phase_times() const override {
    return times_;
  }

  /// The column pointers advanced by `rows`.
  [[nodiscard]] ColumnPtrs shifted(std::int64_t rows) const {
    ColumnPtrs c = cols_;
    if (c.name != nullptr) c.name += rows;
    if (c.id != nullptr) c.id += rows;
    if (c.key != nullptr) c.key += rows;
    if (c.x != nullptr) c.x += rows;
    if (c.y != nullptr) c.y += rows;
    return c;
  }

  std::vector<double> validate() override {
    const bool high = cfg_.def.high_cardinality;
    const int rank = env_.rank;
    const int size = env_.size;
    OwnedLookup owned = [&](std::int64_t key) -> std::optional<GroupState> {
      const bool mine = high ? owner_of(key, size) == rank : rank == 0;
      if (!mine && size > 1) return std::nullopt;
      const GroupState* s = result_.find(key);
      return s != nullptr ? *s : GroupState{};
    };
    std::vector<double> records;
    if (cfg_.per_group()) records = report_records(result_, cfg_.def.fields);
    return validate_part(cfg_, rank, size, threads_, owned, records);
  }

 private:
  Config cfg_;
  CaseEnv env_;
  int threads_;
  std::vector<std::int32_t> name_;
  std::vector<std::int64_t> id_, key_;
  std::vector<double> x_, y_;
  ColumnPtrs cols_;
  std::vector<PartitionedTable> tables_;
  PartitionedTable result_;
  PhaseTimes times_;
  ShuffleStats stats_;
  std::deque<TaskOutcome> done_;
  double t0_ = 0;
};

}  // namespace

std::unique_ptr<WorkerCase> make_cpu_worker(const Config& c, const CaseEnv& env) {
  return std::make_unique<CpuWorker>(c, env);
}

}  // namespace sb::groupby
