// The peer exchange of a multi-GPU by-key case (peer_push_exchange.cuh).
#include "groupby/gpu/peer_push_exchange.cuh"

#include <mpi.h>

#include <cstdio>
#include <cstring>

#include "scalebench/clock.hpp"
#include "scalebench/error.hpp"
#include "scalebench/gpu_error.cuh"

namespace sb::groupby::gpu {

namespace {
/// From three GPUs on, with tasks from this size on, the last pushes land after the owner's own
/// rows are split: the rows of every push but the last are split meanwhile (tools/gpu-campaign.sh
/// bykey: the large preset's tasks of 5 * 10^6 rows on four GPUs). On two the pushes have landed
/// by then, and the seed preset's days of 86 400 rows would only wait for one more round of
/// counts.
constexpr std::int64_t kEarlySplitRows = std::int64_t{1} << 20;
}  // namespace

PeerPushExchange::PeerPushExchange(const ExchangeEnv& e, OwnedTable owner, const RowShuffle& plan,
                                   bool required)
    : NcclRowExchange(e, std::move(owner), plan), required_(required) {}

PeerPushExchange::~PeerPushExchange() {
  close_peer_landing();
  if (push_stream_ != nullptr) (void)cudaStreamDestroy(push_stream_);
  for (cudaEvent_t ev : push_done_) (void)cudaEventDestroy(ev);
}

bool PeerPushExchange::connect() {
  const CaseEnv& env = *e_.env;
  const int P = env.size;
  struct Id {
    char host[64];
    cudaIpcMemHandle_t handle;
    long long words;
  };
  Id mine{};
  std::snprintf(mine.host, sizeof mine.host, "%s", env.host.c_str());
  // The landing area holds a copy of every row this worker may be sent (a worker may be
  // handed every task): taken only where half the free memory holds it.
  std::size_t free_b = 0, total_b = 0;
  SB_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  int ok = 8.0 * static_cast<double>(shuffle_.landing_words()) < 0.5 * static_cast<double>(free_b)
               ? 1
               : 0;
  if (ok != 0) alloc_landing(shuffle_);
  if (ok != 0 && cudaIpcGetMemHandle(&mine.handle, shuffle_.landing) != cudaSuccess) {
    (void)cudaGetLastError();
    ok = 0;
  }
  mine.words = shuffle_.landing_words();
  std::vector<Id> all(static_cast<std::size_t>(P));
  SB_MPI_CHECK(
      MPI_Allgather(&mine, sizeof(Id), MPI_BYTE, all.data(), sizeof(Id), MPI_BYTE, env.comm));
  for (const Id& o : all)
    if (std::strncmp(o.host, mine.host, sizeof mine.host) != 0 || o.words != mine.words) ok = 0;
  SB_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, env.comm));
  peer_landing_.assign(static_cast<std::size_t>(P), nullptr);
  for (int p = 0; p < P && ok != 0; ++p) {
    if (p == env.rank) continue;
    void* q = nullptr;
    if (cudaIpcOpenMemHandle(&q, all[static_cast<std::size_t>(p)].handle,
                             cudaIpcMemLazyEnablePeerAccess) != cudaSuccess) {
      (void)cudaGetLastError();
      ok = 0;
    } else {
      peer_landing_[static_cast<std::size_t>(p)] = q;
    }
  }
  SB_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, env.comm));
  if (ok == 0) {
    close_peer_landing();
    if (shuffle_.landing != nullptr) SB_CUDA_CHECK(cudaFree(shuffle_.landing));
    shuffle_.landing = nullptr;
    if (required_)
      throw UsageError(
          "groupby: gpu_exchange=peer needs every GPU of the case on one node, mapped to each "
          "other by CUDA IPC, and room for a landing area (use auto or nccl)");
    return false;
  }
  std::vector<void*> landings(peer_landing_);
  landings[static_cast<std::size_t>(env.rank)] = shuffle_.landing;
  shuffle_set_landings(shuffle_, landings, stream_);
  // More blocks land the rows sooner and take more SMs from the tasks (tools/gpu-campaign.sh
  // bykey, groupby.push_blocks; bench_groupby_gpu BM_PushAllToAll: the pushes alone).
  push_blocks_ = e_.cfg->push_blocks > 0 ? e_.cfg->push_blocks
                 : P == 2                ? kDefaultPushBlocksTwo
                                         : kDefaultPushBlocks;
  early_split_ = P > 2 && e_.cfg->partition >= kEarlySplitRows;
  // The pushes outrank the tasks, as the NCCL exchange does: a few blocks, scheduled first.
  int least = 0, greatest = 0;
  SB_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  SB_CUDA_CHECK(cudaStreamCreateWithPriority(&push_stream_, cudaStreamNonBlocking, greatest));
  push_done_.assign(kSnapSlots, nullptr);
  for (cudaEvent_t& ev : push_done_)
    SB_CUDA_CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  hash_clear(owner(), stream_);  // clean from here on: each pass's slices become records
  return true;
}

