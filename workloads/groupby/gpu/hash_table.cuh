#pragma once
/// @file hash_table.cuh
/// The global hash table of high-cardinality groupby on a GPU (hash_table.cu): one
/// open-addressing table of slots laid out as records ([key, count, fields...], 8-byte words;
/// group_table.hpp's slot hash, linear probing, key inserted with atomicCAS, fields updated with
/// atomicAdd / integer atomicMin/Max on the double bits). Compaction writes the occupied slots
/// as records, optionally grouped by owner for the exchange between GPUs (warp- and
/// block-aggregated cursors: one global atomic per block and owner). Everything runs on the
/// given stream and returns without synchronising unless stated.

#include <cuda_runtime.h>

#include <cstdint>

#include "groupby/table.hpp"

namespace sb::groupby::gpu {

struct RowSource;

/// Most owners hash_compact groups records for (its counters are sized for them).
inline constexpr int kMaxOwners = 64;

/// What hash_finish reads back: the record count, the checksums of the records ({groups, sum
/// count, sum sum_x, sum sum_y, sum min_x, sum max_x}) and the table's overflow flag. `spilled`:
/// the records came from slices folded straight into records (stage_finish) and rows had also
/// reached the table, so both were merged there.
struct TableStatus {
  double sum[6];
  unsigned long long records;
  int overflow;
  int spilled;
};

/// Global hash table (device memory): capacity slots of `width` words.
struct HashTable {
  std::uint64_t* slots = nullptr;
  std::int64_t capacity = 0;  ///< power of two
  int width = 0;
  unsigned fields = 0;
  int* overflow = nullptr;        ///< set when a probe ran the whole table (never, when sized)
  long long* counters = nullptr;  ///< scratch: owner counts / cursors (64 + 64)
  TableStatus* status = nullptr;  ///< scratch: checksums, record count
};
/// A table for up to `groups` groups at load <= 0.7.
[[nodiscard]] HashTable make_hash(std::int64_t groups, unsigned fields);
void free_hash(HashTable& t);
void hash_clear(const HashTable& t, cudaStream_t stream);
/// Adds rows [0, n) of `in` (stored, or generated in the kernel; row_source.cuh).
void hash_aggregate(const HashTable& t, const RowSource& in, std::int64_t n, cudaStream_t stream);
/// The same from stored columns: keys in.key, values in.x / in.y.
void hash_aggregate(const HashTable& t, const ColumnPtrs& in, std::int64_t n, cudaStream_t stream);
/// Adds `count` records (record_width(t.fields) words each) to the table.
void hash_insert_records(const HashTable& t, const std::uint64_t* records, std::int64_t count,
                         cudaStream_t stream);
/// Writes the occupied slots as records to `out`, grouped by owner (owner_of(key, owners,
/// owner_bits)), owner o's records starting at offsets[o] (host array); fills counts[o] (host)
/// first. Synchronises the stream once (to read the counts). Returns the number of records.
std::int64_t hash_compact(const HashTable& t, int owners, std::uint64_t* out, long long* counts,
                          long long* offsets, cudaStream_t stream, int owner_bits = 0);
/// hash_compact with one owner, the records' checksums and hash_overflowed in one pass over the
/// table and one synchronisation: every group as a record to `out` (in no particular order).
[[nodiscard]] TableStatus hash_finish(const HashTable& t, std::uint64_t* out, cudaStream_t stream);
/// True when a probe overflowed (synchronises).
[[nodiscard]] bool hash_overflowed(const HashTable& t, cudaStream_t stream);

}  // namespace sb::groupby::gpu
