// The GPU worker of groupby (worker.hpp).
#include "groupby/gpu/worker.hpp"

#include <mpi.h>

#include <algorithm>
#include <deque>
#include <vector>

#include "groupby/gpu/dense_agg.cuh"
#include "groupby/gpu/exchange.cuh"
#include "groupby/gpu/generate.cuh"
#include "groupby/gpu/hash_stage.cuh"
#include "groupby/gpu/hash_table.cuh"
#include "groupby/group_table.hpp"
#include "groupby/protocol.hpp"
#include "groupby/validation.hpp"
#include "scalebench/clock.hpp"
#include "scalebench/gpu_context.cuh"
#include "scalebench/gpu_error.cuh"
#include "scalebench/gpu_transport.cuh"

namespace sb::groupby {

namespace {

template <class T>
T* device_alloc(std::size_t n) {
  T* p = nullptr;
  if (n > 0) SB_CUDA_CHECK(cudaMalloc(&p, sizeof(T) * n));
  return p;
}

class GpuWorker final : public WorkerCase {
 public:
  GpuWorker(const Config& c, const CaseEnv& env) : cfg_(c), env_(env), ctx_(env.gpu) {
    if (ctx_ == nullptr) throw EnvironmentError("groupby: GPU worker without a GPU context");
    SB_CUDA_CHECK(cudaSetDevice(ctx_->device));
    stream_ = ctx_->stream;
    if (env_.size > 1 && (ctx_->nccl == nullptr || ctx_->nccl_size != env_.size))
      throw EnvironmentError(
          "groupby: a multi-GPU case needs a NCCL communicator over exactly its workers");
    if (env_.size > 1) transport_ = std::make_unique<GpuTransport>(c.comm, *ctx_, env_.comm);
    const auto n = static_cast<std::size_t>(c.partition < c.rows ? c.partition : c.rows);
    const unsigned cols = c.def.columns;
    if (cols & kColName) cols_.name = device_alloc<std::int32_t>(n);
    if (cols & kColId) cols_.id = device_alloc<std::int64_t>(n);
    if (cols & kColKey) cols_.key = device_alloc<std::int64_t>(n);
    if (cols & kColX) cols_.x = device_alloc<double>(n);
    if (cols & kColY) cols_.y = device_alloc<double>(n);
    if (cols & kColId) poisson_ = gpu::upload_poisson_table(id_poisson_table(), stream_);
    width_ = record_width(c.def.fields);
    if (c.def.high_cardinality) {
      setup_hash();
    } else {
      dense_ = gpu::make_dense(c.def, ctx_->prop);
      host_acc_.resize(static_cast<std::size_t>(dense_.words));
    }
    SB_CUDA_CHECK(cudaEventCreate(&ev_repeat_));
    SB_CUDA_CHECK(cudaEventCreate(&ev_clear_));
  }

  ~GpuWorker() override {
    (void)cudaSetDevice(ctx_->device);
    (void)cudaStreamSynchronize(stream_);
    for (void* p :
         {static_cast<void*>(cols_.name), static_cast<void*>(cols_.id),
          static_cast<void*>(cols_.key), static_cast<void*>(cols_.x), static_cast<void*>(cols_.y),
          static_cast<void*>(poisson_), static_cast<void*>(records_)})
      if (p != nullptr) (void)cudaFree(p);
    gpu::free_dense(dense_);
    gpu::free_hash(table_);
    gpu::free_stage(stage_);
    exchange_.reset();
    for (auto& p : pending_) release(p);
    for (cudaEvent_t e : events_) (void)cudaEventDestroy(e);
    if (ev_repeat_ != nullptr) (void)cudaEventDestroy(ev_repeat_);
    if (ev_clear_ != nullptr) (void)cudaEventDestroy(ev_clear_);
  }

  void begin_repeat() override {
    times_ = PhaseTimes{};
    stats_ = ShuffleStats{};
    // The tables' reset is the aggregation's work (by-name's accumulators, by-key's owner table
    // in the NCCL exchange), timed as compute instead of counting as the runtime's own cost
    // (`tools/gpu-campaign.sh scaling`, the seed cases' `runtime`).
    if (exchange_ != nullptr) exchange_->prepare();
    SB_CUDA_CHECK(cudaEventRecord(ev_clear_, stream_));
    if (rows_exchanged()) {
      exchange_->begin_repeat();
    } else if (cfg_.def.high_cardinality) {
      // A staged table with slices stays clean between passes (gpu::stage_finish).
      if (!emits()) gpu::hash_clear(table_, stream_);
      if (exchange_ != nullptr) exchange_->begin_repeat();
      if (stage_.key != nullptr) gpu::stage_clear(stage_, stream_);
    } else {
      gpu::dense_clear(dense_, stream_);
    }
    SB_CUDA_CHECK(cudaEventRecord(ev_repeat_, stream_));
  }