void PeerPushExchange::close_peer_landing() {
  for (void*& q : peer_landing_)
    if (q != nullptr) (void)cudaIpcCloseMemHandle(q);
  peer_landing_.clear();
}

void PeerPushExchange::prepare() {
  if (decided_) return;
  connected_ = connect();
  decided_ = true;
}

void PeerPushExchange::begin_repeat() {
  prepare();
  last_slot_ = -1;
  prev_slot_ = -1;
  pushes_ = 0;
  emitted_ = false;
  if (connected_) {
    shuffle_clear(shuffle_, stream_);  // the owner's table is clean (result())
  } else {
    NcclRowExchange::begin_repeat();
  }
}

void PeerPushExchange::stage(const RowSource& src, std::int64_t rows) {
  NcclRowExchange::stage(src, rows);
  slot_ = -1;
  if (!connected_) return;
  // Snapshot ring: slot n % K, overwritten only after the push that last read it (the one of
  // task n - K + 1, which read it as its previous snapshot) has ended.
  const int n = pushes_++;
  slot_ = n % kSnapSlots;
  if (n >= kSnapSlots - 1)
    SB_CUDA_CHECK(cudaStreamWaitEvent(stream_, push_done_[(slot_ + 1) % kSnapSlots], 0));
  shuffle_snapshot(shuffle_, slot_, early_split_, stream_);
}

void PeerPushExchange::after_task(cudaEvent_t done) {
  if (slot_ < 0) return;
  // What this task added to the buckets goes to its owners beside the next task.
  SB_CUDA_CHECK(cudaStreamWaitEvent(push_stream_, done, 0));
  if (last_slot_ < 0) SB_CUDA_CHECK(cudaEventRecord(chunk_events_[0], push_stream_));
  shuffle_push(shuffle_, e_.env->rank, last_slot_, slot_, push_blocks_, push_stream_);
  SB_CUDA_CHECK(cudaEventRecord(push_done_[static_cast<std::size_t>(slot_)], push_stream_));
  prev_slot_ = last_slot_;
  last_slot_ = slot_;
  slot_ = -1;
}

TableStatus PeerPushExchange::result() {
  if (!connected_) return NcclRowExchange::result();
  if (emitted_) return emitted_status_;
  TableStatus st = hash_finish(owner(), *e_.records, stream_);
  hash_clear(owner(), stream_);  // clean for the next pass
  st.spilled = 1;
  return st;
}

double PeerPushExchange::exposed_seconds(const ShuffleStats& stats) const {
  // The rows moved during the tasks: only the wait for the last pushes and the counts lie here.
  return connected_ ? exposed_ : stats.seconds;
}

void PeerPushExchange::trace(const Timeline& t) {
  // chunk_events_: [3] the tasks' end, [4] own rows split, [5] landed rows' split begun, [2]
  // landed rows read, [6] every slice folded ([7]: the segments' last upload).
  const cudaEvent_t* ev = chunk_events_.data();
  SB_CUDA_CHECK(cudaEventSynchronize(ev[6]));
  const auto at = [&](int k) {
    float ms = 0;
    SB_CUDA_CHECK(cudaEventElapsedTime(&ms, ev[3], ev[k]));
    return ms;
  };
  std::fprintf(stderr,
               "groupby shuffle rank %d (peer): pushes from the first %f ms, landed %f ms after "
               "the tasks, counts %f ms; own rows split by %f, landed ones from %f to %f, folded "
               "by %f ms; rows out %lld in %lld own %lld\n",
               e_.env->rank, t.push_ms, t.landed_s * 1e3, t.counts_s * 1e3, at(4), at(5), at(2),
               at(6), t.out_rows, t.in_rows, t.own_rows);
}

