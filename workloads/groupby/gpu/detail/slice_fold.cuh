#pragma once
/// @file slice_fold.cuh
/// The fold of staged rows into shared-memory slices of a hash table (internal; slice_fold.cu):
/// one block per slice of 2^slice_bits slots loads the slice, places and folds the rows of the
/// slice's bucket there and writes it back; rows that do not fit go to the table with global
/// atomics after it. Used by HashStage's flush and by the row shuffle's owners. The last fold of
/// a one-GPU pass (stage_finish) writes each slice's groups as records instead.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "groupby/gpu/detail/device_helpers.cuh"
#include "groupby/gpu/hash_table.cuh"

namespace sb::groupby::gpu::detail {

/// Dynamic shared memory of the fold for slices of 2^slice_bits slots and buckets of `cap`
/// rows.
std::size_t slice_shared_bytes(int slice_bits, int width, std::int64_t cap);

/// Slice size for shared memory: the largest power of two of slots within the slice's share of
/// shared memory, between one and four slots per thread of the fold.
int slice_bits_for(int width);

/// Opts the fold in to `smem` bytes of dynamic shared memory on the current device.
void opt_in_slice_fold(std::size_t smem);

/// Folds slices [slice0, slice0 + count) of the table (slots, mask, width, fields): slice i's
/// bucket holds min(cursor[i], cap) rows at keys/x/y + i * cap (y null without sum y; keys
/// 32-bit words when `narrow`, else int64), and spilled[i] receives its rows that did not fit
/// the slice, which then go to the table with global atomics. `smem` =
/// slice_shared_bytes(slice_bits, width, cap), already opted in.
void fold_slices(unsigned long long* slots, std::uint64_t mask, int width, unsigned fields,
                 int slice_bits, const std::int64_t* keys, bool narrow, const double* x,
                 const double* y, std::int64_t cap, const unsigned long long* cursor,
                 unsigned long long* spilled, int* overflow, unsigned slice0, unsigned count,
                 std::size_t smem, cudaStream_t stream);

/// What the emitting fold's kernel gets besides the slices (made by fold_emit_slices from the
/// table): every slice starts as `empty`; the groups go to `out` as records, their count and
/// checksums to `status` (hash_finish's), and status->spilled is set when any row reached the
/// table: spilled by the fold (with global atomics, `overflow` as in upsert_slot), or earlier
/// from a full bucket, of this level (cursor beyond cap) or of the first (region_cursor[r] beyond
/// region_capacity for region r = slice / per; region_cursor null when the slices are the first
/// level).
struct EmitTarget {
  SlotPattern empty{};
  unsigned long long* out = nullptr;
  TableStatus* status = nullptr;
  const unsigned long long* region_cursor = nullptr;
  std::int64_t region_capacity = 0;
  int per = 1;
  int* overflow = nullptr;
};

/// fold_slices' fold of slices [0, count) of table `t` (keys as there) as the last of a pass: the
/// table is not read (every slice starts empty) and not written but for the rows that do not fit,
/// and each slice's groups become records in `out`, their count and checksums in t.status (zeroed
/// first). region_cursor / region_capacity / per: the first level's buckets (EmitTarget;
/// region_cursor null: none). The records are the table's groups unless t.status->spilled is set:
/// the caller then merges them into the table.
void fold_emit_slices(const HashTable& t, int slice_bits, const std::int64_t* keys, bool narrow,
                      const double* x, const double* y, std::int64_t cap,
                      const unsigned long long* cursor, unsigned count, std::size_t smem,
                      std::uint64_t* out, const unsigned long long* region_cursor,
                      std::int64_t region_capacity, int per, cudaStream_t stream);

}  // namespace sb::groupby::gpu::detail
