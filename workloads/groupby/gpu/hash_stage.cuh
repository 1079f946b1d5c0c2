#pragma once
/// @file hash_stage.cuh
/// Partitioned high-cardinality aggregation on a GPU (hash_stage.cu). A table far larger than L2
/// makes every row a random DRAM read-modify-write of its slot. Staging instead appends each row
/// (key, x, y) to the bucket of the table region its key hashes to (2^region_bits regions of
/// consecutive slots; each tile of rows is sorted by region in shared memory first, so buckets
/// receive coalesced runs and each region's cursor one atomic per tile). The flush then splits
/// every region's bucket again, in one launch, into slices of 2^slice_bits slots that fit in shared
/// memory, and one thread block per slice loads the slice, finds or inserts every row's key
/// there (64-bit compare-and-swap), orders the rows by slot (counting sort), folds each slot's
/// rows in one thread without atomics, and writes the slice back: every slot goes through DRAM
/// once and no row touches a global atomic. Rows whose bucket is full, or whose linear probe
/// runs past the end of its slice, are aggregated into the table directly (after the slice
/// pass), so any key distribution is correct. stage_finish instead folds every slice from
/// empty straight into records, so a one-GPU pass never touches the table unless rows spill.
/// Without slices (slices = false, or a table too small to split) the flush aggregates region
/// after region with global atomics that hit in L2. Everything runs on the given stream and
/// returns without synchronising unless stated.

#include <cuda_runtime.h>

#include <cstdint>

#include "groupby/gpu/hash_table.cuh"
#include "groupby/gpu/row_source.cuh"
#include "groupby/table.hpp"

namespace sb::groupby::gpu {

/// Both levels of staging buckets of one table (device memory).
struct HashStage {
  int region_bits = 0;
  std::int64_t region_capacity = 0;  ///< rows per bucket
  /// Both levels keep keys as 32-bit words (`key` and `slice_key` then hold std::uint32_t; every
  /// key is below 2^32 and the second level is on): 20 instead of 24 bytes a row with y.
  bool narrow_keys = false;
  std::int64_t* key = nullptr;  ///< [regions][region_capacity]
  double* x = nullptr;
  double* y = nullptr;                   ///< only when the table keeps sum y
  unsigned long long* cursor = nullptr;  ///< [regions] rows appended (may pass the capacity)
  // Second level (shared-memory slices); slice_bits == 0 when off.
  int slice_bits = 0;
  int slices_per_region = 0;          ///< 2^(log2 capacity - region_bits - slice_bits)
  std::int64_t slice_capacity = 0;    ///< rows per slice bucket
  std::int64_t* slice_key = nullptr;  ///< [regions * slices_per_region][slice_capacity]
  double* slice_x = nullptr;
  double* slice_y = nullptr;
  unsigned long long* slice_cursor = nullptr;  ///< [slices] rows appended
  unsigned long long* spilled = nullptr;       ///< [slices] rows left for the global table
};
/// Whether staging pays for this table on this GPU: the table is more than twice L2, as by-key
/// seed's 4·2²⁰ slots of 48 bytes are (its single-gpu case in tools/gpu-campaign.sh scaling).
[[nodiscard]] bool stage_pays(const HashTable& t, const cudaDeviceProp& prop);
/// Buckets for `rows` rows in total (5% + 4096 rows of headroom per bucket, 10% + 1024 per
/// slice bucket). region_bits <= 0 picks them: with slices, half the fan-out from regions to
/// slices (bench_groupby_gpu BM_AggregateByKey: the sliced flush against the L2 flush); without,
/// regions of about L2 / 4. narrow_keys: every key the stage will see is below 2^32
/// (HashStage::narrow_keys, taken when the second level is).
[[nodiscard]] HashStage make_stage(const HashTable& t, const cudaDeviceProp& prop,
                                   std::int64_t rows, int region_bits = 0, bool slices = true,
                                   bool narrow_keys = false);
/// Device bytes make_stage allocates for `rows` rows (with slices: both levels).
[[nodiscard]] double stage_bytes(std::int64_t rows, bool with_y, bool slices = true);
void free_stage(HashStage& s);
void stage_clear(const HashStage& s, cudaStream_t stream);
/// Appends rows [0, n) of `in` (stored, or generated in the kernel) to the buckets (overflow
/// goes to the table).
void stage_rows(const HashTable& t, const HashStage& s, const RowSource& in, std::int64_t n,
                cudaStream_t stream);
/// The same from stored columns (in.key, in.x, in.y).
void stage_rows(const HashTable& t, const HashStage& s, const ColumnPtrs& in, std::int64_t n,
                cudaStream_t stream);
/// Aggregates every bucket into the table, region by region, and empties the buckets. Without
/// slices it synchronises once (to read the cursors).
void stage_flush(const HashTable& t, const HashStage& s, cudaStream_t stream);
/// The end of a pass over a table that was clean when it began (slices only): stage_flush and
/// hash_finish in one, without the table in between. Every slice is folded from empty and
/// written to `out` as records with their checksums, so the table is neither read nor written
/// (bench_groupby_gpu BM_AggregateByKey: against a cleared table, folded, then compacted). Where
/// rows reached the table instead (a full bucket, a full slice) the records are merged into it,
/// compacted from it, and the table is cleared again. Empties the buckets; synchronises.
[[nodiscard]] TableStatus stage_finish(const HashTable& t, const HashStage& s, std::uint64_t* out,
                                       cudaStream_t stream);

}  // namespace sb::groupby::gpu