void PeerPushExchange::finish(ShuffleStats& stats) {
  if (!connected_) {
    NcclRowExchange::finish(stats);
    return;
  }
  // This worker's own rows are split into its slices while its last pushes land. The rows of
  // every push but the last have landed once the one before the last has ended: where a task's
  // push outlasts a round of counts (early_split_), those are split too meanwhile, and the rest
  // once every worker's pushes have landed (the counts go round after them). Every slice is
  // then folded once. A barrier then lets the sources push the next repeat's rows only after
  // every owner has read this repeat's.
  const std::vector<unsigned long long> cur = cursors();
  RowShuffle& sh = shuffle_;
  const int P = e_.env->size;
  const int me = e_.env->rank;
  const int R = sh.regions();
  const int W1 = R + 1;
  const bool tracing = e_.env->trace;
  cudaEvent_t* ev = chunk_events_.data();
  const auto mark = [&](int k) {  // trace points only; ev[2] (landed rows read) is always taken
    if (tracing) SB_CUDA_CHECK(cudaEventRecord(ev[k], stream_));
  };
  // host_segments is rewritten only after the device has its last upload (ev[7]).
  const auto upload = [&] {
    shuffle_upload(sh, stream_);
    SB_CUDA_CHECK(cudaEventRecord(ev[7], stream_));
  };
  shuffle_own_segments(sh, me, cur.data());
  mark(3);
  upload();
  shuffle_slices_clear(sh, 0, R, stream_);
  shuffle_restage(owner(), sh, 0, R, sh.key, stream_);
  mark(4);
  const double t_wait = now();
  std::vector<long long> early;  // rows of each (source, region) split before the last pushes
  if (early_split_) {
    const auto B = static_cast<std::size_t>(sh.buckets());
    std::vector<unsigned long long> before(B, 0);
    if (prev_slot_ >= 0) {  // its push ended after its snapshot reached host_snapshots
      SB_CUDA_CHECK(cudaEventSynchronize(push_done_[static_cast<std::size_t>(prev_slot_)]));
      const unsigned long long* snap =
          sh.host_snapshots + static_cast<std::size_t>(prev_slot_) * B;
      before.assign(snap, snap + B);
    }
    early = exchange_counts(before).recv;
    SB_CUDA_CHECK(cudaEventSynchronize(ev[7]));
    const int n = shuffle_landing_segments(sh, me, early.data(), W1);
    upload();
    mark(5);
    shuffle_restage(owner(), sh, R, n, sh.landing, stream_);
  }
  SB_CUDA_CHECK(cudaEventRecord(chunk_events_[1], push_stream_));
  SB_CUDA_CHECK(cudaEventSynchronize(chunk_events_[1]));
  const double pushed_at = now();
  // Every worker sends its counts only after its pushes have landed.
  const RowCounts rc = exchange_counts(cur);
  const double counts_at = now();
  Timeline t;
  for (int q = 0; q < P; ++q)
    for (int r = 0; r < R; ++r) {
      const std::size_t i = static_cast<std::size_t>(q) * W1 + r;
      (q == me ? t.own_rows : t.out_rows) += rc.send[i];
      if (q != me) t.in_rows += rc.recv[i];
    }
  SB_CUDA_CHECK(cudaEventSynchronize(ev[7]));
  const int n =
      shuffle_landing_segments(sh, me, rc.recv.data(), W1, early.empty() ? nullptr : early.data());
  upload();
  if (early.empty()) mark(5);
  shuffle_restage(owner(), sh, R, n, sh.landing, stream_);
  SB_CUDA_CHECK(cudaEventRecord(ev[2], stream_));
  shuffle_fold_emit(owner(), sh, *e_.records, stream_);
  mark(6);
  SB_CUDA_CHECK(cudaEventSynchronize(ev[2]));
  SB_MPI_CHECK(MPI_Barrier(e_.env->comm));
  TableStatus st{};
  SB_CUDA_CHECK(cudaMemcpyAsync(&st, owner().status, sizeof st, cudaMemcpyDeviceToHost, stream_));
  SB_CUDA_CHECK(cudaStreamSynchronize(stream_));
  emitted_ = st.spilled == 0 && !rc.any_spill;
  if (emitted_) {
    emitted_status_ = st;
  } else {
    // Rows reached the owner's table (a full slice bucket or slice), or spilled groups are on
    // their way to it: the records join the table first (finish_spills reuses the buffer).
    hash_insert_records(owner(), *e_.records, static_cast<std::int64_t>(st.records), stream_);
  }
  if (last_slot_ >= 0)
    SB_CUDA_CHECK(cudaEventElapsedTime(&t.push_ms, chunk_events_[0], chunk_events_[1]));
  t.landed_s = pushed_at - t_wait;
  t.counts_s = counts_at - pushed_at;
  if (tracing) trace(t);
  // the buckets' rows travel as they are (keys of the wire's width)
  const double row = 8.0 * (sh.planes() - 1) + (sh.narrow_keys ? 4.0 : 8.0);
  stats.seconds = t.push_ms * 1e-3;
  stats.send_total = row * static_cast<double>(t.out_rows + t.own_rows);
  stats.bytes_sent = row * static_cast<double>(t.out_rows);
  exposed_ = counts_at - t_wait;
  exposed_ += finish_spills(rc.spilled, rc.any_spill, stats);
}

}  // namespace sb::groupby::gpu
