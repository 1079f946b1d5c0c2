#pragma once
/// @file config.hpp
/// groupby parameters (docs/specification.md §4.3, §5): keys, presets, case variants, and the task
/// layout.
///
/// Keys: days (partitions of 86 400 rows), rows (overrides days), partition (rows per task,
/// default one day), cardinality (keys of the by-key query, default 10^7), query
/// (by-name | by-id | by-key | all), seed (42); by-key on several GPUs only: gpu_shuffle,
/// gpu_exchange, push_blocks, shuffle_chunks (optional tuning, in no preset); on several GPUs:
/// comm (nccl | mpi-host, optional, in no preset). Presets: tiny 2
/// days, small and seed 30 days, large 10^8 rows in tasks of 5 * 10^6 rows. expand() gives one
/// case per query.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "groupby/generate.hpp"
#include "groupby/query.hpp"
#include "scalebench/gpu_transport_kind.hpp"
#include "scalebench/params.hpp"

namespace sb::groupby {

/// Rows of the small preset: up to here every path is compared group by group.
inline constexpr std::int64_t kPerGroupRows = 30 * kRowsPerDay;
/// Groups recomputed by the reference scan above that size.
inline constexpr int kSampledGroups = 1000;
/// The peer exchange's push kernel: default number of blocks on two GPUs and on more, and the
/// largest. On two the pushes land before the owner's own rows are split and more blocks only
/// take SMs from the tasks; on four 24 land the rows sooner than 16 or 32
/// (tools/gpu-campaign.sh bykey).
inline constexpr int kDefaultPushBlocksTwo = 16;
inline constexpr int kDefaultPushBlocks = 24;
inline constexpr int kMaxPushBlocks = 1024;
/// Most pieces of the NCCL row exchange (its events are sized for it).
inline constexpr int kMaxShuffleChunks = 8;

struct Config {
  QueryDef def;
  std::int64_t rows = 0;
  std::int64_t partition = kRowsPerDay;
  std::uint64_t cardinality = 10'000'000;
  std::uint64_t seed = 42;
  /// How a multi-GPU by-key case shuffles: "rows" (each row to its key's owner, owner-sized
  /// tables, exchange overlapped with aggregation), "groups" (every GPU aggregates all its rows
  /// into a full table, the partial groups travel) or "auto" (rows when the full table would be
  /// more than twice the L2 cache, else groups).
  std::string gpu_shuffle = "auto";
  /// How the row shuffle's rows travel between GPUs: "nccl" (grouped send/recv after the
  /// tasks), "peer" (after each task the sources store its rows into their owners' memory,
  /// mapped by CUDA IPC, while the next task runs; one node only) or "auto" (peer where CUDA
  /// IPC maps every GPU of the case and the landing areas fit, else nccl).
  std::string gpu_exchange = "auto";
  /// Blocks of the peer exchange's push kernel (parameter push_blocks, 1..kMaxPushBlocks);
  /// 0: the default, kDefaultPushBlocksTwo on two GPUs and kDefaultPushBlocks on more.
  int push_blocks = 0;
  /// Pieces the NCCL row exchange sends its rows in, each aggregated as soon as it lands
  /// (parameter shuffle_chunks, 1..kMaxShuffleChunks; cut to a divisor of the send regions);
  /// 0: the default, one on up to two GPUs and four from three on.
  int shuffle_chunks = 0;
  /// How a multi-GPU case moves its partial results and shuffled rows between the GPUs
  /// (parameter comm: nccl, or mpi-host staged through host memory; the peer exchange has no
  /// mpi-host form, so gpu_exchange=auto then means nccl's row exchange).
  GpuTransportKind comm = GpuTransportKind::nccl;

  [[nodiscard]] std::int64_t num_tasks() const { return (rows + partition - 1) / partition; }
  /// Every key of the by-key column is below 2^32 (keys lie in [0, cardinality)): the GPU's
  /// staging buckets can keep them as 32-bit words.
  [[nodiscard]] bool keys_fit_32_bits() const { return cardinality <= (std::uint64_t{1} << 32); }
  /// Rows [first, second) of task t.
  [[nodiscard]] std::pair<std::int64_t, std::int64_t> task_rows(std::int64_t t) const {
    const std::int64_t b = t * partition;
    return {b, b + partition < rows ? b + partition : rows};
  }
  [[nodiscard]] TableSpec table() const { return {seed, cardinality}; }
  /// Up to the small preset every group travels to the scheduler for the cross-path check.
  [[nodiscard]] bool per_group() const { return rows <= kPerGroupRows; }
  /// Distinct groups this many rows can produce at most.
  [[nodiscard]] std::int64_t max_groups(std::int64_t nrows) const;
};

/// Parses one case's parameters (as expand() returns them). Throws sb::UsageError.
[[nodiscard]] Config parse(const Params& p);

[[nodiscard]] std::vector<std::pair<std::string, std::string>> config_keys();
[[nodiscard]] Params preset_params(const std::string& preset);
[[nodiscard]] std::vector<Params> expand_params(const Params& p);

/// The keys whose groups the validation recomputes by a reference scan: every key of the
/// low-cardinality domains (26 names; the values Poisson(1000) can take), else kSampledGroups
/// distinct keys drawn uniformly from [0, cardinality) (all of them when fewer), ascending.
[[nodiscard]] std::vector<std::int64_t> sample_keys(const Config& c);

}  // namespace sb::groupby
