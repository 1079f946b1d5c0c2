#pragma once
/// @file stage_kernels.cuh
/// The staging kernels of HashStage and the row shuffle (internal; launched by
/// stage_launch.cu, their only instantiation).

#include <cstdint>

#include "groupby/gpu/detail/device_helpers.cuh"
#include "groupby/gpu/row_source.cuh"

namespace sb::groupby::gpu::detail {

/// Appends rows to the buckets of their regions, a tile of kStageRows * kStageThreads rows at a
/// time, the way radix-sort partitions do it: the tile is counted by region in shared memory,
/// the counts are scanned, the rows are placed region by region in a shared-memory copy of the
/// tile, each region's run is reserved with one global atomic, and consecutive threads then
/// write consecutive rows of a run. A warp's stores thus land on a few lines instead of one
/// line per row (bench_groupby_gpu BM_AggregateByKey, against a direct per-row scatter).
/// Src: the rows' source (row_source.cuh): stored columns, or generated here (the worker's
/// first pass, which then reads nothing from memory).
template <class Src, class OutKey>
__global__ void __launch_bounds__(kStageThreads)
    stage_rows_kernel(const TileTarget tt, const Src src, std::int64_t n, OutKey* __restrict__ okey,
                      double* __restrict__ ox, double* __restrict__ oy, std::int64_t cap,
                      unsigned long long* __restrict__ cursor, int* overflow) {
  extern __shared__ unsigned char stage_smem[];
  StageShared& sh = *reinterpret_cast<StageShared*>(stage_smem);
  constexpr std::int64_t kTile = kStageThreads * kStageRows;
  for (std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * kTile; base < n;
       base += static_cast<std::int64_t>(gridDim.x) * kTile)
    stage_tile(sh, tt, src, n, base, okey, ox, oy, cap, cursor, overflow);
}

/// The second level in one launch: every region's bucket (first level; keys of type Key) into
/// the buckets of its `per` slices (keys of the same type: 32-bit words stay 32-bit). Blocks take
/// tiles of all regions in turn (tile -> region by the prefix of tiles per region, computed by
/// every block from the first level's cursors). At most 64 registers, so that two blocks share an
/// SM as with the other staging kernels (unbounded, it took more and left one block per SM: ncu of
/// bench_groupby_gpu BM_AggregateByKey).
template <class Key>
__global__ void __launch_bounds__(kStageThreads, 2)
    restage_kernel(unsigned long long* __restrict__ slots, std::uint64_t mask, int width,
                   unsigned fields, int slice_bits, int per, int regions,
                   const Key* __restrict__ keys, const double* __restrict__ x,
                   const double* __restrict__ y, std::int64_t region_capacity,
                   const unsigned long long* __restrict__ region_cursor,
                   Key* __restrict__ slice_key, double* __restrict__ slice_x,
                   double* __restrict__ slice_y, std::int64_t slice_capacity,
                   unsigned long long* __restrict__ slice_cursor, int* overflow) {
  extern __shared__ unsigned char stage_smem[];
  StageShared& sh = *reinterpret_cast<StageShared*>(stage_smem);
  constexpr std::int64_t kTile = kStageThreads * kStageRows;
  if (threadIdx.x == 0) {
    int t = 0;
    for (int q = 0; q < regions; ++q) {
      sh.tile_start[q] = t;
      const auto rows = min(static_cast<std::int64_t>(region_cursor[q]), region_capacity);
      t += static_cast<int>((rows + kTile - 1) / kTile);
    }
    sh.tile_start[regions] = t;
  }
  __syncthreads();
  const int tiles = sh.tile_start[regions];
  for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
    // Tile t's region, and its rows [base, base + tile) of the region's bucket. (Asking L2 for
    // the block's next tile meanwhile read 30% more from DRAM and took 1.73 against 1.61 ms for
    // 10^8 rows on an H200: ncu of bench_groupby_gpu AggregateByKey/mode:5.)
    const int q = segment_of(sh.tile_start, regions, t);
    const std::int64_t base = static_cast<std::int64_t>(t - sh.tile_start[q]) * kTile;
    const std::int64_t rows = min(static_cast<std::int64_t>(region_cursor[q]), region_capacity);
    const std::int64_t in = static_cast<std::int64_t>(q) * region_capacity;
    const std::int64_t out = static_cast<std::int64_t>(q) * per * slice_capacity;
    const TileTarget tt = table_target(mask, slice_bits, per, slots, width, fields);
    const ColumnRows<Key> src{keys + in, x + in, y != nullptr ? y + in : nullptr};
    stage_tile(sh, tt, src, rows, base, slice_key + out, slice_x + out,
               slice_y != nullptr ? slice_y + out : nullptr, slice_capacity,
               slice_cursor + static_cast<std::int64_t>(q) * per, overflow);
  }
}

}  // namespace sb::groupby::gpu::detail
