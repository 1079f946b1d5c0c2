// The GPU worker of groupby (groupby_gpu.hpp).
#include <mpi.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "groupby/gpu/dense_agg.cuh"
#include "groupby/gpu/generate.cuh"
#include "groupby/gpu/hash_stage.cuh"
#include "groupby/gpu/hash_table.cuh"
#include "groupby/gpu/row_shuffle.cuh"
#include "groupby/group_table.hpp"
#include "groupby/groupby_gpu.hpp"
#include "groupby/protocol.hpp"
#include "groupby/validation.hpp"
#include "scalebench/clock.hpp"
#include "scalebench/gpu_context.cuh"
#include "scalebench/gpu_error.cuh"

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
      const std::int64_t groups = c.max_groups(c.rows);
      table_ = gpu::make_hash(groups, c.def.fields);
      if (env_.size > 1) {
        // The owner's share of the groups (hash partitioning; 8 sigma and 1024 of headroom: an
        // overflow would be caught, not lost).
        const double share = static_cast<double>(groups) / env_.size;
        owner_table_ = gpu::make_hash(
            static_cast<std::int64_t>(share + 8.0 * std::sqrt(share) + 1024.0), c.def.fields);
        if (c.gpu_shuffle != "groups") setup_row_shuffle();
      }
      // Partitioned aggregation when the table is much larger than L2 and the buckets for every
      // row of the case fit comfortably (a worker may be handed every task).
      std::size_t free_b = 0, total_b = 0;
      SB_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
      const double stage_bytes = gpu::stage_bytes(c.rows, (c.def.fields & kSumY) != 0);
      if (shuffle_.owners == 0 && gpu::stage_pays(table_, ctx_->prop) &&
          stage_bytes < 0.5 * static_cast<double>(free_b))
        stage_ = gpu::make_stage(table_, ctx_->prop, c.rows, 0, true, c.keys_fit_32_bits());
      if (shuffle_.owners > 0) gpu::hash_clear(table_, stream_);  // the spill table stays clean
      records_cap_ = groups;
      records_ = device_alloc<std::uint64_t>(static_cast<std::size_t>(groups) * width_);
    } else {
      dense_ = gpu::make_dense(c.def, ctx_->prop);
      host_acc_.resize(static_cast<std::size_t>(dense_.words));
    }
    SB_CUDA_CHECK(cudaEventCreate(&ev_repeat_));
  }

  ~GpuWorker() override {
    (void)cudaSetDevice(ctx_->device);
    (void)cudaStreamSynchronize(stream_);
    for (void* p :
         {static_cast<void*>(cols_.name), static_cast<void*>(cols_.id),
          static_cast<void*>(cols_.key), static_cast<void*>(cols_.x), static_cast<void*>(cols_.y),
          static_cast<void*>(poisson_), static_cast<void*>(records_), static_cast<void*>(recv_)})
      if (p != nullptr) (void)cudaFree(p);
    gpu::free_dense(dense_);
    gpu::free_hash(table_);
    gpu::free_hash(owner_table_);
    gpu::free_stage(stage_);
    close_peer_landing();
    if (push_stream_ != nullptr) (void)cudaStreamDestroy(push_stream_);
    for (cudaEvent_t e : push_done_) (void)cudaEventDestroy(e);
    gpu::free_row_shuffle(shuffle_);
    for (cudaEvent_t e : chunk_events_) (void)cudaEventDestroy(e);
    if (comm_stream_ != nullptr) (void)cudaStreamDestroy(comm_stream_);
    for (auto& p : pending_) release(p);
    for (cudaEvent_t e : events_) (void)cudaEventDestroy(e);
    if (ev_repeat_ != nullptr) (void)cudaEventDestroy(ev_repeat_);
  }

  void begin_repeat() override {
    times_ = PhaseTimes{};
    stats_ = ShuffleStats{};
    if (shuffle_.owners > 0) {
      if (exchange_ == Exchange::undecided) choose_exchange();
      last_slot_ = -1;
      pushes_ = 0;
      gpu::hash_clear(owner_table_, stream_);
      gpu::shuffle_clear(shuffle_, stream_);
    } else if (cfg_.def.high_cardinality) {
      gpu::hash_clear(table_, stream_);
      if (owner_table_.slots != nullptr) gpu::hash_clear(owner_table_, stream_);
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
    int slot = -1;
    if (shuffle_.owners > 0) {
      gpu::shuffle_stage(owner_table_, table_, shuffle_, cols_, p.rows, stream_);
      if (exchange_ == Exchange::peer) {
        // Snapshot ring: slot n % K, overwritten only after the push that last read it (the
        // one of task n - K + 1, which read it as its previous snapshot) has ended.
        const int n = pushes_++;
        slot = n % gpu::kSnapSlots;
        if (n >= gpu::kSnapSlots - 1)
          SB_CUDA_CHECK(cudaStreamWaitEvent(stream_, push_done_[(slot + 1) % gpu::kSnapSlots], 0));
        gpu::shuffle_snapshot(shuffle_, slot, stream_);
      }
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
    if (slot >= 0) {
      // What this task added to the buckets goes to its owners beside the next task.
      SB_CUDA_CHECK(cudaStreamWaitEvent(push_stream_, p.e2, 0));
      if (last_slot_ < 0) SB_CUDA_CHECK(cudaEventRecord(chunk_events_[0], push_stream_));
      gpu::shuffle_push(shuffle_, env_.rank, last_slot_, slot, push_ctas_, push_stream_);
      if (push_again_ > 0 && pushes_ % push_again_ == 0)  // diagnostic: the same rows again
        gpu::shuffle_push(shuffle_, env_.rank, last_slot_, slot, push_ctas_, push_stream_);
      SB_CUDA_CHECK(cudaEventRecord(push_done_[static_cast<std::size_t>(slot)], push_stream_));
      last_slot_ = slot;
    }
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
    if (env_.size > 1 && nccl_peer_.empty()) map_nccl_ranks();
    std::vector<double> out;
    if (!cfg_.def.high_cardinality) {
      out = finish_dense();
    } else {
      out = finish_hash();
    }
    // The peer exchange moved most rows during the tasks: only the wait for the last pushes
    // and the counts lie in this phase.
    const double exposed = exchange_ == Exchange::peer ? exposed_ : stats_.seconds;
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
    OwnedLookup owned = [&](std::int64_t key) -> std::optional<GroupState> {
      const bool mine = high ? owner_of(key, size, shuffle_.owner_bits) == rank : rank == 0;
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
  /// the tasks (2 GPUs had split 20 tasks 14 / 6); the rest is still handed out on demand.
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

  static constexpr int kMaxChunks = 8;  ///< most pieces of the row shuffle's exchange
  /// Blocks of a push kernel (2 x H200, 2026-11-22, by-key large: 8 / 12 / 16 / 20 / 32 / 64
  /// blocks 6.12 / 5.74 / 5.37 / 5.60 / 5.91 / 6.26 ms, then with owners by slot range 16 / 20
  /// blocks 4.98 / 5.15 ms: more blocks land the rows sooner and slow the tasks more). The same
  /// 16 on any number of GPUs: with four GPUs' NVLink load per GPU on two (half the table,
  /// SCALEBENCH_PUSH_AGAIN=2: 1.5 times the rows sent and received) 16 / 24 / 32 blocks took
  /// 2.64-2.67 / 2.78 / 2.81 ms; NVLink is full from 8 blocks on when the pushes run
  /// alone (bench_groupby_gpu PushAllToAll), so more blocks only take SMs from the staging.
  /// SCALEBENCH_PUSH_CTAS overrides it (a diagnostic). The peer exchange's events are
  /// chunk_events_[0..6]: the first push, the last push's end, the landed rows read, then trace
  /// points.
  static constexpr int kPushCtas = 16;
  static int push_blocks() {
    if (const char* k = std::getenv("SCALEBENCH_PUSH_CTAS"); k != nullptr)
      return std::clamp(std::atoi(k), 1, 1024);
    return kPushCtas;
  }
  /// How the row shuffle's rows travel: NCCL after the tasks, or copied into their owners'
  /// memory after each task (gpu_exchange; decided in the first repeat).
  enum class Exchange { undecided, nccl, peer };

  /// Sets up the row shuffle (owner-sized table, send buckets) when the case allows it and
  /// gpu_shuffle asks for it (auto: the full table is several times L2); else leaves
  /// shuffle_.owners at 0 and the groups travel.
  void setup_row_shuffle() {
    const int size = env_.size;
    gpu::RowShuffle plan = gpu::plan_row_shuffle(owner_table_, size, cfg_.rows);
    const bool wanted = cfg_.gpu_shuffle == "rows" || gpu::stage_pays(table_, ctx_->prop);
    std::size_t free_b = 0, total_b = 0;
    SB_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    const std::int64_t share_rows =
        cfg_.rows / size + cfg_.rows / size / 4 + std::min(cfg_.partition, cfg_.rows);
    const double packed = (plan.with_y ? 48.0 : 32.0) * static_cast<double>(share_rows);
    const bool fits = plan.owners > 0 && plan.bytes + packed < 0.5 * static_cast<double>(free_b);
    if (!wanted || !fits) {
      if (cfg_.gpu_shuffle == "rows")
        throw UsageError(
            plan.owners == 0
                ? "groupby: gpu_shuffle=rows does not fit this table's shape (use auto or groups)"
                : "groupby: gpu_shuffle=rows needs more GPU memory than is free (use groups)");
      return;
    }
    shuffle_ = plan;
    // Owners take ranges of the full table's slot hash (group_table.hpp): each owner's table
    // then holds its keys as that range of one GPU's table would.
    shuffle_.owner_bits = std::bit_width(static_cast<std::uint64_t>(table_.capacity)) - 1;
    shuffle_.narrow_keys = cfg_.keys_fit_32_bits();  // by-key: the only query on this path
    gpu::alloc_row_shuffle(shuffle_);
    gpu::reserve_row_shuffle(shuffle_, share_rows, share_rows);
    // The exchange's stream outranks the aggregation kernels: NCCL's blocks are scheduled as soon
    // as SMs free up instead of after every queued aggregation block (both sides of a transfer
    // must be resident for it to move).
    int least = 0, greatest = 0;
    SB_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    SB_CUDA_CHECK(cudaStreamCreateWithPriority(&comm_stream_, cudaStreamNonBlocking, greatest));
    chunk_events_.resize(4 * kMaxChunks + 1);
    for (cudaEvent_t& e : chunk_events_) SB_CUDA_CHECK(cudaEventCreate(&e));
  }

  /// finish_hash for the row shuffle: the send buckets packed by (chunk, owner, region), the
  /// chunks exchanged in turn on comm_stream_ while the case stream aggregates this worker's
  /// own rows of every chunk and then each chunk's received rows as they arrive; then the spill
  /// tables' groups (only if a send bucket overflowed anywhere) and the owner's table compacted.
  std::vector<double> finish_rows() {
    gpu::RowShuffle& sh = shuffle_;
    const int P = env_.size;
    const int me = env_.rank;
    const int R = sh.regions();
    const std::int64_t B = sh.buckets();
    // Four chunks from four GPUs on, one on two (4 x H200, 2026-11-22, large by-key: 4 GPUs
    // 5.57 / 5.83 / 6.23 ms with 4 / 2 / 1 chunks; with 32-bit keys 5.10-5.23 / 5.34-5.43 /
    // 5.49 ms with 4 / 8 / 2 chunks. 2 x H200 with the own rows aggregated while the chunks
    // travel: 6.88-6.89 / 7.03-7.15 / 7.76-7.89 ms with 1 / 2 / 4 chunks).
    // SCALEBENCH_SHUFFLE_CHUNKS picks 1 to kMaxChunks (a diagnostic).
    int K = std::min(R, P <= 2 ? 1 : 4);
    if (const char* k = std::getenv("SCALEBENCH_SHUFFLE_CHUNKS"); k != nullptr)  // diagnostic
      K = std::clamp(std::atoi(k), 1, std::min(R, kMaxChunks));
    while (R % K != 0) --K;
    const int Rg = R / K;
    std::vector<unsigned long long> cur(static_cast<std::size_t>(B));
    gpu::shuffle_cursors(sh, cur.data(), stream_);
    if (exchange_ == Exchange::peer) return finish_pushed(cur);
    const double t_counts = now();
    const RowCounts counts = exchange_counts(cur);
    const double counts_s = now() - t_counts;
    const int W1 = R + 1;
    const std::vector<long long>& sendc = counts.send;
    const std::vector<long long>& recvc = counts.recv;
    // Layout: packed rows by (chunk, owner, region), received rows by (chunk, source, region),
    // peers in the order me + 1, me + 2, ... (mod P), so that within a chunk the P - 1 remote
    // blocks come first and this worker's own block last: slot j is peer (me + 1 + j) % P.
    std::int64_t* hs = sh.host_segs;
    const auto peer_of = [&](int j) { return (me + 1 + j) % P; };
    // Offsets in 8-byte words: each (chunk, peer) block is sh.block_words(rows) words.
    std::vector<long long> send_off(static_cast<std::size_t>(K) * P), send_n(send_off.size());
    std::vector<long long> recv_off(send_off.size()), recv_n(send_off.size());
    long long so = 0, ro = 0, so_rows = 0, ro_rows = 0, own_words = 0;
    for (int g = 0; g < K; ++g) {
      for (int j = 0; j < P; ++j) {
        const int p = peer_of(j);
        const std::size_t gp = static_cast<std::size_t>(g) * P + j;
        const long long* sc = &sendc[static_cast<std::size_t>(p) * W1 + g * Rg];
        const long long* rc = &recvc[static_cast<std::size_t>(p) * W1 + g * Rg];  // from p
        long long ns = 0, nr = 0;
        for (int rr = 0; rr < Rg; ++rr) {
          ns += sc[rr];
          nr += rc[rr];
        }
        if (p == me) {  // own rows never travel (segments below, from the send buckets)
          own_words += sh.block_words(ns);  // as it would travel, for the report's send total
          continue;
        }
        long long ls = 0, lr = 0;
        for (int rr = 0; rr < Rg; ++rr) {
          const int r = g * Rg + rr;
          const std::int64_t idx = static_cast<std::int64_t>(gp) * Rg + rr;
          hs[gpu::kPackSrc * B + idx] = (static_cast<std::int64_t>(p) * R + r) * sh.rcap;
          hs[gpu::kPackRows * B + idx] = sc[rr];
          hs[gpu::kPackKey * B + idx] = sh.key_offset(so) + ls;
          hs[gpu::kPackDst * B + idx] = so + sh.key_words(ns) + ls;
          hs[gpu::kPackPlane * B + idx] = ns;
          gpu::shuffle_recv_segment(sh, idx, sh.key_offset(ro) + lr, ro + sh.key_words(nr) + lr, nr,
                                    rc[rr], r);
          ls += sc[rr];
          lr += rc[rr];
        }
        send_off[gp] = so;
        recv_off[gp] = ro;
        send_n[gp] = ns;
        recv_n[gp] = nr;
        so += sh.block_words(ns);
        ro += sh.block_words(nr);
        so_rows += ns;
        ro_rows += nr;
      }
    }
    // Own rows: the last block (j = P - 1) of every chunk, addressing the send buckets.
    gpu::shuffle_own_segments(sh, me, cur.data(), K, (P - 1) * Rg, P * Rg);
    gpu::reserve_row_shuffle(sh, so_rows, ro_rows);
    cudaEvent_t* ev_pack = chunk_events_.data();
    cudaEvent_t* ev_c0 = ev_pack + kMaxChunks;
    cudaEvent_t* ev_c1 = ev_c0 + kMaxChunks;
    cudaEvent_t* ev_agg = ev_c1 + kMaxChunks;  // ev_agg[kMaxChunks]: start
    SB_CUDA_CHECK(cudaEventRecord(ev_agg[kMaxChunks], stream_));
    gpu::shuffle_upload(sh, stream_);
    for (int g = 0; g < K; ++g) {  // the remote blocks of each chunk (own ones are last)
      gpu::shuffle_pack(sh, g * P * Rg, (P - 1) * Rg, stream_);
      SB_CUDA_CHECK(cudaEventRecord(ev_pack[g], stream_));
    }
    for (int g = 0; g < K; ++g) {
      SB_CUDA_CHECK(cudaStreamWaitEvent(comm_stream_, ev_pack[g], 0));
      SB_CUDA_CHECK(cudaEventRecord(ev_c0[g], comm_stream_));
      // One message per peer and direction (keys, x and y back to back).
      SB_NCCL_CHECK(ncclGroupStart());
      for (int j = 0; j + 1 < P; ++j) {
        const std::size_t gp = static_cast<std::size_t>(g) * P + j;
        const int peer = nccl_peer_[static_cast<std::size_t>(peer_of(j))];
        if (send_n[gp] > 0)
          SB_NCCL_CHECK(ncclSend(sh.send + send_off[gp],
                                 static_cast<std::size_t>(sh.block_words(send_n[gp])), ncclUint64,
                                 peer, ctx_->nccl, comm_stream_));
        if (recv_n[gp] > 0)
          SB_NCCL_CHECK(ncclRecv(sh.recv + recv_off[gp],
                                 static_cast<std::size_t>(sh.block_words(recv_n[gp])), ncclUint64,
                                 peer, ctx_->nccl, comm_stream_));
      }
      SB_NCCL_CHECK(ncclGroupEnd());
      SB_CUDA_CHECK(cudaEventRecord(ev_c1[g], comm_stream_));
    }
    // While the chunks travel, this worker's own rows (its block of every chunk, straight from
    // the send buckets) are aggregated; then each chunk's remote blocks as they arrive.
    for (int g = 0; g < K; ++g)
      gpu::shuffle_aggregate(owner_table_, sh, (g * P + P - 1) * Rg, Rg, g * Rg, Rg, true, stream_);
    for (int g = 0; g < K; ++g) {
      SB_CUDA_CHECK(cudaStreamWaitEvent(stream_, ev_c1[g], 0));
      gpu::shuffle_aggregate(owner_table_, sh, g * P * Rg, (P - 1) * Rg, g * Rg, Rg, false,
                             stream_);
      SB_CUDA_CHECK(cudaEventRecord(ev_agg[g], stream_));
    }
    SB_CUDA_CHECK(cudaStreamSynchronize(stream_));
    if (std::getenv("SCALEBENCH_SHUFFLE_TRACE") != nullptr) {
      // Diagnostic timeline of the exchange (ms from the upload; stderr of the rank).
      auto at = [&](cudaEvent_t e) {
        float ms = 0;
        SB_CUDA_CHECK(cudaEventElapsedTime(&ms, ev_agg[kMaxChunks], e));
        return ms;
      };
      std::string line = "shuffle rank " + std::to_string(me) + ": counts " +
                         std::to_string(counts_s * 1e3) + " ms;";
      for (int g = 0; g < K; ++g)
        line += " [" + std::to_string(g) + "] pack " + std::to_string(at(ev_pack[g])) + " send " +
                std::to_string(at(ev_c0[g])) + ".." + std::to_string(at(ev_c1[g])) + " agg " +
                std::to_string(at(ev_agg[g]));
      std::fprintf(stderr, "%s; remote rows out %lld in %lld, words out %lld in %lld\n",
                   line.c_str(), so_rows, ro_rows, so, ro);
    }
    float in_flight_ms = 0;
    for (int g = 0; g < K; ++g) {
      float ms = 0;
      SB_CUDA_CHECK(cudaEventElapsedTime(&ms, ev_c0[g], ev_c1[g]));
      in_flight_ms += ms;
    }
    stats_.seconds = counts_s + in_flight_ms * 1e-3;
    stats_.send_total = 8.0 * static_cast<double>(so + own_words);
    stats_.bytes_sent = 8.0 * static_cast<double>(so);
    return finish_spills(counts.spilled, counts.any_spill);
  }

  /// Rows per (owner, region) of this worker's send buckets (capped at rcap) and whether one
  /// overflowed, sent to every worker (R + 1 numbers each: rows of region r at [o * (R + 1) +
  /// r], the overflow flag last); recv holds every source's numbers for this owner.
  struct RowCounts {
    std::vector<long long> send, recv;
    bool spilled = false;    ///< a send bucket of this worker overflowed
    bool any_spill = false;  ///< one of any worker overflowed
  };
  RowCounts exchange_counts(const std::vector<unsigned long long>& cur) {
    const int P = env_.size;
    const int R = shuffle_.regions();
    const int W1 = R + 1;
    const auto cap = static_cast<unsigned long long>(shuffle_.rcap);
    RowCounts c;
    c.send.resize(static_cast<std::size_t>(P) * W1);
    c.recv.resize(c.send.size());
    for (int o = 0; o < P; ++o)
      for (int r = 0; r < R; ++r) {
        const unsigned long long n = cur[static_cast<std::size_t>(o) * R + r];
        c.spilled |= n > cap;
        c.send[static_cast<std::size_t>(o) * W1 + r] = static_cast<long long>(std::min(n, cap));
      }
    for (int o = 0; o < P; ++o) c.send[static_cast<std::size_t>(o) * W1 + R] = c.spilled ? 1 : 0;
    SB_MPI_CHECK(MPI_Alltoall(c.send.data(), W1, MPI_LONG_LONG, c.recv.data(), W1, MPI_LONG_LONG,
                              env_.comm));
    for (int q = 0; q < P; ++q) c.any_spill |= c.recv[static_cast<std::size_t>(q) * W1 + R] != 0;
    return c;
  }

  /// finish_rows for the peer exchange: this worker's own rows are split into its slices while
  /// its last pushes land; once every worker's pushes have landed (the counts go round after
  /// them), the landed rows are split too and every slice is folded once. A barrier then lets
  /// the sources push the next repeat's rows only after every owner has read this repeat's.
  std::vector<double> finish_pushed(const std::vector<unsigned long long>& cur) {
    gpu::RowShuffle& sh = shuffle_;
    const int P = env_.size;
    const int me = env_.rank;
    const int R = sh.regions();
    const int W1 = R + 1;
    // Trace points (SCALEBENCH_SHUFFLE_TRACE, a diagnostic): the tasks' end, own rows split,
    // landed rows' split begun, every slice folded; ev[2] (landed rows read) is always taken.
    const bool trace = std::getenv("SCALEBENCH_SHUFFLE_TRACE") != nullptr;
    cudaEvent_t* ev = chunk_events_.data();
    const auto mark = [&](int k) {
      if (trace) SB_CUDA_CHECK(cudaEventRecord(ev[k], stream_));
    };
    gpu::shuffle_own_segments(sh, me, cur.data());
    mark(3);
    gpu::shuffle_upload(sh, stream_);
    gpu::shuffle_slices_clear(sh, 0, R, stream_);
    gpu::shuffle_restage(owner_table_, sh, 0, R, sh.key, stream_);
    mark(4);
    const double t_wait = now();
    SB_CUDA_CHECK(cudaEventRecord(chunk_events_[1], push_stream_));
    SB_CUDA_CHECK(cudaEventSynchronize(chunk_events_[1]));
    const double pushed_at = now();
    // Every worker sends its counts only after its pushes have landed.
    const RowCounts rc = exchange_counts(cur);
    const double counts_at = now();
    long long own_rows = 0, out_rows = 0, in_rows = 0;
    for (int q = 0; q < P; ++q)
      for (int r = 0; r < R; ++r) {
        const std::size_t i = static_cast<std::size_t>(q) * W1 + r;
        (q == me ? own_rows : out_rows) += rc.send[i];
        if (q != me) in_rows += rc.recv[i];
      }
    const int n = gpu::shuffle_landed_segments(sh, me, rc.recv.data(), W1);
    gpu::shuffle_upload(sh, stream_);
    mark(5);
    gpu::shuffle_restage(owner_table_, sh, R, n, sh.landing, stream_);
    SB_CUDA_CHECK(cudaEventRecord(ev[2], stream_));
    gpu::shuffle_fold(owner_table_, sh, 0, R, stream_);
    mark(6);
    SB_CUDA_CHECK(cudaEventSynchronize(ev[2]));
    SB_MPI_CHECK(MPI_Barrier(env_.comm));
    float push_ms = 0;
    if (last_slot_ >= 0)
      SB_CUDA_CHECK(cudaEventElapsedTime(&push_ms, chunk_events_[0], chunk_events_[1]));
    if (trace) {
      SB_CUDA_CHECK(cudaEventSynchronize(ev[6]));
      const auto at = [&](int k) {
        float ms = 0;
        SB_CUDA_CHECK(cudaEventElapsedTime(&ms, ev[3], ev[k]));
        return ms;
      };
      std::fprintf(stderr,
                   "shuffle rank %d (peer): pushes from the first %f ms, landed %f ms after the "
                   "tasks, counts %f ms; own rows split by %f, landed ones from %f to %f, folded "
                   "by %f ms; rows out %lld in %lld own %lld\n",
                   me, push_ms, (pushed_at - t_wait) * 1e3, (counts_at - pushed_at) * 1e3, at(4),
                   at(5), at(2), at(6), out_rows, in_rows, own_rows);
    }
    // the buckets' rows travel as they are (keys of the wire's width)
    const double row = 8.0 * (sh.planes() - 1) + (sh.narrow_keys ? 4.0 : 8.0);
    stats_.seconds = push_ms * 1e-3;
    stats_.send_total = row * static_cast<double>(out_rows + own_rows);
    stats_.bytes_sent = row * static_cast<double>(out_rows);
    exposed_ = counts_at - t_wait;
    return finish_spills(rc.spilled, rc.any_spill);
  }

  /// The end of both row exchanges: the spill tables' groups (only if a send bucket overflowed
  /// anywhere; `spilled`: here), then the owner's table compacted.
  std::vector<double> finish_spills(bool spilled, bool any_spill) {
    const int P = env_.size;
    std::vector<long long> counts(static_cast<std::size_t>(P)), offsets(counts.size());
    if (any_spill) {
      // A send bucket overflowed somewhere: those rows sit in their workers' spill tables,
      // whose groups now travel as records to their owners.
      std::int64_t total = 0;
      if (spilled)
        total = gpu::hash_compact(table_, P, records_, counts.data(), offsets.data(), stream_,
                                  shuffle_.owner_bits);
      const std::int64_t rtotal = exchange_records(counts, offsets, total);
      gpu::hash_insert_records(owner_table_, recv_, rtotal, stream_);
      if (spilled) gpu::hash_clear(table_, stream_);
      if (gpu::hash_overflowed(table_, stream_))
        throw Error("groupby: the GPU spill table overflowed (internal sizing error)");
    }
    return finish_header(finish_groups(owner_table_), stats_);
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

  /// Decides how the row shuffle's rows travel (collective over the case's workers, which all
  /// reach the same answer): `peer` when gpu_exchange allows it, every worker of the case is on
  /// this node, each has room for its landing area and CUDA IPC maps every peer's landing area
  /// here; else `nccl`.
  void choose_exchange() {
    exchange_ = Exchange::nccl;
    if (cfg_.gpu_exchange == "nccl") return;
    const int P = env_.size;
    struct Id {
      char host[64];
      cudaIpcMemHandle_t handle;
      long long words;
    };
    Id mine{};
    std::snprintf(mine.host, sizeof mine.host, "%s", env_.host.c_str());
    // The landing area holds a copy of every row this worker may be sent (a worker may be
    // handed every task): taken only where half the free memory holds it.
    std::size_t free_b = 0, total_b = 0;
    SB_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    int ok = 8.0 * static_cast<double>(shuffle_.landing_words()) < 0.5 * static_cast<double>(free_b)
                 ? 1
                 : 0;
    if (ok != 0) gpu::alloc_landing(shuffle_);
    if (ok != 0 && cudaIpcGetMemHandle(&mine.handle, shuffle_.landing) != cudaSuccess) {
      (void)cudaGetLastError();
      ok = 0;
    }
    mine.words = shuffle_.landing_words();
    std::vector<Id> all(static_cast<std::size_t>(P));
    SB_MPI_CHECK(
        MPI_Allgather(&mine, sizeof(Id), MPI_BYTE, all.data(), sizeof(Id), MPI_BYTE, env_.comm));
    for (const Id& o : all)
      if (std::strncmp(o.host, mine.host, sizeof mine.host) != 0 || o.words != mine.words) ok = 0;
    SB_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, env_.comm));
    peer_landing_.assign(static_cast<std::size_t>(P), nullptr);
    for (int p = 0; p < P && ok != 0; ++p) {
      if (p == env_.rank) continue;
      void* q = nullptr;
      if (cudaIpcOpenMemHandle(&q, all[static_cast<std::size_t>(p)].handle,
                               cudaIpcMemLazyEnablePeerAccess) != cudaSuccess) {
        (void)cudaGetLastError();
        ok = 0;
      } else {
        peer_landing_[static_cast<std::size_t>(p)] = q;
      }
    }
    SB_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, env_.comm));
    if (ok == 0) {
      close_peer_landing();
      if (shuffle_.landing != nullptr) SB_CUDA_CHECK(cudaFree(shuffle_.landing));
      shuffle_.landing = nullptr;
      if (cfg_.gpu_exchange == "peer")
        throw UsageError(
            "groupby: gpu_exchange=peer needs every GPU of the case on one node, mapped to each "
            "other by CUDA IPC, and room for a landing area (use auto or nccl)");
      return;
    }
    std::vector<void*> landings(peer_landing_);
    landings[static_cast<std::size_t>(env_.rank)] = shuffle_.landing;
    gpu::shuffle_set_landings(shuffle_, landings);
    push_ctas_ = push_blocks();
    if (const char* a = std::getenv("SCALEBENCH_PUSH_AGAIN"); a != nullptr)  // diagnostic
      push_again_ = std::max(0, std::atoi(a));
    // The pushes outrank the tasks, as the NCCL exchange does: a few blocks, scheduled first.
    int least = 0, greatest = 0;
    SB_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    SB_CUDA_CHECK(cudaStreamCreateWithPriority(&push_stream_, cudaStreamNonBlocking, greatest));
    push_done_.assign(gpu::kSnapSlots, nullptr);
    for (cudaEvent_t& e : push_done_)
      SB_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    exchange_ = Exchange::peer;
  }

  void close_peer_landing() {
    for (void*& q : peer_landing_)
      if (q != nullptr) (void)cudaIpcCloseMemHandle(q);
    peer_landing_.clear();
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
      SB_NCCL_CHECK(ncclReduce(dense_.acc, dense_.acc, static_cast<std::size_t>(dense_.words),
                               ncclFloat64, ncclSum, nccl_peer_[0], ctx_->nccl, stream_));
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

  /// Sends owner o the records [offsets[o], offsets[o] + counts[o]) of records_ and receives
  /// this worker's share into recv_ (NCCL grouped send/recv on the case stream; the counts
  /// travel first by MPI). Returns the number of records received; adds to stats_.
  std::int64_t exchange_records(const std::vector<long long>& counts,
                                const std::vector<long long>& offsets, std::int64_t total) {
    const int size = env_.size;
    const double t = now();
    std::vector<long long> rcounts(counts.size()), roffsets(counts.size());
    SB_MPI_CHECK(
        MPI_Alltoall(counts.data(), 1, MPI_LONG_LONG, rcounts.data(), 1, MPI_LONG_LONG, env_.comm));
    long long rtotal = 0;
    for (int p = 0; p < size; ++p) {
      roffsets[p] = rtotal;
      rtotal += rcounts[p];
    }
    if (rtotal > recv_cap_) {
      if (recv_ != nullptr) SB_CUDA_CHECK(cudaFree(recv_));
      recv_cap_ = rtotal + rtotal / 8 + 1024;
      recv_ = device_alloc<std::uint64_t>(static_cast<std::size_t>(recv_cap_) * width_);
    }
    const auto W = static_cast<std::size_t>(width_);
    const int me = env_.rank;
    if (counts[me] > 0)
      SB_CUDA_CHECK(cudaMemcpyAsync(recv_ + roffsets[me] * W, records_ + offsets[me] * W,
                                    sizeof(std::uint64_t) * counts[me] * W,
                                    cudaMemcpyDeviceToDevice, stream_));
    SB_NCCL_CHECK(ncclGroupStart());
    for (int p = 0; p < size; ++p) {
      if (p == me) continue;
      if (counts[p] > 0)
        SB_NCCL_CHECK(ncclSend(records_ + offsets[p] * W, counts[p] * W, ncclUint64, nccl_peer_[p],
                               ctx_->nccl, stream_));
      if (rcounts[p] > 0)
        SB_NCCL_CHECK(ncclRecv(recv_ + roffsets[p] * W, rcounts[p] * W, ncclUint64, nccl_peer_[p],
                               ctx_->nccl, stream_));
    }
    SB_NCCL_CHECK(ncclGroupEnd());
    SB_CUDA_CHECK(cudaStreamSynchronize(stream_));
    stats_.seconds += now() - t;
    if (exchange_ == Exchange::peer) exposed_ += now() - t;
    stats_.send_total += static_cast<double>(total) * 8.0 * width_;
    stats_.bytes_sent += static_cast<double>(total - counts[me]) * 8.0 * width_;
    return rtotal;
  }

  std::vector<double> finish_hash() {
    const int size = env_.size;
    if (shuffle_.owners > 0) return finish_rows();
    if (stage_.key != nullptr) gpu::stage_flush(table_, stage_, stream_);
    if (size == 1) return finish_header(finish_groups(table_), stats_);
    // Local groups grouped by owner: the send buffer of the all-to-all.
    std::vector<long long> counts(static_cast<std::size_t>(size)), offsets(counts.size());
    const std::int64_t total =
        gpu::hash_compact(table_, size, records_, counts.data(), offsets.data(), stream_);
    const std::int64_t rtotal = exchange_records(counts, offsets, total);
    // The owner's merge: the received records into its share-sized table.
    if (gpu::hash_overflowed(table_, stream_))
      throw Error("groupby: the GPU hash table overflowed (internal sizing error)");
    gpu::hash_insert_records(owner_table_, recv_, rtotal, stream_);
    return finish_header(finish_groups(owner_table_), stats_);
  }

  /// The groups of `t` compacted into records_ (n_records_) and their checksums, in one pass
  /// and one synchronisation.
  Summary finish_groups(const gpu::HashTable& t) {
    const gpu::TableStatus st = gpu::hash_finish(t, records_, stream_);
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
  gpu::HashTable owner_table_;  ///< row shuffle: this worker's share of the groups
  gpu::RowShuffle shuffle_;     ///< owners == 0: the groups travel instead
  cudaStream_t comm_stream_ = nullptr;
  std::vector<cudaEvent_t> chunk_events_;
  Exchange exchange_ = Exchange::undecided;
  // The peer exchange: every owner's landing area mapped here, the push stream and its blocks,
  // the snapshot of the repeat's last push (-1: none yet).
  std::vector<void*> peer_landing_;
  cudaStream_t push_stream_ = nullptr;
  int push_ctas_ = kPushCtas;
  /// SCALEBENCH_PUSH_AGAIN=N (a diagnostic): every N-th push is sent twice, the same rows to
  /// the same place, so that two GPUs carry the NVLink load of more (N = 2: each GPU sends and
  /// receives 1.5 times its rows, as each of four GPUs does).
  int push_again_ = 0;
  int last_slot_ = -1;
  int pushes_ = 0;                      ///< pushes of this repeat
  std::vector<cudaEvent_t> push_done_;  ///< per snapshot slot: its push has ended
  double exposed_ = 0;                  ///< peer exchange: its seconds after the tasks
  std::uint64_t* records_ = nullptr;
  std::int64_t records_cap_ = 0;
  std::int64_t n_records_ = 0;
  std::uint64_t* recv_ = nullptr;
  long long recv_cap_ = 0;
  std::vector<double> host_acc_;
  std::vector<int> nccl_peer_;
  PartitionedTable result_;
  PhaseTimes times_;
  ShuffleStats stats_;
  std::deque<Pending> pending_;
  std::vector<cudaEvent_t> events_, free_events_;
  cudaEvent_t ev_repeat_ = nullptr;
};

}  // namespace

std::unique_ptr<WorkerCase> make_gpu_worker(const Config& c, const CaseEnv& env) {
  return std::make_unique<GpuWorker>(c, env);
}

}  // namespace sb::groupby