  void submit(std::int64_t task) override {
    const auto [b, e] = cfg_.task_rows(task);
    Pending p;
    p.task = task;
    p.rows = e - b;
    p.e0 = event();
    p.e1 = event();
    p.e2 = event();
    SB_CUDA_CHECK(cudaEventRecord(p.e0, stream_));
    gpu::generate(cfg_.table(), poisson_, b, p.rows, cfg_.def.columns, cols_, stream_);
    SB_CUDA_CHECK(cudaEventRecord(p.e1, stream_));
    if (rows_exchanged()) {
      exchange_->stage(cols_, p.rows);
    } else if (cfg_.def.high_cardinality) {
      if (stage_.key != nullptr) {
        gpu::stage_rows(table_, stage_, cols_, p.rows, stream_);
      } else {
        gpu::hash_aggregate(table_, cols_, p.rows, stream_);
      }
    } else {
      gpu::dense_aggregate(cfg_.def, dense_, cols_, p.rows, stream_);
    }
    SB_CUDA_CHECK(cudaEventRecord(p.e2, stream_));
    if (rows_exchanged()) exchange_->after_task(p.e2);
    pending_.push_back(p);
  }

  [[nodiscard]] std::size_t in_flight() const override { return pending_.size(); }

  std::optional<TaskOutcome> poll(bool wait) override {
    if (pending_.empty()) return std::nullopt;
    Pending p = pending_.front();
    if (wait) {
      SB_CUDA_CHECK(cudaEventSynchronize(p.e2));
    } else {
      const cudaError_t q = cudaEventQuery(p.e2);
      if (q == cudaErrorNotReady) {
        if (cudaPeekAtLastError() == cudaErrorNotReady) (void)cudaGetLastError();
        return std::nullopt;
      }
      SB_CUDA_CHECK(q);
    }
    pending_.pop_front();
    float gen = 0, comp = 0, start = 0, end = 0;
    SB_CUDA_CHECK(cudaEventElapsedTime(&gen, p.e0, p.e1));
    SB_CUDA_CHECK(cudaEventElapsedTime(&comp, p.e1, p.e2));
    SB_CUDA_CHECK(cudaEventElapsedTime(&start, ev_repeat_, p.e0));
    SB_CUDA_CHECK(cudaEventElapsedTime(&end, ev_repeat_, p.e2));
    times_.generate += gen * 1e-3;
    times_.compute += comp * 1e-3;
    TaskOutcome o;
    o.task = p.task;
    o.partial = {static_cast<double>(p.rows)};
    o.start = start * 1e-3;
    o.end = end * 1e-3;
    o.bytes = p.rows * cfg_.def.bytes_per_row();
    o.phase = Phase::compute;
    release(p);
    return o;
  }

  std::vector<double> finish_repeat() override {
    SB_CUDA_CHECK(cudaStreamSynchronize(stream_));
    const double t0 = now();
    float clear_ms = 0;
    SB_CUDA_CHECK(cudaEventElapsedTime(&clear_ms, ev_clear_, ev_repeat_));
    times_.compute += clear_ms * 1e-3;
    if (env_.size > 1 && nccl_peer_.empty()) map_nccl_ranks();
    std::vector<double> out;
    if (!cfg_.def.high_cardinality) {
      out = finish_dense();
    } else {
      out = finish_hash();
    }
    const double exposed =
        exchange_ != nullptr ? exchange_->exposed_seconds(stats_) : stats_.seconds;
    times_.communicate += exposed;
    times_.compute += (now() - t0) - exposed;
    return out;
  }

  [[nodiscard]] PhaseTimes phase_times() const override { return times_; }

