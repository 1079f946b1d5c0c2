// Partitioned high-cardinality aggregation on a GPU (hash_stage.cuh): buckets by table region,
// then by shared-memory slice, folded slice by slice.
#include "groupby/gpu/hash_stage.cuh"

#include <algorithm>
#include <vector>

#include "groupby/gpu/detail/launch_config.cuh"
#include "groupby/gpu/detail/slice_fold.cuh"
#include "groupby/gpu/detail/stage_launch.cuh"
#include "scalebench/error.hpp"
#include "scalebench/gpu_error.cuh"

namespace sb::groupby::gpu {

using namespace detail;

bool stage_pays(const HashTable& t, const cudaDeviceProp& prop) {
  const double bytes = static_cast<double>(t.capacity) * t.width * 8.0;
  return bytes > 2.0 * static_cast<double>(prop.l2CacheSize) && t.capacity >= 1 << 16;
}

double stage_bytes(std::int64_t rows, bool with_y, bool slices) {
  // Each level holds every row once (plus headroom); 16 or 24 bytes a row.
  return (slices ? 2.3 : 1.15) * (with_y ? 24.0 : 16.0) * static_cast<double>(rows) +
         64.0 * (1 << 20);
}

HashStage make_stage(const HashTable& t, const cudaDeviceProp& prop, std::int64_t rows,
                     int region_bits, bool slices, bool narrow_keys) {
  const int log2cap = log2_capacity(t);
  const int sb = slice_bits_for(t.width);
  if (region_bits <= 0 && slices && log2cap > sb) {
    region_bits = (log2cap - sb + 1) / 2;  // the two levels split the fan-out evenly
  } else if (region_bits <= 0) {
    const double bytes = static_cast<double>(t.capacity) * t.width * 8.0;
    const double region = std::max(1.0, static_cast<double>(prop.l2CacheSize) / 4.0);
    region_bits = 0;
    while (bytes / static_cast<double>(std::int64_t{1} << region_bits) > region) ++region_bits;
  }
  region_bits = std::min({region_bits, log2cap, 10});
  HashStage s;
  s.region_bits = region_bits;
  const std::int64_t regions = std::int64_t{1} << region_bits;
  s.region_capacity = rows / regions + rows / regions / 20 + 4096;
  const auto total = static_cast<std::size_t>(regions * s.region_capacity);
  alloc_rows(total, (t.fields & kSumY) != 0, s.key, s.x, s.y);
  SB_CUDA_CHECK(cudaMalloc(&s.cursor, sizeof(unsigned long long) * regions));
  SB_CUDA_CHECK(cudaMemset(s.cursor, 0, sizeof(unsigned long long) * regions));
  const int split = log2cap - region_bits - sb;  // log2 of slices per region
  const std::int64_t count = regions << std::max(split, 0);
  const std::int64_t slice_cap =
      split == 0 ? s.region_capacity : rows / count + rows / count / 10 + 1024;
  if (slices && split >= 0 && split <= 10 && slice_cap <= 0xFFFF &&
      slice_shared_bytes(sb, t.width, slice_cap) <= 200 * 1024) {
    s.slice_bits = sb;
    s.slices_per_region = 1 << split;
    s.slice_capacity = slice_cap;
    s.narrow_keys = narrow_keys;
    if (split == 0) {
      // A region is a slice: the first level's buckets are the slices' buckets.
      s.slice_key = s.key;
      s.slice_x = s.x;
      s.slice_y = s.y;
      s.slice_cursor = s.cursor;
    } else {
      const auto stotal = static_cast<std::size_t>(count * s.slice_capacity);
      alloc_rows(stotal, (t.fields & kSumY) != 0, s.slice_key, s.slice_x, s.slice_y);
      SB_CUDA_CHECK(cudaMalloc(&s.slice_cursor, sizeof(unsigned long long) * count));
      SB_CUDA_CHECK(cudaMemset(s.slice_cursor, 0, sizeof(unsigned long long) * count));
    }
    SB_CUDA_CHECK(cudaMalloc(&s.spilled, sizeof(unsigned long long) * count));
    opt_in_slice_fold(slice_shared_bytes(sb, t.width, slice_cap));
  }
  return s;
}

void free_stage(HashStage& s) {
  const bool own_slices = s.slice_key != nullptr && s.slice_key != s.key;
  for (void* p : {static_cast<void*>(s.key), static_cast<void*>(s.x), static_cast<void*>(s.y),
                  static_cast<void*>(s.cursor), static_cast<void*>(s.spilled)})
    if (p != nullptr) (void)cudaFree(p);
  if (own_slices)
    for (void* p : {static_cast<void*>(s.slice_key), static_cast<void*>(s.slice_x),
                    static_cast<void*>(s.slice_y), static_cast<void*>(s.slice_cursor)})
      if (p != nullptr) (void)cudaFree(p);
  s = HashStage{};
}

void stage_clear(const HashStage& s, cudaStream_t stream) {
  SB_CUDA_CHECK(cudaMemsetAsync(s.cursor, 0, sizeof(unsigned long long) << s.region_bits, stream));
  if (s.slice_cursor != nullptr && s.slice_cursor != s.cursor)
    SB_CUDA_CHECK(
        cudaMemsetAsync(s.slice_cursor, 0,
                        sizeof(unsigned long long) *
                            (static_cast<std::size_t>(s.slices_per_region) << s.region_bits),
                        stream));
}

void stage_rows(const HashTable& t, const HashStage& s, const RowSource& in, std::int64_t n,
                cudaStream_t stream) {
  const int log2cap = log2_capacity(t);
  const TileTarget tt = table_target(
      static_cast<std::uint64_t>(t.capacity - 1), log2cap - s.region_bits, 1 << s.region_bits,
      reinterpret_cast<unsigned long long*>(t.slots), t.width, t.fields);
  launch_stage_rows(tt, in, n, s.key, s.x, s.y, s.region_capacity, s.cursor, t.overflow,
                    s.narrow_keys, 0, stream);
}

void stage_rows(const HashTable& t, const HashStage& s, const ColumnPtrs& in, std::int64_t n,
                cudaStream_t stream) {
  stage_rows(t, s, RowSource::columns(in), n, stream);
}

void stage_flush(const HashTable& t, const HashStage& s, cudaStream_t stream) {
  const int regions = 1 << s.region_bits;
  auto* slots = reinterpret_cast<unsigned long long*>(t.slots);
  const auto mask = static_cast<std::uint64_t>(t.capacity - 1);
  if (s.slice_bits > 0) {
    // Second level: every region's rows into its slices' buckets.
    const auto per = static_cast<std::int64_t>(s.slices_per_region);
    if (s.slice_key != s.key) launch_restage(t, s, stream);
    const auto count = static_cast<unsigned>(per * regions);
    fold_slices(slots, mask, t.width, t.fields, s.slice_bits, s.slice_key, s.narrow_keys, s.slice_x,
                s.slice_y, s.slice_capacity, s.slice_cursor, s.spilled, t.overflow, 0u, count,
                slice_shared_bytes(s.slice_bits, t.width, s.slice_capacity), stream);
  } else {
    // Region by region with global atomics, each region's slots hitting in L2.
    std::vector<unsigned long long> cursor(static_cast<std::size_t>(regions));
    SB_CUDA_CHECK(cudaMemcpyAsync(cursor.data(), s.cursor, sizeof(unsigned long long) * regions,
                                  cudaMemcpyDeviceToHost, stream));
    SB_CUDA_CHECK(cudaStreamSynchronize(stream));
    for (int r = 0; r < regions; ++r) {
      const auto n = static_cast<std::int64_t>(std::min<unsigned long long>(
          cursor[r], static_cast<unsigned long long>(s.region_capacity)));
      if (n == 0) continue;
      const std::int64_t o = static_cast<std::int64_t>(r) * s.region_capacity;
      ColumnPtrs rows;
      rows.key = s.key + o;
      rows.x = s.x + o;
      rows.y = s.y != nullptr ? s.y + o : nullptr;
      hash_aggregate(t, rows, n, stream);
    }
  }
  stage_clear(s, stream);
}

TableStatus stage_finish(const HashTable& t, const HashStage& s, std::uint64_t* out,
                         cudaStream_t stream) {
  if (s.slice_bits <= 0) throw Error("groupby: stage_finish needs the staging's slices");
  const int regions = 1 << s.region_bits;
  const bool two_levels = s.slice_key != s.key;
  if (two_levels) launch_restage(t, s, stream);
  fold_emit_slices(t, s.slice_bits, s.slice_key, s.narrow_keys, s.slice_x, s.slice_y,
                   s.slice_capacity, s.slice_cursor,
                   static_cast<unsigned>(s.slices_per_region * regions),
                   slice_shared_bytes(s.slice_bits, t.width, s.slice_capacity), out,
                   two_levels ? s.cursor : nullptr, s.region_capacity, s.slices_per_region, stream);
  stage_clear(s, stream);
  TableStatus host{};
  SB_CUDA_CHECK(cudaMemcpyAsync(&host, t.status, sizeof host, cudaMemcpyDeviceToHost, stream));
  SB_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (host.spilled == 0) return host;
  // Rows reached the table beside the slices (full buckets, full slices): the records join
  // them there, the table is compacted, and cleared again for the next pass.
  hash_insert_records(t, out, static_cast<std::int64_t>(host.records), stream);
  host = hash_finish(t, out, stream);
  hash_clear(t, stream);
  host.spilled = 1;
  return host;
}

}  // namespace sb::groupby::gpu
