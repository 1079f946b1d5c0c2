#pragma once
/// @file nccl_row_exchange.cuh
/// The NCCL row exchange of a multi-GPU by-key case (exchange.cuh, row_shuffle.cuh): during the
/// tasks every GPU stages its rows into send buckets by owner and region of the owner's table;
/// after them the buckets are packed by (chunk, owner, region) and the chunks travel in turn
/// (NCCL grouped send/recv on a high-priority stream) while the case stream folds this worker's
/// own rows and then each chunk's received rows into the slices of its table. Rows of a full
/// send bucket wait in the worker's spill table, whose groups travel as records at the end.
/// Also the base of the peer exchange (peer_push_exchange.cuh), which shares the staging, the
/// counts and the spills.

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "groupby/gpu/exchange.cuh"
#include "groupby/gpu/row_shuffle.cuh"

namespace sb::groupby::gpu {

class NcclRowExchange : public Exchange {
 public:
  /// `plan`: plan_row_shuffle(owner, size, rows) for this case (owners > 0); allocated here.
  NcclRowExchange(const ExchangeEnv& e, OwnedTable owner, const RowShuffle& plan);
  ~NcclRowExchange() override;

  /// Rows of the packed arrays reserved up front: a worker's share of the case's rows, with a
  /// quarter of headroom and one task's rows.
  [[nodiscard]] static std::int64_t share_rows(const Config& c, int size);

  [[nodiscard]] bool takes_rows() const override { return true; }
  void begin_repeat() override;
  void stage(const RowSource& src, std::int64_t rows) override;
  void finish(ShuffleStats& stats) override;
  [[nodiscard]] int owner_bits() const override { return shuffle_.owner_bits; }

 protected:
  /// Rows per (owner, region) of this worker's send buckets (capped at bucket_capacity) and whether
  /// one overflowed, sent to every worker (R + 1 numbers each: rows of region r at [o * (R + 1) +
  /// r], the overflow flag last); recv holds every source's numbers for this owner.
  struct RowCounts {
    std::vector<long long> send, recv;
    bool spilled = false;    ///< a send bucket of this worker overflowed
    bool any_spill = false;  ///< one of any worker overflowed
  };
  /// The send buckets' cursors (synchronises the case stream).
  [[nodiscard]] std::vector<unsigned long long> cursors();
  /// The counts of `cur` to every worker (MPI all-to-all over the case's workers).
  [[nodiscard]] RowCounts exchange_counts(const std::vector<unsigned long long>& cur);
  /// The end of both row exchanges: the spill tables' groups (only if a send bucket overflowed
  /// anywhere; `spilled`: here) into the owners' tables. Returns the seconds it spent
  /// exchanging records.
  double finish_spills(bool spilled, bool any_spill, ShuffleStats& stats);

  RowShuffle shuffle_;
  /// The exchange's stream: it outranks the aggregation kernels, so NCCL's blocks are scheduled
  /// as soon as SMs free up instead of after every queued aggregation block (both sides of a
  /// transfer must be resident for it to move).
  cudaStream_t comm_stream_ = nullptr;
  /// 4 * kMaxShuffleChunks + 1 timing events: per chunk packed, sent, received, aggregated,
  /// then the start (the peer exchange uses the first eight: see peer_push_exchange.cu).
  std::vector<cudaEvent_t> chunk_events_;

 private:
  /// Where each (chunk, peer) block of packed rows lies, in 8-byte words.
  struct Layout {
    std::vector<long long> send_off, send_n, recv_off, recv_n;
    long long so = 0, ro = 0;            ///< words sent, received
    long long so_rows = 0, ro_rows = 0;  ///< rows sent, received
    long long own_words = 0;             ///< words of this worker's own rows, as if they travelled
  };
  /// Pieces the rows travel in (Config::shuffle_chunks, else by GPU count): a divisor of R.
  [[nodiscard]] int chunks() const;
  /// The pack and receive segment tables of `counts` in K chunks (host_segments) and their blocks.
  [[nodiscard]] Layout layout(const RowCounts& counts, int K,
                              const std::vector<unsigned long long>& cur);
  /// Packs, sends and receives the K chunks on comm_stream_ while the case stream aggregates
  /// them; synchronises the case stream.
  void transfer(const Layout& lay, int K);
  /// `scalebench run --trace`: the exchange's timeline, one line on stderr.
  void trace(const Layout& lay, int K, double counts_s);
};

}  // namespace sb::groupby::gpu
