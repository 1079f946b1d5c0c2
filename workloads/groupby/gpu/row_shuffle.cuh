#pragma once
/// @file row_shuffle.cuh
/// The row shuffle of a multi-GPU high-cardinality case (P workers; row_shuffle.cu, the peer
/// pushes in row_shuffle_push.cu): rows, not partial
/// groups, travel to the owners of their keys, and every owner keeps a table of its share of
/// the groups only. During the tasks each worker stages its rows into P x R send buckets
/// (owner_of(key, P, owner_bits), then region r of the owner's table: R = 2^region_bits
/// regions of consecutive slots; staging as in HashStage). At the end of the repeat the
/// buckets are packed by (chunk, owner, region), the chunks travel in turn (NCCL grouped
/// send/recv) and each received chunk is split by the owner into the shared-memory slices of
/// its regions and aggregated there (slice_aggregate_kernel) while the next chunk is in
/// flight. Rows whose send bucket is full go to the worker's own spill table (any key
/// distribution stays correct: the spill table's groups then travel as records); rows whose
/// slice bucket is full go to the owner's table with global atomics.
/// Everything runs on the given stream and returns without synchronising unless stated.

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "groupby/gpu/hash_table.cuh"
#include "groupby/gpu/row_source.cuh"
#include "groupby/table.hpp"

