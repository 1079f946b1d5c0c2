#pragma once
/// @file device_helpers.cuh
/// Device code shared by the groupby GPU steps (internal): how a row reaches its slot of the
/// global hash table (upsert_slot, accumulate), warp reductions and claims, and the tile
/// staging that partitions rows into buckets by table region (stage_tile), used by the
/// table's staging (hash_stage.cu) and the row shuffle (row_shuffle.cu).

#include <cub/block/block_scan.cuh>

#include <cstdint>
#include <cstring>
#include <limits>

#include "groupby/group_table.hpp"
#include "groupby/query.hpp"

namespace sb::groupby::gpu::detail {

constexpr unsigned kFull = 0xffffffffu;
constexpr unsigned long long kEmptyKey = 0x8000000000000000ull;  // GroupTable::kEmpty's bits

__device__ __forceinline__ double warp_sum(double v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(kFull, v, o);
  return v;
}

__device__ __forceinline__ void atomic_min_double(double* addr, double v) {
  const long long b = __double_as_longlong(v);
  if (b >= 0) {
    atomicMin(reinterpret_cast<long long*>(addr), b);
  } else {
    atomicMax(reinterpret_cast<unsigned long long*>(addr), static_cast<unsigned long long>(b));
  }
}

__device__ __forceinline__ void atomic_max_double(double* addr, double v) {
  const long long b = __double_as_longlong(v);
  if (b >= 0) {
    atomicMax(reinterpret_cast<long long*>(addr), b);
  } else {
    atomicMin(reinterpret_cast<unsigned long long*>(addr), static_cast<unsigned long long>(b));
  }
}

/// Most words of a slot: key, count and every field.
constexpr int kMaxSlotWords = 2 + kMaxFields;

/// The words of an empty slot ([kEmptyKey, count 0, sums 0, min +inf, max -inf] for the
/// table's fields), passed to kernels by value.
struct SlotPattern {
  unsigned long long w[8];
};

/// Word i of a pattern by selects, not an index: a run-time index into a kernel parameter
/// would copy it to local memory in every thread.
__device__ __forceinline__ unsigned long long pattern_word(const SlotPattern& p, int i) {
  unsigned long long v = p.w[0];
#pragma unroll
  for (int k = 1; k < kMaxSlotWords; ++k) v = i == k ? p.w[k] : v;
  return v;
}

inline SlotPattern empty_slot(unsigned fields) {
  const auto bits = [](double d) {
    unsigned long long u = 0;
    std::memcpy(&u, &d, sizeof u);
    return u;
  };
  const double inf = std::numeric_limits<double>::infinity();
  SlotPattern p{};
  p.w[0] = kEmptyKey;
  int w = 2;
  if (fields & kSumX) p.w[w++] = 0;
  if (fields & kSumY) p.w[w++] = 0;
  if (fields & kSumSqX) p.w[w++] = 0;
  if (fields & kMinX) p.w[w++] = bits(inf);
  if (fields & kMaxX) p.w[w++] = bits(-inf);
  return p;
}

/// The slot of `key`, inserted when absent (nullptr and *overflow = 1 if the table is full).
__device__ __forceinline__ unsigned long long* upsert_slot(unsigned long long* slots,
                                                           std::uint64_t mask, int width,
                                                           long long key, int* overflow) {
  std::uint64_t i = slot_hash(key) & mask;
  for (std::uint64_t probes = 0; probes <= mask; ++probes) {
    unsigned long long* s = slots + i * static_cast<std::uint64_t>(width);
    const long long cur = __ldcg(reinterpret_cast<const long long*>(s));
    if (cur == key) return s;
    if (static_cast<unsigned long long>(cur) == kEmptyKey) {
      const unsigned long long prev = atomicCAS(s, kEmptyKey, static_cast<unsigned long long>(key));
      if (prev == kEmptyKey || prev == static_cast<unsigned long long>(key)) return s;
    }
    i = (i + 1) & mask;
  }
  atomicExch(overflow, 1);
  return nullptr;
}

__device__ __forceinline__ void accumulate(unsigned long long* s, unsigned fields,
                                           unsigned long long count, double sx, double sy,
                                           double sxx, double mn, double mx) {
  atomicAdd(s + 1, count);
  int w = 2;
  if (fields & kSumX) atomicAdd(reinterpret_cast<double*>(s + w++), sx);
  if (fields & kSumY) atomicAdd(reinterpret_cast<double*>(s + w++), sy);
  if (fields & kSumSqX) atomicAdd(reinterpret_cast<double*>(s + w++), sxx);
  // min/max only decrease/increase, so a value read earlier bounds the current one: no
  // atomic when it cannot change the field (most rows once a group has a few).
  if (fields & kMinX) {
    double* p = reinterpret_cast<double*>(s + w++);
    if (mn < __ldcg(p)) atomic_min_double(p, mn);
  }
  if (fields & kMaxX) {
    double* p = reinterpret_cast<double*>(s + w++);
    if (mx > __ldcg(p)) atomic_max_double(p, mx);
  }
}

/// Asks L2 for the 128-byte lines of elements [0, n) of `p` (the block's threads take the lines
/// in turn): rows a block reads a few microseconds later then come from L2 instead of DRAM.
template <class T>
__device__ __forceinline__ void prefetch_l2(const T* p, std::int64_t n) {
  if (p == nullptr || n <= 0) return;
  const auto first = reinterpret_cast<std::uintptr_t>(p) & ~std::uintptr_t{127};
  const auto end = reinterpret_cast<std::uintptr_t>(p + n);
  for (std::uintptr_t a = first + threadIdx.x * 128u; a < end; a += blockDim.x * 128u)
    asm volatile("prefetch.global.L2 [%0];" ::"l"(a));
}

/// Warp-aggregated increment of counter[o] (shared): one atomic per distinct owner and warp.
/// Every lane of the warp must call it (valid or not). Returns this lane's offset.
__device__ __forceinline__ unsigned long long warp_claim(unsigned long long* counter, int o,
                                                         bool valid) {
  const unsigned active = __ballot_sync(kFull, valid);
  if (!valid) return 0;
  const int lane = threadIdx.x & 31;
  const unsigned peers = __match_any_sync(active, o);
  const int leader = __ffs(peers) - 1;
  const unsigned rank = __popc(peers & ((1u << lane) - 1u));
  unsigned long long base = 0;
  if (lane == leader) base = atomicAdd(&counter[o], static_cast<unsigned long long>(__popc(peers)));
  base = __shfl_sync(peers, base, leader);
  return base + rank;
}

/// Staging kernels: threads per block, rows per thread per tile, most buckets of one pass.
constexpr int kStageThreads = 512;
constexpr int kMaxRegions = 1024;
constexpr int kStageRows = 4;

/// Shared memory of one staging block.
struct StageShared {
  cub::BlockScan<unsigned, kStageThreads>::TempStorage scan;
  unsigned off[kMaxRegions];  // counts, then the tile's offsets
  unsigned long long base[kMaxRegions];
  long long k[kStageThreads * kStageRows];
  double x[kStageThreads * kStageRows];
  double y[kStageThreads * kStageRows];
  unsigned short r[kStageThreads * kStageRows];
  int tile_start[kMaxRegions + 1];  // level 2: first tile of every region
};

/// Where stage_tile sends rows: region of a row = ((hash & mask) >> shift) & sub_mask, and with
/// owners > 1, owner_of(key, owners) * (sub_mask + 1) + that (the row shuffle's send buckets);
/// rows whose bucket is full go to the table (fslots, fmask) with global atomics.
struct TileTarget {
  std::uint64_t mask;
  int shift;
  unsigned sub_mask;
  int regions;
  int owners;
  unsigned long long* fslots;
  std::uint64_t fmask;
  int width;
  unsigned fields;
  int owner_bits = 0;  ///< owners > 1: owner_of(key, owners, owner_bits)
};

/// A TileTarget within one table (no owners): `buckets` buckets of the slot bits above `shift`,
/// full buckets into the table itself.
__host__ __device__ inline TileTarget table_target(std::uint64_t mask, int shift, int buckets,
                                                   unsigned long long* slots, int width,
                                                   unsigned fields) {
  return {mask, shift, static_cast<unsigned>(buckets - 1), buckets, 1, slots, mask, width, fields};
}

/// One tile: rows [base, min(n, base + tile)) of `src` (row_source.cuh's ColumnRows or
/// GeneratedRows) into the buckets of the regions of `tt`.
template <class Src, class OutKey>
__device__ __forceinline__ void stage_tile(StageShared& sh, const TileTarget& tt, const Src& src,
                                           std::int64_t n, std::int64_t base, OutKey* okey,
                                           double* ox, double* oy, std::int64_t cap,
                                           unsigned long long* cursor, int* overflow) {
  const std::uint64_t mask = tt.mask;
  const int shift = tt.shift;
  const unsigned sub_mask = tt.sub_mask;
  const int regions = tt.regions;
  const unsigned fields = tt.fields;
  constexpr int kTile = kStageThreads * kStageRows;
  constexpr int kPer = kMaxRegions / kStageThreads;  // regions scanned per thread
  const bool ry = (fields & kSumY) != 0;
  for (int q = threadIdx.x; q < regions; q += kStageThreads) sh.off[q] = 0;
  __syncthreads();
  long long k[kStageRows];
  double xv[kStageRows], yv[kStageRows];
  int r[kStageRows];
  unsigned pos[kStageRows];
#pragma unroll
  for (int u = 0; u < kStageRows; ++u) {
    const std::int64_t i = base + u * kStageThreads + threadIdx.x;
    const bool valid = i < n;
    k[u] = 0;
    xv[u] = 0.0;
    yv[u] = 0.0;
    if (valid) src.load(i, true, ry, k[u], xv[u], yv[u]);
    r[u] = valid ? static_cast<int>(((slot_hash(k[u]) & mask) >> shift) & sub_mask) : -1;
    if (tt.owners > 1 && valid)
      r[u] += owner_of(k[u], tt.owners, tt.owner_bits) * static_cast<int>(sub_mask + 1u);
  }
#pragma unroll
  for (int u = 0; u < kStageRows; ++u) pos[u] = r[u] >= 0 ? atomicAdd(&sh.off[r[u]], 1u) : 0u;
  __syncthreads();
  // Offsets of the regions inside the tile (exclusive scan), and their global runs.
  unsigned cnt[kPer];
  unsigned sum = 0;
#pragma unroll
  for (int e = 0; e < kPer; ++e) {
    const int q = threadIdx.x * kPer + e;
    cnt[e] = q < regions ? sh.off[q] : 0u;
    sum += cnt[e];
  }
  unsigned start = 0;
  cub::BlockScan<unsigned, kStageThreads>(sh.scan).ExclusiveSum(sum, start);
  __syncthreads();  // every count is read before offsets overwrite them
#pragma unroll
  for (int e = 0; e < kPer; ++e) {
    const int q = threadIdx.x * kPer + e;
    if (q < regions) {
      sh.off[q] = start;
      sh.base[q] = cnt[e] != 0 ? atomicAdd(&cursor[q], static_cast<unsigned long long>(cnt[e])) : 0;
    }
    start += cnt[e];
  }
  __syncthreads();
#pragma unroll
  for (int u = 0; u < kStageRows; ++u) {
    if (r[u] < 0) continue;
    const unsigned j = sh.off[r[u]] + pos[u];
    sh.k[j] = k[u];
    sh.x[j] = xv[u];
    if (ry) sh.y[j] = yv[u];
    sh.r[j] = static_cast<unsigned short>(r[u]);
  }
  __syncthreads();
  const int rows = static_cast<int>(min(static_cast<std::int64_t>(kTile), n - base));
  for (int j = threadIdx.x; j < rows; j += kStageThreads) {
    const int q = sh.r[j];
    const unsigned long long p = sh.base[q] + static_cast<unsigned long long>(j - sh.off[q]);
    if (p < static_cast<unsigned long long>(cap)) {
      const std::int64_t o = static_cast<std::int64_t>(q) * cap + static_cast<std::int64_t>(p);
      okey[o] = static_cast<OutKey>(sh.k[j]);
      ox[o] = sh.x[j];
      if (ry) oy[o] = sh.y[j];
    } else {
      const double xj = sh.x[j], yj = ry ? sh.y[j] : 0.0;
      unsigned long long* sl = upsert_slot(tt.fslots, tt.fmask, tt.width, sh.k[j], overflow);
      if (sl != nullptr) accumulate(sl, fields, 1ull, xj, yj, xj * xj, xj, xj);
    }
  }
  __syncthreads();  // the tile's shared copies are reused by the next tile
}

/// Tiles of `nseg` segments (rows each), kStageRows * kStageThreads rows per tile: writes the
/// first tile of every segment to tile_start[0..nseg] (a block scan; nseg <= kMaxRegions) and
/// returns the number of tiles. Every thread of the block must call it.
__device__ __forceinline__ int segment_tiles(
    typename cub::BlockScan<unsigned, kStageThreads>::TempStorage& scan, int* tile_start,
    const std::int64_t* __restrict__ seg_rows, int nseg) {
  constexpr int kPer = kMaxRegions / kStageThreads;
  constexpr std::int64_t kTile = kStageThreads * kStageRows;
  unsigned c[kPer];
  unsigned sum = 0;
#pragma unroll
  for (int e = 0; e < kPer; ++e) {
    const int q = threadIdx.x * kPer + e;
    c[e] = q < nseg ? static_cast<unsigned>((seg_rows[q] + kTile - 1) / kTile) : 0u;
    sum += c[e];
  }
  unsigned start = 0, total = 0;
  cub::BlockScan<unsigned, kStageThreads>(scan).ExclusiveSum(sum, start, total);
#pragma unroll
  for (int e = 0; e < kPer; ++e) {
    const int q = threadIdx.x * kPer + e;
    if (q < nseg) tile_start[q] = static_cast<int>(start);
    start += c[e];
  }
  if (threadIdx.x == 0) tile_start[nseg] = static_cast<int>(total);
  __syncthreads();
  return static_cast<int>(total);
}

/// The segment holding tile t (t below the total): the last one whose first tile is <= t
/// (empty segments share their first tile with the next one, so they are skipped).
__device__ __forceinline__ int segment_of(const int* tile_start, int nseg, int t) {
  int lo = 0, hi = nseg - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (tile_start[mid] <= t)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

}  // namespace sb::groupby::gpu::detail