  std::vector<double> validate() override {
    if (cfg_.def.high_cardinality) {
      // The owned share, copied back (untimed).
      std::vector<std::uint64_t> host(static_cast<std::size_t>(n_records_) * width_);
      if (!host.empty())
        SB_CUDA_CHECK(cudaMemcpy(host.data(), records_, sizeof(std::uint64_t) * host.size(),
                                 cudaMemcpyDeviceToHost));
      result_ = PartitionedTable(6, static_cast<std::size_t>(n_records_));
      for (std::int64_t i = 0; i < n_records_; ++i) {
        std::int64_t key = 0;
        GroupState s;
        unpack_record(&host[static_cast<std::size_t>(i) * width_], cfg_.def.fields, key, s);
        result_.upsert(key) = s;
      }
    }
    const bool high = cfg_.def.high_cardinality;
    const int rank = env_.rank;
    const int size = env_.size;
    const int owner_bits = exchange_ != nullptr ? exchange_->owner_bits() : 0;
    OwnedLookup owned = [&](std::int64_t key) -> std::optional<GroupState> {
      const bool mine = high ? owner_of(key, size, owner_bits) == rank : rank == 0;
      if (!mine && size > 1) return std::nullopt;
      const GroupState* s = result_.find(key);
      return s != nullptr ? *s : GroupState{};
    };
    std::vector<double> records;
    if (cfg_.per_group()) records = report_records(result_, cfg_.def.fields);
    return validate_part(cfg_, rank, size, env_.threads < 1 ? 1 : env_.threads, owned, records);
  }

  /// A GPU task (generation and staging of a partition) takes a fraction of a millisecond and
  /// queues on the stream: each worker asks for its share of the tasks at once (minus the one
  /// the request adds), so that one worker's request latency cannot hand the others most of
  /// the tasks; the rest is still handed out on demand.
  [[nodiscard]] int prefetch() const override {
    const std::int64_t share = (cfg_.num_tasks() + env_.size - 1) / std::max(1, env_.size);
    return static_cast<int>(std::clamp<std::int64_t>(share - 1, 2, 64));
  }

 private:
  struct Pending {
    std::int64_t task = -1;
    std::int64_t rows = 0;
    cudaEvent_t e0 = nullptr, e1 = nullptr, e2 = nullptr;
  };

  /// High cardinality: the full table, the exchange of a multi-GPU case (which may take the
  /// rows instead: the table then only keeps the rows of its full send buckets), the staging
  /// of the table, and the record buffer, in this order (each sized against what the ones
  /// before left free).
  void setup_hash() {
    const Config& c = cfg_;
    const std::int64_t groups = c.max_groups(c.rows);
    table_ = gpu::make_hash(groups, c.def.fields);
    if (env_.size > 1) {
      map_nccl_ranks();  // the exchange's set-up sends to every peer
      exchange_ = gpu::make_exchange(
          gpu::ExchangeEnv{&cfg_, &env_, ctx_, transport_.get(), &table_, &records_, &nccl_peer_});
    }
    // Partitioned aggregation when the table is much larger than L2 and the buckets for every
    // row of the case fit comfortably (a worker may be handed every task).
    std::size_t free_b = 0, total_b = 0;
    SB_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    const double stage_bytes = gpu::stage_bytes(c.rows, (c.def.fields & kSumY) != 0);
    if (!rows_exchanged() && gpu::stage_pays(table_, ctx_->prop) &&
        stage_bytes < 0.5 * static_cast<double>(free_b))
      stage_ = gpu::make_stage(table_, ctx_->prop, c.rows, 0, true, c.keys_fit_32_bits());
    // The spill table of a row shuffle, and a table whose slices become records, stay clean.
    if (rows_exchanged() || emits()) gpu::hash_clear(table_, stream_);
    records_ = device_alloc<std::uint64_t>(static_cast<std::size_t>(groups) * width_);
  }

  /// Whether the tasks' rows go to the exchange (a row shuffle) instead of table_.
  [[nodiscard]] bool rows_exchanged() const {
    return exchange_ != nullptr && exchange_->takes_rows();
  }

  /// Whether the staged rows end as records straight from the slices (gpu::stage_finish): one
  /// GPU, whose table is the result (an exchange's groups shuffle sends its table's groups).
  [[nodiscard]] bool emits() const {
    return exchange_ == nullptr && stage_.key != nullptr && stage_.slice_bits > 0;
  }

  cudaEvent_t event() {
    if (!free_events_.empty()) {
      cudaEvent_t e = free_events_.back();
      free_events_.pop_back();
      return e;
    }
    cudaEvent_t e = nullptr;
    SB_CUDA_CHECK(cudaEventCreate(&e));
    events_.push_back(e);
    return e;
  }
  void release(const Pending& p) {
    free_events_.push_back(p.e0);
    free_events_.push_back(p.e1);
    free_events_.push_back(p.e2);
  }

