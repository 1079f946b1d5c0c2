#pragma once
/// @file exchange.cuh
/// How a multi-GPU by-key case brings every group to its owner (the worker whose share of the
/// slot hash holds its key). One strategy per file, chosen in one place (make_exchange,
/// exchange_registry.cu):
///  - groups (groups_exchange.cu): every GPU aggregates all its rows into a full table; the
///    partial groups travel to their owners as records (NCCL grouped send/recv) and are merged
///    into the owner's table.
///  - nccl (nccl_row_exchange.cu): rows, not groups, travel. During the tasks each GPU stages
///    its rows into send buckets by owner and table region (row_shuffle.cuh); after them the
///    buckets travel in chunks over NCCL while the owner folds each chunk into the slices of
///    its share-sized table.
///  - peer (peer_push_exchange.cu): the same rows, pushed into their owners' memory (CUDA IPC,
///    one node) after each task while the next one runs.
/// The worker drives the chosen exchange through this interface and takes its share of the groups
/// as records (result()) at the end of each repeat.

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "groupby/config.hpp"
#include "groupby/gpu/hash_table.cuh"
#include "groupby/gpu/row_source.cuh"
#include "groupby/protocol.hpp"
#include "scalebench/gpu_context.cuh"
#include "scalebench/gpu_transport.cuh"
#include "scalebench/workload.hpp"

namespace sb::groupby::gpu {

/// What a worker lends its exchange; the worker outlives it.
struct ExchangeEnv {
  const Config* cfg = nullptr;
  const CaseEnv* env = nullptr;  ///< comm, rank, size, host, trace
  GpuContext* ctx = nullptr;     ///< the worker's GPU: stream, NCCL communicator, properties
  /// Moves device buffers between the case's GPUs (groupby.comm: NCCL or host-staged MPI).
  GpuTransport* transport = nullptr;
  /// The worker's table: every row of the worker (groups), or the rows whose send bucket was
  /// full (the row shuffles' spill table).
  const HashTable* table = nullptr;
  /// The worker's record buffer (cfg->max_groups(cfg->rows) records): compaction scratch. Read
  /// through the worker's pointer, which it allocates after choosing the exchange.
  std::uint64_t* const* records = nullptr;
  /// The NCCL rank of every case rank (the worker's, filled before the exchange is made).
  const std::vector<int>* nccl_peer = nullptr;
};

/// A device hash table freed with its holder (moves, never copies).
class OwnedTable {
 public:
  OwnedTable() = default;
  explicit OwnedTable(const HashTable& t) : t_(t) {}
  ~OwnedTable() { free_hash(t_); }
  OwnedTable(OwnedTable&& o) noexcept : t_(o.t_) { o.t_ = HashTable{}; }
  OwnedTable(const OwnedTable&) = delete;
  OwnedTable& operator=(const OwnedTable&) = delete;
  OwnedTable& operator=(OwnedTable&&) = delete;
  [[nodiscard]] const HashTable& get() const { return t_; }

 private:
  HashTable t_;
};

class Exchange {
 public:
  /// `owner`: the table of this worker's share of the groups.
  Exchange(const ExchangeEnv& e, OwnedTable owner);
  virtual ~Exchange();
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;

  /// Whether the tasks' rows go to the exchange (stage) instead of the worker's table.
  [[nodiscard]] virtual bool takes_rows() const = 0;
  /// Before a repeat's work is queued: the host's set-up the first repeat needs (collective
  /// over the case's workers), so that begin_repeat() only queues work.
  virtual void prepare() {}
  /// Start of a repeat, on the case stream: empties the owner's table (and what else the
  /// exchange fills).
  virtual void begin_repeat();
  /// A task's rows [0, rows) of `src` (generated in the staging kernel, or stored), on the case
  /// stream (takes_rows() only).
  virtual void stage(const RowSource& src, std::int64_t rows);
  /// After a task's last kernel; `done` is recorded on the case stream right after it.
  virtual void after_task(cudaEvent_t done);
  /// After the tasks (the case stream synchronised; the worker's table flushed): brings this
  /// worker's share of the groups into owner() (NCCL ranks from *e_.nccl_peer).
  /// Fills `stats`.
  virtual void finish(ShuffleStats& stats) = 0;
  /// Seconds of finish() that count as communication (the rest is compute).
  [[nodiscard]] virtual double exposed_seconds(const ShuffleStats& stats) const;
  /// Keys are owned by owner_of(key, size, owner_bits()).
  [[nodiscard]] virtual int owner_bits() const { return 0; }
  /// This worker's share of the groups (after finish()).
  [[nodiscard]] const HashTable& owner() const { return owner_.get(); }
  /// After finish(): this worker's share of the groups as records in *e_.records, with their
  /// count and checksums: owner() compacted (hash_finish), unless the exchange wrote the records
  /// already. Synchronises.
  [[nodiscard]] virtual TableStatus result();

 protected:
  /// Sends owner p the records [offsets[p], offsets[p] + counts[p]) of *e_.records and receives
  /// this worker's share into recv_ (the counts travel first by MPI; NCCL grouped send/recv on
  /// the case stream). total: the records in *e_.records. Returns the number of records
  /// received; adds its bytes and seconds to `stats` and its seconds to *seconds.
  std::int64_t exchange_records(const std::vector<long long>& counts,
                                const std::vector<long long>& offsets, std::int64_t total,
                                ShuffleStats& stats, double* seconds = nullptr);

  ExchangeEnv e_;
  cudaStream_t stream_ = nullptr;  ///< the case stream
  int width_ = 0;                  ///< words of a record
  std::uint64_t* recv_ = nullptr;  ///< records received by exchange_records
  long long recv_cap_ = 0;
  double counts_s_ = 0;  ///< the last exchange_records' counts all-to-all, seconds (--trace)

 private:
  OwnedTable owner_;
};

/// The exchange of a multi-GPU high-cardinality case (collective in its first begin_repeat
/// only): groups when Config::gpu_shuffle is "groups" or asks for rows that the table's shape or
/// the free memory does not allow ("auto"; "rows" then throws UsageError), else the row
/// exchange named by Config::gpu_exchange ("nccl", "peer", or "auto": peer where CUDA IPC maps
/// every GPU of the case, else nccl). Allocates the owner's table and the row shuffle (untimed).
[[nodiscard]] std::unique_ptr<Exchange> make_exchange(const ExchangeEnv& e);

}  // namespace sb::groupby::gpu