namespace sb::groupby::gpu {

/// Rows of RowShuffle's segment tables (each owners * R int64).
/// Packed rows travel as one message per (chunk, peer): a block of n rows is n keys (32-bit
/// words when RowShuffle::narrow_keys, n/2 8-byte words rounded up; else 8-byte words), then
/// the n x values, then (when kept) the n y values, 8-byte words. A segment's first key is key
/// number `key offset` of the packed array (counted in keys of the block's width), its first x
/// at word `offset` and its first y at offset + plane (plane = the block's n).
enum SegField : int {
  kPackSrc = 0,  ///< send bucket offset (rows) of the segment
  kPackRows,     ///< rows
  kPackDst,      ///< word offset of the segment's first x in the packed send array
  kPackPlane,    ///< rows of its block (distance from an x to its y)
  kRecvOff,      ///< word offset of the segment's first x in the received data
  kRecvRows,     ///< rows
  kRecvRegion,   ///< region of the owner's table the rows belong to
  kRecvPlane,    ///< rows of its block
  kPackKey,      ///< key offset of the segment's first key in the packed send array
  kRecvKey,      ///< key offset of the segment's first key in the received data
  kSegFields
};

/// The row shuffle's buckets and packed arrays (device memory), sized by plan_row_shuffle.
struct RowShuffle {
  int owners = 0;  ///< 0: not possible for this table (plan_row_shuffle)
  /// Keys are owned by ranges of the slot hash of a table of 2^owner_bits slots (owner_of with
  /// bits; 0: plain owner_of). Set by the caller.
  int owner_bits = 0;
  int region_bits = 0;
  int slice_bits = 0;
  /// Slices each region of the owner's table is split into (its slice buckets).
  int slices_per_region = 0;
  std::int64_t bucket_capacity = 0;  ///< rows per send bucket
  std::int64_t slice_capacity = 0;   ///< rows per slice bucket
  bool with_y = false;
  /// Every key is below 2^32 (the case's key domain): the send buckets, the landing areas and
  /// the packed rows keep keys as 32-bit words, 20 instead of 24 bytes a row with y (the
  /// exchange bounds the multi-GPU by-key case).
  bool narrow_keys = false;
  double bytes = 0;  ///< device bytes alloc_row_shuffle takes (without the packed arrays)
  // send buckets [owners * R][bucket_capacity] and their cursors; one allocation: the keys (32-bit
  // words when narrow_keys: `key` then holds std::uint32_t), x at word bucket_key_words(), y = x +
  // owners R bucket_capacity
  std::int64_t* key = nullptr;
  double* x = nullptr;
  double* y = nullptr;
  unsigned long long* cursor = nullptr;
  // slice buckets of the owner's table [R * slices_per_region][slice_capacity]: keys (32-bit
  // words when narrow_keys), x, y, and the rows appended to each
  std::int64_t* slice_key = nullptr;
  double* slice_x = nullptr;
  double* slice_y = nullptr;
  unsigned long long* slice_cursor = nullptr;
  unsigned long long* spilled = nullptr;
  // packed rows (planes() words a row): sent (this worker's rows, by chunk and owner) and
  // received (by chunk and source)
  std::int64_t send_cap = 0, recv_cap = 0;  ///< rows
  std::uint64_t* send = nullptr;
  std::uint64_t* recv = nullptr;
  /// Segment tables, kSegFields x (owners * R) int64, in pinned host memory and on the device:
  /// the pack fields in the order (chunk, owner, region), the receive fields in the order
  /// (chunk, source, region).
  std::int64_t* host_segments = nullptr;
  std::int64_t* segments = nullptr;
  /// The peer exchange's landing area ([owners][planes][R][bucket_capacity] words, alloc_landing):
  /// block p holds source p's rows for this owner laid out as in p's send buckets (shuffle_push).
  std::uint64_t* landing = nullptr;
  std::uint64_t** dests = nullptr;               ///< [owners] landing areas as mapped here (device)
  unsigned long long* snapshots = nullptr;       ///< [kSnapSlots][buckets]: cursors after a task
  unsigned long long* host_snapshots = nullptr;  ///< the snapshots copied to pinned host memory
  [[nodiscard]] int regions() const { return 1 << region_bits; }
  [[nodiscard]] int buckets() const { return owners << region_bits; }
  [[nodiscard]] int planes() const { return with_y ? 3 : 2; }
  /// Rows of one plane of the send buckets.
  [[nodiscard]] std::int64_t plane_rows() const {
    return static_cast<std::int64_t>(buckets()) * bucket_capacity;
  }
  /// 8-byte words of the send buckets' key plane (keys of the wire's width; bucket_capacity is
  /// even).
  [[nodiscard]] std::int64_t bucket_key_words() const { return key_words(plane_rows()); }
  /// 8-byte words of one source's block of the landing area (its keys, x and y planes of R
  /// buckets, laid out as in the send buckets).
  [[nodiscard]] std::int64_t landing_block() const {
    const std::int64_t n = static_cast<std::int64_t>(regions()) * bucket_capacity;
    return key_words(n) + (planes() - 1) * n;
  }
  [[nodiscard]] std::int64_t landing_words() const { return owners * landing_block(); }
  /// 8-byte words of the keys of a block of n packed rows.
  [[nodiscard]] std::int64_t key_words(std::int64_t n) const {
    return narrow_keys ? (n + 1) / 2 : n;
  }
  /// 8-byte words of a block of n packed rows (at most planes() n).
  [[nodiscard]] std::int64_t block_words(std::int64_t n) const {
    return key_words(n) + (planes() - 1) * n;
  }
  /// Key offset (in keys of the packed width) of the block that starts at 8-byte word w.
  [[nodiscard]] std::int64_t key_offset(std::int64_t w) const { return narrow_keys ? 2 * w : w; }
};
/// Sizes the shuffle for an owner's table `owner` (one per worker), `owners` workers and a case
/// of `rows` rows (a worker may be handed every task); owners == 0 in the result when the
/// table's shape does not allow it. Allocates nothing.
[[nodiscard]] RowShuffle plan_row_shuffle(const HashTable& owner, int owners, std::int64_t rows);
void alloc_row_shuffle(RowShuffle& s);
void free_row_shuffle(RowShuffle& s);
/// Packed arrays for at least send_rows / recv_rows rows, planes() words each (an upper bound of
/// their blocks' words; reallocated when larger; synchronises the device then).
void reserve_row_shuffle(RowShuffle& s, std::int64_t send_rows, std::int64_t recv_rows);
/// Empties the send buckets.
void shuffle_clear(const RowShuffle& s, cudaStream_t stream);
/// Appends rows [0, n) of `in` (stored, or generated in the kernel) to the send buckets (full
/// buckets spill into `spill`).
void shuffle_stage(const HashTable& owner, const HashTable& spill, const RowShuffle& s,
                   const RowSource& in, std::int64_t n, cudaStream_t stream);
/// The same from stored columns (in.key, in.x, in.y).
void shuffle_stage(const HashTable& owner, const HashTable& spill, const RowShuffle& s,
                   const ColumnPtrs& in, std::int64_t n, cudaStream_t stream);

/// Receive segment idx in host_segments: `rows` rows of `region`, keys at `key` (in keys of the
/// wire's width), x at word `x`, y at x + plane.
void shuffle_recv_segment(const RowShuffle& s, std::int64_t idx, std::int64_t key, std::int64_t x,
                          std::int64_t plane, std::int64_t rows, int region);
/// Receive segments for owner `me`'s own rows, in its send buckets (counts: the cursors, capped
/// at bucket_capacity here): the regions split into `chunks` runs of R / chunks (R a multiple of
/// chunks), run g's segments from index g * chunk_stride + first (the defaults: segments [0, R)).
/// Returns R.
int shuffle_own_segments(const RowShuffle& s, int me, const unsigned long long* counts,
                         int chunks = 1, int first = 0, int chunk_stride = 0);
/// Receive segments [R, R + (owners - 1) R) for the rows landed from every other source q:
/// rows [from[q * stride + r], rows[q * stride + r]) of region r (from null: from row 0).
/// Returns their number.
int shuffle_landing_segments(const RowShuffle& s, int me, const long long* rows, int stride,
                             const long long* from = nullptr);
/// Splits segments [seg0, seg0 + nseg) of the receive fields into the slice buckets, their
/// offsets addressing `data` (keys of the wire's width, as in the send buckets and the landing
/// area).
void shuffle_restage(const HashTable& owner, const RowShuffle& s, int seg0, int nseg,
                     const void* data, cudaStream_t stream);
/// Aggregates the slice buckets of regions [region0, region0 + nregions) into the owner's
/// table (the slice buckets are not emptied).
void shuffle_fold(const HashTable& owner, const RowShuffle& s, int region0, int nregions,
                  cudaStream_t stream);
/// The one fold of every region of a pass whose owner table was clean when it began: each slice
/// folded from empty straight into records to `out`, their count and checksums to owner.status
/// (owner.status->spilled: rows reached the table, from a full slice bucket or a full slice;
/// the records must then be merged there). The table is not read.
void shuffle_fold_emit(const HashTable& owner, const RowShuffle& s, std::uint64_t* out,
                       cudaStream_t stream);

/// The send buckets' cursors (owners * R, may exceed bucket_capacity) into host memory
/// (synchronises).
void shuffle_cursors(const RowShuffle& s, unsigned long long* host, cudaStream_t stream);
/// Copies host_segments to the device.
void shuffle_upload(const RowShuffle& s, cudaStream_t stream);
/// Packs segments [seg0, seg0 + nseg) of the pack table.
void shuffle_pack(const RowShuffle& s, int seg0, int nseg, cudaStream_t stream);
/// Aggregates received segments [seg0, seg0 + nseg) (all in regions [region0, region0 +
/// nregions)) into the owner's table. With from_buckets the segments' receive fields address
/// the send buckets instead (keys of the wire's width from s.key, x at word offsets from
/// s.key): a worker's own rows, which never travel.
void shuffle_aggregate(const HashTable& owner, const RowShuffle& s, int seg0, int nseg, int region0,
                       int nregions, bool from_buckets, cudaStream_t stream);

/// The peer exchange (one node, CUDA IPC): rows move to their owners while the tasks still
/// run. After each task the source pushes, to every other owner, the rows its buckets gained
/// (shuffle_push: a small kernel beside the next task, storing into the owner's landing area
/// mapped into the source's process); at the end the owner splits its own rows (from its send
/// buckets) and the landed ones into its slices (shuffle_restage) and folds every slice once
/// (shuffle_fold). A source must not push the next repeat's rows before every owner has split
/// this repeat's.
/// Allocates s.landing (once).
void alloc_landing(RowShuffle& s);
/// Empties the slice buckets of regions [region0, region0 + nregions).
void shuffle_slices_clear(const RowShuffle& s, int region0, int nregions, cudaStream_t stream);
/// Snapshots of the send buckets' cursors kept for the pushes (a ring; one per task in flight).
inline constexpr int kSnapSlots = 128;
/// The owners' landing areas as mapped here (landings[p]; this worker's own at its rank, never
/// written), on `stream` (the pushes are ordered after it through the tasks' events), and the
/// snapshot ring.
void shuffle_set_landings(RowShuffle& s, const std::vector<void*>& landings, cudaStream_t stream);
/// Copies the cursors into snapshot `slot` (after the staging before it on `stream`), and with
/// to_host that snapshot into host_snapshots too (read once the push that read it has ended).
void shuffle_snapshot(const RowShuffle& s, int slot, bool to_host, cudaStream_t stream);
/// Pushes to every other owner the rows its buckets gained between snapshot `prev_slot` (< 0:
/// none, the repeat's first push) and snapshot `slot`, every plane, into block `me` of the
/// owner's landing area: one kernel of `ctas` blocks whose stores cross NVLink.
void shuffle_push(const RowShuffle& s, int me, int prev_slot, int slot, int ctas,
                  cudaStream_t stream);

}  // namespace sb::groupby::gpu
