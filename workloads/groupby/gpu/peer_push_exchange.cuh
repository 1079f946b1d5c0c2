#pragma once
/// @file peer_push_exchange.cuh
/// The peer exchange of a multi-GPU by-key case (exchange.cuh): the rows of the NCCL row
/// exchange, moved while the tasks still run. Every owner's landing area is mapped into every
/// worker of the case (CUDA IPC, one node); after each task a small push kernel on a
/// high-priority stream stores the rows its send buckets gained into their owners' landing
/// areas, beside the next task. After the tasks each owner splits its own rows and then the
/// landed ones into the slices of its table and folds every slice once, from empty straight
/// into records (the owner's table is only used when rows spill). The mapping is made in
/// the first repeat (collective); where it cannot be made, the exchange either is the NCCL row
/// exchange (gpu_exchange=auto) or throws UsageError (gpu_exchange=peer).

#include <cuda_runtime.h>

#include <vector>

#include "groupby/gpu/nccl_row_exchange.cuh"

namespace sb::groupby::gpu {

class PeerPushExchange final : public NcclRowExchange {
 public:
  /// required: throw when the peers cannot be mapped (else fall back to NCCL).
  PeerPushExchange(const ExchangeEnv& e, OwnedTable owner, const RowShuffle& plan, bool required);
  ~PeerPushExchange() override;

  void prepare() override;
  void begin_repeat() override;
  void stage(const RowSource& src, std::int64_t rows) override;
  void after_task(cudaEvent_t done) override;
  void finish(ShuffleStats& stats) override;
  [[nodiscard]] TableStatus result() override;
  [[nodiscard]] double exposed_seconds(const ShuffleStats& stats) const override;

 private:
  /// Maps every owner's landing area here (collective over the case's workers, which all reach
  /// the same answer); true when every worker of the case is on this node, has room for its
  /// landing area and CUDA IPC maps every peer's.
  bool connect();
  void close_peer_landing();
  /// The figures of one repeat's trace line.
  struct Timeline {
    float push_ms = 0;
    double landed_s = 0, counts_s = 0;
    long long out_rows = 0, in_rows = 0, own_rows = 0;
  };
  /// `scalebench run --trace`: the exchange's timeline, one line on stderr.
  void trace(const Timeline& t);

  bool required_ = false;
  bool decided_ = false;  ///< connect() ran (first repeat)
  bool connected_ = false;
  std::vector<void*> peer_landing_;  ///< every owner's landing area mapped here
  cudaStream_t push_stream_ = nullptr;
  int push_blocks_ = kDefaultPushBlocks;  ///< set by connect()
  int last_slot_ = -1;                    ///< the snapshot of the repeat's last push (-1: none yet)
  int prev_slot_ = -1;                    ///< the snapshot of the push before it (-1: none)
  /// The landed rows of every push but the last are split while the last ones land (three
  /// GPUs or more, tasks of at least kEarlySplitRows rows; the snapshots then reach host memory
  /// too).
  bool early_split_ = false;
  int pushes_ = 0;                      ///< pushes of this repeat
  int slot_ = -1;                       ///< the snapshot taken by the last stage() (-1: none)
  std::vector<cudaEvent_t> push_done_;  ///< per snapshot slot: its push has ended
  double exposed_ = 0;                  ///< seconds of finish() after the tasks
  /// The fold wrote this repeat's groups as records (nothing reached the owner's table, which
  /// then stays clean for the next repeat), with this status.
  bool emitted_ = false;
  TableStatus emitted_status_{};
};

}  // namespace sb::groupby::gpu