  /// NCCL rank of every case rank (they need not coincide).
  void map_nccl_ranks() {
    nccl_peer_.assign(static_cast<std::size_t>(env_.size), 0);
    int mine = ctx_->nccl_rank;
    SB_MPI_CHECK(MPI_Allgather(&mine, 1, MPI_INT, nccl_peer_.data(), 1, MPI_INT, env_.comm));
  }

  std::vector<double> finish_dense() {
    const QueryDef& q = cfg_.def;
    if (env_.size > 1) {
      const double t = now();
      transport_->reduce(dense_.acc, dense_.acc, static_cast<std::size_t>(dense_.words),
                         ncclFloat64, ncclSum, nccl_peer_[0], stream_);
      SB_CUDA_CHECK(cudaStreamSynchronize(stream_));
      stats_.seconds = now() - t;
      const double bytes = 8.0 * dense_.words;
      stats_.send_total = bytes;
      stats_.bytes_sent = env_.rank == 0 ? 0.0 : bytes;
    }
    result_ = PartitionedTable(0, static_cast<std::size_t>(q.domain_size));
    if (env_.rank == 0) {
      SB_CUDA_CHECK(cudaMemcpyAsync(host_acc_.data(), dense_.acc, sizeof(double) * host_acc_.size(),
                                    cudaMemcpyDeviceToHost, stream_));
      SB_CUDA_CHECK(cudaStreamSynchronize(stream_));
      const auto d = static_cast<std::size_t>(dense_.domain);
      for (std::size_t u = 0; u < d; ++u) {
        if (host_acc_[u] == 0.0) continue;
        GroupState& s = result_.upsert(q.domain_lo + static_cast<std::int64_t>(u));
        s.count = static_cast<std::int64_t>(host_acc_[u]);
        std::size_t j = 1;
        for (unsigned f = kSumX; f <= kSumSqX; f <<= 1)
          if (q.fields & f) set_field(s, f, host_acc_[(j++) * d + u]);
      }
    }
    return finish_partial(result_, q.fields, stats_, env_.rank == 0);
  }

  std::vector<double> finish_hash() {
    if (emits())
      return finish_header(summary(gpu::stage_finish(table_, stage_, records_, stream_)), stats_);
    if (!rows_exchanged() && stage_.key != nullptr) gpu::stage_flush(table_, stage_, stream_);
    if (exchange_ == nullptr)
      return finish_header(summary(gpu::hash_finish(table_, records_, stream_)), stats_);
    exchange_->finish(stats_);
    return finish_header(summary(exchange_->result()), stats_);
  }

  /// The groups written to records_ (n_records_) and their checksums, from hash_finish,
  /// stage_finish or the exchange's result().
  Summary summary(const gpu::TableStatus& st) {
    if (st.overflow != 0)
      throw Error("groupby: the GPU hash table overflowed (internal sizing error)");
    n_records_ = static_cast<std::int64_t>(st.records);
    Summary s;
    s.groups = st.sum[0];
    s.sum_count = st.sum[1];
    s.sum_x = st.sum[2];
    s.sum_y = st.sum[3];
    s.sum_min_x = st.sum[4];
    s.sum_max_x = st.sum[5];
    return s;
  }

  Config cfg_;
  CaseEnv env_;
  GpuContext* ctx_;
  cudaStream_t stream_ = nullptr;
  ColumnPtrs cols_;
  PoissonTable* poisson_ = nullptr;
  int width_ = 0;
  gpu::DenseAgg dense_;
  gpu::HashTable table_;
  gpu::HashStage stage_;
  /// Multi-GPU: how device buffers travel between the GPUs (groupby.comm).
  std::unique_ptr<GpuTransport> transport_;
  /// Multi-GPU high cardinality: how the groups reach their owners.
  std::unique_ptr<gpu::Exchange> exchange_;
  std::uint64_t* records_ = nullptr;
  std::int64_t n_records_ = 0;
  std::vector<double> host_acc_;
  std::vector<int> nccl_peer_;
  PartitionedTable result_;
  PhaseTimes times_;
  ShuffleStats stats_;
  std::deque<Pending> pending_;
  std::vector<cudaEvent_t> events_, free_events_;
  cudaEvent_t ev_repeat_ = nullptr;
  cudaEvent_t ev_clear_ = nullptr;  ///< before the tables' reset; ev_repeat_ after it
};

}  // namespace

std::unique_ptr<WorkerCase> make_gpu_worker(const Config& c, const CaseEnv& env) {
  return std::make_unique<GpuWorker>(c, env);
}

}  // namespace sb::groupby
