// GPU aggregation of groupby: privatised shared-memory tables for low cardinality, a global
// open-addressing hash table for high cardinality (see gpu_kernels.cuh).
#include <cub/block/block_scan.cuh>

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "groupby/gpu_kernels.cuh"
#include "groupby/group_table.hpp"
#include "scalebench/gpu_error.cuh"

namespace sb::groupby::gpu {

namespace {

constexpr unsigned kFull = 0xffffffffu;
constexpr int kPrivThreads = 128;  // threads of the privatised kernel (columns of its arrays)
constexpr int kSharedThreads = 256;
constexpr int kMaxPrivateDomain = 32;
constexpr unsigned long long kEmptyKey = 0x8000000000000000ull;  // GroupTable::kEmpty's bits

int current_device() {
  int dev = 0;
  SB_CUDA_CHECK(cudaGetDevice(&dev));
  return dev;
}

int device_sms() {
  int sms = 0;
  SB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, current_device()));
  return sms;
}

/// Opts `kernel` in to `bytes` of dynamic shared memory above the default 48 KB on the current
/// device. The attribute belongs to the device, so a process that drives several GPUs (the
/// benchmarks) sets it on each: once per device, kernel and size.
void opt_in_shared(const void* kernel, std::size_t bytes) {
  if (bytes <= 48 * 1024) return;
  static std::mutex m;
  static std::map<std::pair<int, const void*>, std::size_t> opted;
  const int dev = current_device();
  const std::lock_guard<std::mutex> lock(m);
  std::size_t& done = opted[{dev, kernel}];
  if (bytes > done) {
    SB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(bytes)));
    done = bytes;
  }
}

int sum_field_count(unsigned fields) {
  return ((fields & kSumX) ? 1 : 0) + ((fields & kSumY) ? 1 : 0) + ((fields & kSumSqX) ? 1 : 0);
}

__device__ __forceinline__ double warp_sum(double v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(kFull, v, o);
  return v;
}

// ---- low cardinality -------------------------------------------------------------------------

/// Which sums a dense kernel keeps and their slots (sum x, then sum y, then sum x^2).
struct FieldSlots {
  bool fx, fy, fxx;
  int nf, iy, ixx;
  __device__ explicit FieldSlots(unsigned fields)
      : fx((fields & kSumX) != 0),
        fy((fields & kSumY) != 0),
        fxx((fields & kSumSqX) != 0),
        nf((fx ? 1 : 0) + (fy ? 1 : 0) + (fxx ? 1 : 0)),
        iy(fx ? 1 : 0),
        ixx((fx ? 1 : 0) + (fy ? 1 : 0)) {}
};

/// Per-thread private counters and sums in shared memory ([field][D][threads] doubles, then
/// [D][threads] uint32 counts); one partial per block.
template <class K>
__global__ void __launch_bounds__(kPrivThreads)
    dense_private_kernel(const K* __restrict__ keys, const double* __restrict__ x,
                         const double* __restrict__ y, std::int64_t n, std::int64_t lo, int D,
                         unsigned fields, double* __restrict__ partials, int words) {
  extern __shared__ double smem_d[];
  const FieldSlots fs(fields);
  const bool fx = fs.fx, fy = fs.fy, fxx = fs.fxx;
  const int nf = fs.nf, ix = 0, iy = fs.iy, ixx = fs.ixx;
  constexpr int T = kPrivThreads;
  double* sums = smem_d;
  auto* cnt = reinterpret_cast<unsigned*>(smem_d + static_cast<std::size_t>(nf) * D * T);
  const int t = threadIdx.x;
  for (int d = 0; d < D; ++d) {
    cnt[d * T + t] = 0u;
    for (int f = 0; f < nf; ++f) sums[(f * D + d) * T + t] = 0.0;
  }
  auto add = [&](K key, double xv, double yv) {
    const int d = static_cast<int>(static_cast<std::int64_t>(key) - lo);
    if (static_cast<unsigned>(d) >= static_cast<unsigned>(D)) return;  // not in the domain
    cnt[d * T + t] += 1u;
    if (fx) sums[(ix * D + d) * T + t] += xv;
    if (fxx) sums[(ixx * D + d) * T + t] += xv * xv;
    if (fy) sums[(iy * D + d) * T + t] += yv;
  };
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * T;
  std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * T + t;
  // Four rows in flight per thread (loads first), then the tail.
  for (; i + 3 * stride < n; i += 4 * stride) {
    K k[4];
    double xv[4] = {0, 0, 0, 0};
    double yv[4] = {0, 0, 0, 0};
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      k[u] = keys[i + u * stride];
      if (fx || fxx) xv[u] = x[i + u * stride];
      if (fy) yv[u] = y[i + u * stride];
    }
#pragma unroll
    for (int u = 0; u < 4; ++u) add(k[u], xv[u], yv[u]);
  }
  for (; i < n; i += stride) add(keys[i], (fx || fxx) ? x[i] : 0.0, fy ? y[i] : 0.0);
  __syncthreads();
  const int warp = t >> 5;
  const int lane = t & 31;
  for (int p = warp; p < words; p += T / 32) {
    double s = 0.0;
    if (p < D) {
      for (int j = lane; j < T; j += 32) s += static_cast<double>(cnt[p * T + j]);
    } else {
      for (int j = lane; j < T; j += 32) s += sums[(p - D) * T + j];
    }
    s = warp_sum(s);
    if (lane == 0) partials[static_cast<std::size_t>(blockIdx.x) * words + p] = s;
  }
}

/// One shared-memory table of D slots per block, shared atomics; one partial per block.
template <class K>
__global__ void __launch_bounds__(kSharedThreads)
    dense_shared_kernel(const K* __restrict__ keys, const double* __restrict__ x,
                        const double* __restrict__ y, std::int64_t n, std::int64_t lo, int D,
                        unsigned fields, double* __restrict__ partials, int words) {
  extern __shared__ double smem_d[];
  const FieldSlots fs(fields);
  const bool fx = fs.fx, fy = fs.fy, fxx = fs.fxx;
  const int nf = fs.nf, ix = 0, iy = fs.iy, ixx = fs.ixx;
  double* sums = smem_d;
  auto* cnt = reinterpret_cast<unsigned*>(smem_d + static_cast<std::size_t>(nf) * D);
  for (int k = threadIdx.x; k < nf * D; k += blockDim.x) sums[k] = 0.0;
  for (int k = threadIdx.x; k < D; k += blockDim.x) cnt[k] = 0u;
  __syncthreads();
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const int d = static_cast<int>(static_cast<std::int64_t>(keys[i]) - lo);
    if (static_cast<unsigned>(d) >= static_cast<unsigned>(D)) continue;
    atomicAdd(&cnt[d], 1u);
    if (fx || fxx) {
      const double xv = x[i];
      if (fx) atomicAdd(&sums[ix * D + d], xv);
      if (fxx) atomicAdd(&sums[ixx * D + d], xv * xv);
    }
    if (fy) atomicAdd(&sums[iy * D + d], y[i]);
  }
  __syncthreads();
  for (int p = threadIdx.x; p < words; p += blockDim.x)
    partials[static_cast<std::size_t>(blockIdx.x) * words + p] =
        p < D ? static_cast<double>(cnt[p]) : sums[p - D];
}

/// acc[p] += sum over blocks of partials[b][p], blocks in order (deterministic).
__global__ void dense_reduce_kernel(const double* __restrict__ partials, int blocks, int words,
                                    double* __restrict__ acc) {
  for (int p = blockIdx.x * blockDim.x + threadIdx.x; p < words; p += gridDim.x * blockDim.x) {
    double s = 0.0;
    for (int b = 0; b < blocks; ++b) s += partials[static_cast<std::size_t>(b) * words + p];
    acc[p] += s;
  }
}

std::size_t private_smem(int D, int nf) {
  return static_cast<std::size_t>(D) * kPrivThreads * (sizeof(double) * nf + sizeof(unsigned));
}
std::size_t shared_smem(int D, int nf) {
  return static_cast<std::size_t>(D) * (sizeof(double) * nf + sizeof(unsigned));
}

template <class K>
void launch_dense(const DenseAgg& a, const K* keys, const ColumnPtrs& in, std::int64_t n,
                  cudaStream_t stream) {
  const int nf = sum_field_count(a.fields);
  int blocks = 0;
  if (a.domain <= kMaxPrivateDomain) {
    const std::size_t smem = private_smem(a.domain, nf);
    opt_in_shared(reinterpret_cast<const void*>(dense_private_kernel<K>), smem);
    const std::int64_t want = (n + kPrivThreads * 8 - 1) / (kPrivThreads * 8);
    blocks =
        static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(want, a.max_blocks)));
    dense_private_kernel<K><<<blocks, kPrivThreads, smem, stream>>>(
        keys, in.x, in.y, n, a.domain_lo, a.domain, a.fields, a.partials, a.words);
  } else {
    const std::size_t smem = shared_smem(a.domain, nf);
    opt_in_shared(reinterpret_cast<const void*>(dense_shared_kernel<K>), smem);
    const std::int64_t want = (n + kSharedThreads * 16 - 1) / (kSharedThreads * 16);
    blocks =
        static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(want, a.max_blocks)));
    dense_shared_kernel<K><<<blocks, kSharedThreads, smem, stream>>>(
        keys, in.x, in.y, n, a.domain_lo, a.domain, a.fields, a.partials, a.words);
  }
  SB_CUDA_CHECK_LAUNCH();
  const int rblocks = (a.words + 255) / 256;
  dense_reduce_kernel<<<rblocks, 256, 0, stream>>>(a.partials, blocks, a.words, a.acc);
  SB_CUDA_CHECK_LAUNCH();
}

// ---- high cardinality ------------------------------------------------------------------------

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

struct SlotPattern {
  unsigned long long w[8];
};

/// Every word of the table set to its slot pattern, the table seen as one flat array so that
/// a warp writes consecutive words.
__global__ void hash_clear_kernel(unsigned long long* __restrict__ slots, std::int64_t capacity,
                                  int width, SlotPattern pattern) {
  const std::int64_t words = capacity * width;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t w = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; w < words;
       w += stride)
    slots[w] = pattern.w[static_cast<int>(w % width)];
}

__global__ void hash_rows_kernel(unsigned long long* __restrict__ slots, std::uint64_t mask,
                                 int width, unsigned fields, const std::int64_t* __restrict__ keys,
                                 const double* __restrict__ x, const double* __restrict__ y,
                                 std::int64_t n, int* overflow) {
  const bool rx = (fields & (kSumX | kSumSqX | kMinX | kMaxX)) != 0;
  const bool ry = (fields & kSumY) != 0;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  // Four rows per thread at a time: their inputs and first probes are loaded before any update,
  // so four random slot reads are in flight per thread.
  for (; i + 3 * stride < n; i += 4 * stride) {
    long long k[4];
    double xv[4] = {0, 0, 0, 0};
    double yv[4] = {0, 0, 0, 0};
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      k[u] = keys[i + u * stride];
      if (rx) xv[u] = x[i + u * stride];
      if (ry) yv[u] = y[i + u * stride];
    }
    unsigned long long* home[4];
    long long cur[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      home[u] = slots + (slot_hash(k[u]) & mask) * static_cast<std::uint64_t>(width);
      cur[u] = __ldcg(reinterpret_cast<const long long*>(home[u]));
    }
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      unsigned long long* s =
          cur[u] == k[u] ? home[u] : upsert_slot(slots, mask, width, k[u], overflow);
      if (s != nullptr) accumulate(s, fields, 1ull, xv[u], yv[u], xv[u] * xv[u], xv[u], xv[u]);
    }
  }
  for (; i < n; i += stride) {
    const long long key = keys[i];
    const double xv = rx ? x[i] : 0.0;
    const double yv = ry ? y[i] : 0.0;
    unsigned long long* s = upsert_slot(slots, mask, width, key, overflow);
    if (s != nullptr) accumulate(s, fields, 1ull, xv, yv, xv * xv, xv, xv);
  }
}

__global__ void hash_records_kernel(unsigned long long* __restrict__ slots, std::uint64_t mask,
                                    int width, unsigned fields,
                                    const unsigned long long* __restrict__ recs, std::int64_t count,
                                    int* overflow) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    const unsigned long long* r = recs + i * width;
    double v[kMaxFields] = {0.0, 0.0, 0.0, INFINITY, -INFINITY};
    int w = 2;
    if (fields & kSumX) v[0] = __longlong_as_double(static_cast<long long>(r[w++]));
    if (fields & kSumY) v[1] = __longlong_as_double(static_cast<long long>(r[w++]));
    if (fields & kSumSqX) v[2] = __longlong_as_double(static_cast<long long>(r[w++]));
    if (fields & kMinX) v[3] = __longlong_as_double(static_cast<long long>(r[w++]));
    if (fields & kMaxX) v[4] = __longlong_as_double(static_cast<long long>(r[w++]));
    unsigned long long* s = upsert_slot(slots, mask, width, static_cast<long long>(r[0]), overflow);
    if (s != nullptr) accumulate(s, fields, r[1], v[0], v[1], v[2], v[3], v[4]);
  }
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

constexpr int kCompactThreads = 256;
constexpr int kMaxOwners = 64;

__global__ void __launch_bounds__(kCompactThreads)
    owner_count_kernel(const unsigned long long* __restrict__ slots, std::int64_t capacity,
                       int width, int owners, int owner_bits,
                       unsigned long long* __restrict__ counts) {
  __shared__ unsigned long long s_cnt[kMaxOwners];
  for (int o = threadIdx.x; o < owners; o += blockDim.x) s_cnt[o] = 0;
  __syncthreads();
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * blockDim.x; base < capacity;
       base += stride) {
    const std::int64_t i = base + threadIdx.x;
    const long long key =
        i < capacity ? static_cast<long long>(slots[i * width]) : static_cast<long long>(kEmptyKey);
    const bool valid = static_cast<unsigned long long>(key) != kEmptyKey;
    const int o = valid ? owner_of(key, owners, owner_bits) : 0;
    (void)warp_claim(s_cnt, o, valid);
  }
  __syncthreads();
  for (int o = threadIdx.x; o < owners; o += blockDim.x)
    if (s_cnt[o] != 0) atomicAdd(&counts[o], s_cnt[o]);
}

__global__ void __launch_bounds__(kCompactThreads)
    owner_scatter_kernel(const unsigned long long* __restrict__ slots, std::int64_t capacity,
                         int width, int owners, int owner_bits,
                         unsigned long long* __restrict__ cursors,
                         unsigned long long* __restrict__ out) {
  __shared__ unsigned long long s_cnt[kMaxOwners];
  __shared__ unsigned long long s_base[kMaxOwners];
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * blockDim.x; base < capacity;
       base += stride) {
    for (int o = threadIdx.x; o < owners; o += blockDim.x) s_cnt[o] = 0;
    __syncthreads();
    const std::int64_t i = base + threadIdx.x;
    const long long key =
        i < capacity ? static_cast<long long>(slots[i * width]) : static_cast<long long>(kEmptyKey);
    const bool valid = static_cast<unsigned long long>(key) != kEmptyKey;
    const int o = valid ? owner_of(key, owners, owner_bits) : 0;
    const unsigned long long mine = warp_claim(s_cnt, o, valid);
    __syncthreads();
    for (int q = threadIdx.x; q < owners; q += blockDim.x)
      s_base[q] = s_cnt[q] != 0 ? atomicAdd(&cursors[q], s_cnt[q]) : 0;
    __syncthreads();
    if (valid) {
      const unsigned long long* src = slots + i * width;
      unsigned long long* dst = out + (s_base[o] + mine) * static_cast<unsigned long long>(width);
      for (int w = 0; w < width; ++w) dst[w] = src[w];
    }
    __syncthreads();
  }
}

constexpr int kStageThreads = 512;
constexpr int kMaxRegions = 1024;

constexpr int kStageRows = 4;      // rows per thread per tile
constexpr int kSendBuckets = 128;  // send buckets of the row shuffle, where the table allows

/// Appends rows to the buckets of their regions, a tile of kStageRows * kStageThreads rows at a
/// time, the way radix-sort partitions do it: the tile is counted by region in shared memory,
/// the counts are scanned, the rows are placed region by region in a shared-memory copy of the
/// tile, each region's run is reserved with one global atomic, and consecutive threads then
/// write consecutive rows of a run. A warp's stores thus land on a few lines instead of one
/// line per row (the direct scatter measured about 0.9 TB/s on an H200).
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

/// One tile: rows [base, min(n, base + tile)) of (keys, x, y) into the buckets of the regions
/// of `tt`.
template <class Key, class OutKey = std::int64_t>
__device__ __forceinline__ void stage_tile(StageShared& sh, const TileTarget& tt, const Key* keys,
                                           const double* x, const double* y, std::int64_t n,
                                           std::int64_t base, OutKey* skey, double* sx, double* sy,
                                           std::int64_t rcap, unsigned long long* cursor,
                                           int* overflow) {
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
    k[u] = valid ? static_cast<long long>(keys[i]) : 0;
    xv[u] = valid ? x[i] : 0.0;
    yv[u] = (valid && ry) ? y[i] : 0.0;
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
    if (p < static_cast<unsigned long long>(rcap)) {
      const std::int64_t o = static_cast<std::int64_t>(q) * rcap + static_cast<std::int64_t>(p);
      skey[o] = static_cast<OutKey>(sh.k[j]);
      sx[o] = sh.x[j];
      if (ry) sy[o] = sh.y[j];
    } else {
      const double xj = sh.x[j], yj = ry ? sh.y[j] : 0.0;
      unsigned long long* sl = upsert_slot(tt.fslots, tt.fmask, tt.width, sh.k[j], overflow);
      if (sl != nullptr) accumulate(sl, fields, 1ull, xj, yj, xj * xj, xj, xj);
    }
  }
  __syncthreads();  // the tile's shared copies are reused by the next tile
}

/// Appends rows to the buckets of their regions, a tile of kStageRows * kStageThreads rows at a
/// time, the way radix-sort partitions do it: the tile is counted by region in shared memory,
/// the counts are scanned, the rows are placed region by region in a shared-memory copy of the
/// tile, each region's run is reserved with one global atomic, and consecutive threads then
/// write consecutive rows of a run. A warp's stores thus land on a few lines instead of one
/// line per row (a direct per-row scatter measured about 0.9 TB/s on an H200, this 1.7 TB/s).
template <class OutKey>
__global__ void __launch_bounds__(kStageThreads)
    stage_rows_kernel(const TileTarget tt, const std::int64_t* __restrict__ keys,
                      const double* __restrict__ x, const double* __restrict__ y, std::int64_t n,
                      OutKey* __restrict__ skey, double* __restrict__ sx, double* __restrict__ sy,
                      std::int64_t rcap, unsigned long long* __restrict__ cursor, int* overflow) {
  extern __shared__ unsigned char stage_smem[];
  StageShared& sh = *reinterpret_cast<StageShared*>(stage_smem);
  constexpr std::int64_t kTile = kStageThreads * kStageRows;
  for (std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * kTile; base < n;
       base += static_cast<std::int64_t>(gridDim.x) * kTile)
    stage_tile(sh, tt, keys, x, y, n, base, skey, sx, sy, rcap, cursor, overflow);
}

/// The second level in one launch: every region's bucket (first level; keys of type Key) into
/// the buckets of its `per` slices. Blocks take tiles of all regions in turn (tile -> region by the
/// prefix of tiles per region, computed by every block from the first level's cursors). At most
/// 64 registers, so that two blocks share an SM as with the other staging kernels (the 76 it
/// took unbounded left one block per SM and DRAM at 38% of its bandwidth; ncu, one H200,
/// 2026-11-22).
template <class Key>
__global__ void __launch_bounds__(kStageThreads, 2)
    restage_kernel(unsigned long long* __restrict__ slots, std::uint64_t mask, int width,
                   unsigned fields, int slice_bits, int per, int regions,
                   const Key* __restrict__ keys, const double* __restrict__ x,
                   const double* __restrict__ y, std::int64_t rcap,
                   const unsigned long long* __restrict__ rcursor, std::int64_t* __restrict__ skey,
                   double* __restrict__ sx, double* __restrict__ sy, std::int64_t scap,
                   unsigned long long* __restrict__ scursor, int* overflow) {
  extern __shared__ unsigned char stage_smem[];
  StageShared& sh = *reinterpret_cast<StageShared*>(stage_smem);
  constexpr std::int64_t kTile = kStageThreads * kStageRows;
  if (threadIdx.x == 0) {
    int t = 0;
    for (int q = 0; q < regions; ++q) {
      sh.tile_start[q] = t;
      const auto rows = min(static_cast<std::int64_t>(rcursor[q]), rcap);
      t += static_cast<int>((rows + kTile - 1) / kTile);
    }
    sh.tile_start[regions] = t;
  }
  __syncthreads();
  const int tiles = sh.tile_start[regions];
  for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
    int lo = 0, hi = regions - 1;  // the region whose tiles hold t
    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      if (sh.tile_start[mid] <= t)
        lo = mid;
      else
        hi = mid - 1;
    }
    const int q = lo;
    const std::int64_t rows = min(static_cast<std::int64_t>(rcursor[q]), rcap);
    const std::int64_t in = static_cast<std::int64_t>(q) * rcap;
    const std::int64_t out = static_cast<std::int64_t>(q) * per * scap;
    const TileTarget tt = table_target(mask, slice_bits, per, slots, width, fields);
    stage_tile(sh, tt, keys + in, x + in, y != nullptr ? y + in : nullptr, rows,
               static_cast<std::int64_t>(t - sh.tile_start[q]) * kTile, skey + out, sx + out,
               sy != nullptr ? sy + out : nullptr, scap,
               scursor + static_cast<std::int64_t>(q) * per, overflow);
  }
}

// ---- the row shuffle (multi-GPU high cardinality) --------------------------------------------

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

/// The type of a packed key (gpu_kernels.cuh: RowShuffle::narrow_keys).
template <bool kNarrow>
using PackedKey = std::conditional_t<kNarrow, std::uint32_t, std::uint64_t>;

/// Packs the send buckets (their keys already of the packed width): segment s copies rows[s]
/// rows from bucket offset src[s] to the packed arrays: keys from key offset keyoff[s], x from word
/// dst[s] and, when present, y from dst[s] + plane[s].
template <bool kNarrow>
__global__ void __launch_bounds__(kStageThreads)
    pack_kernel(int nseg, const std::int64_t* __restrict__ src,
                const std::int64_t* __restrict__ rows, const std::int64_t* __restrict__ keyoff,
                const std::int64_t* __restrict__ dst, const std::int64_t* __restrict__ plane,
                const PackedKey<kNarrow>* __restrict__ key, const double* __restrict__ x,
                const double* __restrict__ y, std::uint64_t* __restrict__ out) {
  __shared__ typename cub::BlockScan<unsigned, kStageThreads>::TempStorage scan;
  __shared__ int tile_start[kMaxRegions + 1];
  constexpr std::int64_t kTile = kStageThreads * kStageRows;
  const int tiles = segment_tiles(scan, tile_start, rows, nseg);
  for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
    const int q = segment_of(tile_start, nseg, t);
    const std::int64_t base = static_cast<std::int64_t>(t - tile_start[q]) * kTile;
    const auto n = static_cast<int>(min(kTile, rows[q] - base));
    const std::int64_t i0 = src[q] + base;
    PackedKey<kNarrow>* ok = reinterpret_cast<PackedKey<kNarrow>*>(out) + keyoff[q] + base;
    auto* ox = reinterpret_cast<double*>(out + dst[q] + base);
    double* oy = ox + plane[q];
    for (int j = threadIdx.x; j < n; j += kStageThreads) {
      ok[j] = key[i0 + j];
      ox[j] = x[i0 + j];
      if (y != nullptr) oy[j] = y[i0 + j];
    }
  }
}

/// The receiving side's staging: segment s (rows[s] received rows, keys from key offset
/// keyoff[s], x from word off[s], all of region region[s] of the owner's table) into the slice
/// buckets of that region (tt cuts a region's slots into its slices).
template <bool kNarrow>
__global__ void __launch_bounds__(kStageThreads)
    restage_segments_kernel(const TileTarget tt, int nseg, const std::int64_t* __restrict__ keyoff,
                            const std::int64_t* __restrict__ off,
                            const std::int64_t* __restrict__ rows,
                            const std::int64_t* __restrict__ region,
                            const std::int64_t* __restrict__ plane,
                            const std::uint64_t* __restrict__ recv, bool with_y,
                            std::int64_t* __restrict__ skey, double* __restrict__ sx,
                            double* __restrict__ sy, std::int64_t scap,
                            unsigned long long* __restrict__ scursor, int* overflow) {
  extern __shared__ unsigned char stage_smem[];
  StageShared& sh = *reinterpret_cast<StageShared*>(stage_smem);
  constexpr std::int64_t kTile = kStageThreads * kStageRows;
  const int tiles = segment_tiles(sh.scan, sh.tile_start, rows, nseg);
  const std::int64_t per = tt.regions;
  for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
    const int q = segment_of(sh.tile_start, nseg, t);
    const auto* keys = reinterpret_cast<const PackedKey<kNarrow>*>(recv) + keyoff[q];
    const auto* x = reinterpret_cast<const double*>(recv + off[q]);
    const double* y = with_y ? x + plane[q] : nullptr;
    const std::int64_t out = region[q] * per * scap;
    const int first = sh.tile_start[q];
    __syncthreads();  // tile_start is read before stage_tile reuses the scan storage
    stage_tile(sh, tt, keys, x, y, rows[q], static_cast<std::int64_t>(t - first) * kTile,
               skey + out, sx + out, sy != nullptr ? sy + out : nullptr, scap,
               scursor + region[q] * per, overflow);
  }
}

/// Elements [lo, hi) of src to dst by one block, 16-byte words in the middle (src + lo and
/// dst + lo share their alignment modulo 16 bytes).
template <class T>
__device__ __forceinline__ void copy_run(const T* __restrict__ src, T* __restrict__ dst,
                                         std::int64_t lo, std::int64_t hi) {
  constexpr std::int64_t kV = 16 / sizeof(T);  // elements per 16-byte word
  const std::int64_t head = min(hi, (lo + kV - 1) / kV * kV);
  if (threadIdx.x < head - lo) dst[lo + threadIdx.x] = src[lo + threadIdx.x];
  const std::int64_t words = (hi - head) / kV;
  const auto* s2 = reinterpret_cast<const ulonglong2*>(src + head);
  auto* d2 = reinterpret_cast<ulonglong2*>(dst + head);
  constexpr int kU = 4;
  std::int64_t j = threadIdx.x;
  for (; j + (kU - 1) * kStageThreads < words; j += kU * kStageThreads) {
    ulonglong2 v[kU];
#pragma unroll
    for (int u = 0; u < kU; ++u) v[u] = __ldg(s2 + j + u * kStageThreads);
#pragma unroll
    for (int u = 0; u < kU; ++u) d2[j + u * kStageThreads] = v[u];
  }
  for (; j < words; j += kStageThreads) d2[j] = __ldg(s2 + j);
  const std::int64_t tail = head + words * kV;
  if (threadIdx.x < hi - tail) dst[tail + threadIdx.x] = src[tail + threadIdx.x];
}

/// Where shuffle_push's planes lie, in 8-byte words: the send buckets' key plane is keys_src
/// words and each value plane rows_src; a landing block's key plane keys_dst words and each
/// value plane rows_dst (RowShuffle::bucket_key_words, plane_rows, landing_block).
struct PushPlanes {
  std::int64_t keys_src, rows_src, keys_dst, rows_dst;
};

/// The peer exchange's copy (shuffle_push): for every other owner o and region r, rows
/// [prev, cur) of bucket (o, r) (counts capped at rcap; prev null: 0) in every plane, from this
/// worker's buckets into block `me` of owner o's landing area (another GPU's memory, mapped;
/// stores cross NVLink). Each block takes (owner, region, plane) items in turn, the owners in
/// the order me + 1, me + 2, ... (mod owners): the workers push in step, so at any moment each
/// owner receives from one source instead of every source starting with owner 0 (the order of
/// an all-to-all's rounds). Keys are 32-bit words when `narrow`; every plane and bucket starts
/// 16-byte aligned (rcap is a multiple of 32).
__global__ void __launch_bounds__(kStageThreads)
    push_rows_kernel(const std::uint64_t* __restrict__ buckets, std::uint64_t* const* dests,
                     const unsigned long long* __restrict__ prev,
                     const unsigned long long* __restrict__ cur, int me, int owners, int regions,
                     int planes, bool narrow, std::int64_t rcap, std::int64_t block,
                     PushPlanes pl) {
  const int items = (owners - 1) * regions * planes;
  const auto cap = static_cast<unsigned long long>(rcap);
  for (int it = blockIdx.x; it < items; it += gridDim.x) {
    const int z = it % planes;
    const int q = it / planes;  // (round, region)
    const int o = (me + 1 + q / regions) % owners;
    const int r = q % regions;
    const int b = o * regions + r;  // bucket (owner, region)
    const unsigned long long c1 = cur[b] < cap ? cur[b] : cap;
    const unsigned long long c0 = prev == nullptr ? 0ull : (prev[b] < cap ? prev[b] : cap);
    if (c1 <= c0) continue;
    const auto lo = static_cast<std::int64_t>(c0);
    const auto hi = static_cast<std::int64_t>(c1);
    std::uint64_t* dst = dests[o] + block * me;
    if (z == 0 && narrow) {
      copy_run(reinterpret_cast<const std::uint32_t*>(buckets) + b * rcap,
               reinterpret_cast<std::uint32_t*>(dst) + r * rcap, lo, hi);
    } else if (z == 0) {
      copy_run(buckets + b * rcap, dst + r * rcap, lo, hi);
    } else {
      copy_run(buckets + pl.keys_src + (z - 1) * pl.rows_src + b * rcap,
               dst + pl.keys_dst + (z - 1) * pl.rows_dst + r * rcap, lo, hi);
    }
  }
}

constexpr int kSliceThreads = 512;
constexpr std::size_t kSliceTableBytes = 50 * 1024;  // the slice's slots
constexpr int kSliceMaxPer = 4;                      // slots scanned per thread

/// Dynamic shared memory of slice_aggregate_kernel for slices of 2^slice_bits slots and
/// buckets of `cap` rows.
std::size_t slice_shared_bytes(int slice_bits, int width, std::int64_t cap) {
  const std::size_t slots = std::size_t{1} << slice_bits;
  return slots * static_cast<std::size_t>(width) * 8 + slots * 8 +
         static_cast<std::size_t>(cap) * 4;
}

/// One block per slice of 2^slice_bits slots. The slice is loaded into shared memory; every row
/// of the slice's bucket finds or inserts its key there (64-bit compare-and-swap, the only
/// atomic on a slot) and is counted per slot; the rows are then ordered by slot (a counting
/// sort of 16-bit row numbers), and one thread per slot folds its rows in registers and
/// updates the slot without atomics (shared-memory fp64 adds and 64-bit min/max would be
/// compare-and-swap loops). The slice is written back. Rows whose probe runs past the end of
/// the slice are counted in spilled[slice] and left for spill_rows_kernel.
__global__ void __launch_bounds__(kSliceThreads)
    slice_aggregate_kernel(unsigned long long* __restrict__ slots, std::uint64_t mask, int width,
                           unsigned fields, int slice_bits, const std::int64_t* __restrict__ keys,
                           const double* __restrict__ x, const double* __restrict__ y,
                           std::int64_t cap, const unsigned long long* __restrict__ cursor,
                           unsigned long long* __restrict__ spilled, unsigned slice0) {
  extern __shared__ unsigned long long s_slice[];
  __shared__ unsigned s_nspill;
  using Scan = cub::BlockScan<unsigned, kSliceThreads>;
  __shared__ typename Scan::TempStorage scan_tmp;
  const int slots_per_slice = 1 << slice_bits;
  auto* s_cnt = reinterpret_cast<unsigned*>(s_slice + slots_per_slice * width);
  unsigned* s_cur = s_cnt + slots_per_slice;
  auto* s_slot = reinterpret_cast<unsigned short*>(s_cur + slots_per_slice);
  unsigned short* s_order = s_slot + cap;
  const std::uint64_t slice = slice0 + blockIdx.x;
  const std::uint64_t first = slice << slice_bits;
  unsigned long long* g = slots + first * static_cast<std::uint64_t>(width);
  const int words = slots_per_slice * width;
  {
    constexpr int kU = 8;  // words in flight per thread
    int j = threadIdx.x;
    for (; j + (kU - 1) * kSliceThreads < words; j += kU * kSliceThreads) {
      unsigned long long v[kU];
#pragma unroll
      for (int u = 0; u < kU; ++u) v[u] = __ldcg(g + j + u * kSliceThreads);
#pragma unroll
      for (int u = 0; u < kU; ++u) s_slice[j + u * kSliceThreads] = v[u];
    }
    for (; j < words; j += kSliceThreads) s_slice[j] = __ldcg(g + j);
  }
  for (int p = threadIdx.x; p < slots_per_slice; p += kSliceThreads) s_cnt[p] = 0;
  if (threadIdx.x == 0) s_nspill = 0;
  __syncthreads();
  const int n = static_cast<int>(min(static_cast<std::int64_t>(cursor[slice]), cap));
  const std::int64_t off = static_cast<std::int64_t>(slice) * cap;
  const std::int64_t* kin = keys + off;
  const double* xin = x + off;
  const bool ry = (fields & kSumY) != 0;
  const double* yin = ry ? y + off : nullptr;
  // A: every key to its slot.
#pragma unroll 4
  for (int i = threadIdx.x; i < n; i += kSliceThreads) {
    const long long k = kin[i];
    int hit = -1;
    for (int p = static_cast<int>((slot_hash(k) & mask) - first); p < slots_per_slice; ++p) {
      unsigned long long* c = s_slice + p * width;
      const unsigned long long cur = *reinterpret_cast<volatile unsigned long long*>(c);
      if (cur == static_cast<unsigned long long>(k)) {
        hit = p;
        break;
      }
      if (cur == kEmptyKey) {
        const unsigned long long prev = atomicCAS(c, kEmptyKey, static_cast<unsigned long long>(k));
        if (prev == kEmptyKey || prev == static_cast<unsigned long long>(k)) {
          hit = p;
          break;
        }
      }
    }
    s_slot[i] = hit < 0 ? 0xFFFFu : static_cast<unsigned short>(hit);
    if (hit >= 0) {
      atomicAdd(&s_cnt[hit], 1u);
    } else {
      atomicAdd(&s_nspill, 1u);
    }
  }
  __syncthreads();
  // B: first row of every slot (exclusive scan of the counts).
  {
    const int per = slots_per_slice / kSliceThreads;  // 1..kSliceMaxPer (checked on the host)
    unsigned c[kSliceMaxPer];
    unsigned sum = 0;
#pragma unroll
    for (int e = 0; e < kSliceMaxPer; ++e) {
      c[e] = e < per ? s_cnt[threadIdx.x * per + e] : 0u;
      sum += c[e];
    }
    unsigned start = 0;
    Scan(scan_tmp).ExclusiveSum(sum, start);
#pragma unroll
    for (int e = 0; e < kSliceMaxPer; ++e) {
      if (e < per) s_cur[threadIdx.x * per + e] = start;
      start += c[e];
    }
  }
  __syncthreads();
  // C: row numbers ordered by slot.
  for (int i = threadIdx.x; i < n; i += kSliceThreads) {
    const unsigned p = s_slot[i];
    if (p != 0xFFFFu) s_order[atomicAdd(&s_cur[p], 1u)] = static_cast<unsigned short>(i);
  }
  __syncthreads();
  // D: one thread per slot folds its rows (s_cur[p] is now the end of slot p's rows).
  for (int p = threadIdx.x; p < slots_per_slice; p += kSliceThreads) {
    const unsigned c = s_cnt[p];
    if (c == 0) continue;
    const unsigned end = s_cur[p];
    double sx = 0.0, sy = 0.0, sxx = 0.0, mn = INFINITY, mx = -INFINITY;
    for (unsigned j = end - c; j < end; ++j) {
      const int i = s_order[j];
      const double xv = xin[i];
      sx += xv;
      sxx += xv * xv;
      mn = fmin(mn, xv);
      mx = fmax(mx, xv);
      if (ry) sy += yin[i];
    }
    unsigned long long* slot = s_slice + p * width;
    slot[1] += c;
    int w = 2;
    auto add = [&](double v) {
      double* f = reinterpret_cast<double*>(slot + w++);
      *f += v;
    };
    if (fields & kSumX) add(sx);
    if (fields & kSumY) add(sy);
    if (fields & kSumSqX) add(sxx);
    if (fields & kMinX) {
      double* f = reinterpret_cast<double*>(slot + w++);
      *f = fmin(*f, mn);
    }
    if (fields & kMaxX) {
      double* f = reinterpret_cast<double*>(slot + w++);
      *f = fmax(*f, mx);
    }
  }
  __syncthreads();
  for (int j = threadIdx.x; j < words; j += kSliceThreads) g[j] = s_slice[j];
  if (threadIdx.x == 0) spilled[slice] = s_nspill;
}

/// The rows slice_aggregate_kernel could not place, into the global table (one block per
/// slice; slices without spills return at once). A row spilled exactly when, in the written-back
/// slice, every slot from its home to the slice's end holds another key (slots only fill up),
/// so the rows are told apart without a list.
__global__ void spill_rows_kernel(unsigned long long* __restrict__ slots, std::uint64_t mask,
                                  int width, unsigned fields, int slice_bits,
                                  const std::int64_t* __restrict__ keys,
                                  const double* __restrict__ x, const double* __restrict__ y,
                                  std::int64_t cap, const unsigned long long* __restrict__ cursor,
                                  const unsigned long long* __restrict__ spilled, int* overflow,
                                  unsigned slice0) {
  const std::int64_t slice = static_cast<std::int64_t>(slice0) + blockIdx.x;
  if (spilled[slice] == 0) return;
  const int slots_per_slice = 1 << slice_bits;
  const std::uint64_t first = static_cast<std::uint64_t>(slice) << slice_bits;
  const std::int64_t n = min(static_cast<std::int64_t>(cursor[slice]), cap);
  const bool ry = (fields & kSumY) != 0;
  for (std::int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const std::int64_t o = slice * cap + i;
    const long long k = keys[o];
    bool placed = false;
    for (int p = static_cast<int>((slot_hash(k) & mask) - first); p < slots_per_slice; ++p) {
      const unsigned long long cur = __ldcg(slots + (first + static_cast<std::uint64_t>(p)) *
                                                        static_cast<std::uint64_t>(width));
      if (cur == static_cast<unsigned long long>(k) || cur == kEmptyKey) {
        placed = true;
        break;
      }
    }
    if (placed) continue;
    const double xv = x[o];
    const double yv = ry ? y[o] : 0.0;
    unsigned long long* s = upsert_slot(slots, mask, width, k, overflow);
    if (s != nullptr) accumulate(s, fields, 1ull, xv, yv, xv * xv, xv, xv);
  }
}

/// The checksums of one record into v: {groups, count, sum x, sum y, min x, max x}.
__device__ __forceinline__ void summary_add(double* v, const unsigned long long* r,
                                            unsigned fields) {
  v[0] += 1.0;
  v[1] += static_cast<double>(r[1]);
  int w = 2;
  if (fields & kSumX) v[2] += __longlong_as_double(static_cast<long long>(r[w++]));
  if (fields & kSumY) v[3] += __longlong_as_double(static_cast<long long>(r[w++]));
  if (fields & kSumSqX) ++w;
  if (fields & kMinX) v[4] += __longlong_as_double(static_cast<long long>(r[w++]));
  if (fields & kMaxX) v[5] += __longlong_as_double(static_cast<long long>(r[w++]));
}

/// Adds the block's per-thread checksums v to out[0..5] (one atomic per value and block). Every
/// thread of the block must call it.
__device__ __forceinline__ void summary_flush(const double* v, double* out) {
  __shared__ double s[6][32];
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  for (int k = 0; k < 6; ++k) {
    const double t = warp_sum(v[k]);
    if (lane == 0) s[k][warp] = t;
  }
  __syncthreads();
  if (warp == 0) {
    const int nw = blockDim.x >> 5;
    for (int k = 0; k < 6; ++k) {
      double t = lane < nw ? s[k][lane] : 0.0;
      t = warp_sum(t);
      if (lane == 0 && t != 0.0) atomicAdd(&out[k], t);
    }
  }
}

/// Compaction and checksums in one pass (hash_finish): the occupied slots as records to `out`
/// (block-aggregated cursor, status->records), their checksums to status->sum, and the table's
/// overflow flag copied to status->overflow by block 0 (every update of the table precedes
/// this kernel on the stream).
__global__ void __launch_bounds__(kCompactThreads)
    compact_summary_kernel(const unsigned long long* __restrict__ slots, std::int64_t capacity,
                           int width, unsigned fields, const int* overflow,
                           unsigned long long* __restrict__ out, TableStatus* status) {
  __shared__ unsigned long long s_cnt[1];
  __shared__ unsigned long long s_base;
  double v[6] = {0, 0, 0, 0, 0, 0};
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * blockDim.x; base < capacity;
       base += stride) {
    if (threadIdx.x == 0) s_cnt[0] = 0;
    __syncthreads();
    const std::int64_t i = base + threadIdx.x;
    const unsigned long long* src = slots + i * width;
    const bool valid = i < capacity && src[0] != kEmptyKey;
    const unsigned long long mine = warp_claim(s_cnt, 0, valid);
    __syncthreads();
    if (threadIdx.x == 0) s_base = s_cnt[0] != 0 ? atomicAdd(&status->records, s_cnt[0]) : 0;
    __syncthreads();
    if (valid) {
      unsigned long long* dst = out + (s_base + mine) * static_cast<unsigned long long>(width);
      for (int w = 0; w < width; ++w) dst[w] = src[w];
      summary_add(v, src, fields);
    }
  }
  summary_flush(v, status->sum);
  if (blockIdx.x == 0 && threadIdx.x == 0) status->overflow = *overflow;
}

int grid_for(std::int64_t n, int threads, int per_sm) {
  static const int sms = device_sms();
  const std::int64_t want = (n + threads - 1) / threads;
  return static_cast<int>(
      std::max<std::int64_t>(1, std::min<std::int64_t>(want, std::int64_t{sms} * per_sm)));
}

}  // namespace

DenseAgg make_dense(const QueryDef& q, const cudaDeviceProp& prop) {
  if (q.high_cardinality || q.domain_size <= 0)
    throw Error("groupby: dense GPU aggregation needs a low-cardinality query");
  if (q.fields & (kMinX | kMaxX))
    throw Error("groupby: the dense GPU aggregation keeps count, sum x, sum y and sum x^2 only");
  DenseAgg a;
  a.domain_lo = q.domain_lo;
  a.domain = static_cast<int>(q.domain_size);
  a.fields = q.fields;
  a.words = (1 + sum_field_count(q.fields)) * a.domain;
  const int nf = sum_field_count(q.fields);
  const std::size_t smem =
      a.domain <= kMaxPrivateDomain ? private_smem(a.domain, nf) : shared_smem(a.domain, nf);
  if (smem > prop.sharedMemPerBlockOptin)
    throw Error("groupby: " + std::to_string(a.domain) + " groups need " + std::to_string(smem) +
                " B of shared memory per block (the GPU has " +
                std::to_string(prop.sharedMemPerBlockOptin) + ")");
  const int per_sm = std::max<int>(
      1, static_cast<int>(prop.sharedMemPerMultiprocessor / std::max<std::size_t>(smem, 1)));
  a.max_blocks = prop.multiProcessorCount * std::min(per_sm, 8);
  SB_CUDA_CHECK(cudaMalloc(&a.acc, sizeof(double) * a.words));
  SB_CUDA_CHECK(
      cudaMalloc(&a.partials, sizeof(double) * a.words * static_cast<std::size_t>(a.max_blocks)));
  return a;
}

void free_dense(DenseAgg& a) {
  if (a.acc != nullptr) (void)cudaFree(a.acc);
  if (a.partials != nullptr) (void)cudaFree(a.partials);
  a.acc = nullptr;
  a.partials = nullptr;
}

void dense_clear(const DenseAgg& a, cudaStream_t stream) {
  SB_CUDA_CHECK(cudaMemsetAsync(a.acc, 0, sizeof(double) * a.words, stream));
}

void dense_aggregate(const QueryDef& q, const DenseAgg& a, const ColumnPtrs& in, std::int64_t n,
                     cudaStream_t stream) {
  if (n <= 0) return;
  if (q.key_column == kColName) {
    launch_dense<std::int32_t>(a, in.name, in, n, stream);
  } else if (q.key_column == kColId) {
    launch_dense<std::int64_t>(a, in.id, in, n, stream);
  } else {
    launch_dense<std::int64_t>(a, in.key, in, n, stream);
  }
}

HashTable make_hash(std::int64_t groups, unsigned fields) {
  HashTable t;
  std::int64_t cap = 16;
  while (cap * 7 / 10 < groups) cap *= 2;
  t.capacity = cap;
  t.width = record_width(fields);
  t.fields = fields;
  SB_CUDA_CHECK(cudaMalloc(&t.slots, sizeof(std::uint64_t) * cap * t.width));
  SB_CUDA_CHECK(cudaMalloc(&t.overflow, sizeof(int)));
  SB_CUDA_CHECK(cudaMemset(t.overflow, 0, sizeof(int)));
  SB_CUDA_CHECK(cudaMalloc(&t.counters, sizeof(long long) * 2 * kMaxOwners));
  SB_CUDA_CHECK(cudaMalloc(&t.status, sizeof(TableStatus)));
  return t;
}

void free_hash(HashTable& t) {
  for (void* p : {static_cast<void*>(t.slots), static_cast<void*>(t.overflow),
                  static_cast<void*>(t.counters), static_cast<void*>(t.status)})
    if (p != nullptr) (void)cudaFree(p);
  t = HashTable{};
}

void hash_clear(const HashTable& t, cudaStream_t stream) {
  SlotPattern pat{};
  pat.w[0] = kEmptyKey;
  pat.w[1] = 0;
  int w = 2;
  const double inf = std::numeric_limits<double>::infinity();
  auto bits = [](double d) {
    unsigned long long u;
    std::memcpy(&u, &d, sizeof u);
    return u;
  };
  if (t.fields & kSumX) pat.w[w++] = 0;
  if (t.fields & kSumY) pat.w[w++] = 0;
  if (t.fields & kSumSqX) pat.w[w++] = 0;
  if (t.fields & kMinX) pat.w[w++] = bits(inf);
  if (t.fields & kMaxX) pat.w[w++] = bits(-inf);
  hash_clear_kernel<<<grid_for(t.capacity, 256, 8), 256, 0, stream>>>(
      reinterpret_cast<unsigned long long*>(t.slots), t.capacity, t.width, pat);
  SB_CUDA_CHECK_LAUNCH();
}

void hash_aggregate(const HashTable& t, const ColumnPtrs& in, std::int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  hash_rows_kernel<<<grid_for(n, 256, 16), 256, 0, stream>>>(
      reinterpret_cast<unsigned long long*>(t.slots), static_cast<std::uint64_t>(t.capacity - 1),
      t.width, t.fields, in.key, in.x, in.y, n, t.overflow);
  SB_CUDA_CHECK_LAUNCH();
}

void hash_insert_records(const HashTable& t, const std::uint64_t* records, std::int64_t count,
                         cudaStream_t stream) {
  if (count <= 0) return;
  hash_records_kernel<<<grid_for(count, 256, 16), 256, 0, stream>>>(
      reinterpret_cast<unsigned long long*>(t.slots), static_cast<std::uint64_t>(t.capacity - 1),
      t.width, t.fields, reinterpret_cast<const unsigned long long*>(records), count, t.overflow);
  SB_CUDA_CHECK_LAUNCH();
}

std::int64_t hash_compact(const HashTable& t, int owners, std::uint64_t* out, long long* counts,
                          long long* offsets, cudaStream_t stream, int owner_bits) {
  if (owners < 1 || owners > kMaxOwners)
    throw Error("groupby: the GPU shuffle supports 1.." + std::to_string(kMaxOwners) + " workers");
  auto* d_counts = reinterpret_cast<unsigned long long*>(t.counters);
  auto* d_cursors = d_counts + kMaxOwners;
  const auto* slots = reinterpret_cast<const unsigned long long*>(t.slots);
  SB_CUDA_CHECK(cudaMemsetAsync(d_counts, 0, sizeof(long long) * kMaxOwners, stream));
  const int grid = grid_for(t.capacity, kCompactThreads, 8);
  owner_count_kernel<<<grid, kCompactThreads, 0, stream>>>(slots, t.capacity, t.width, owners,
                                                           owner_bits, d_counts);
  SB_CUDA_CHECK_LAUNCH();
  SB_CUDA_CHECK(cudaMemcpyAsync(counts, d_counts, sizeof(long long) * owners,
                                cudaMemcpyDeviceToHost, stream));
  SB_CUDA_CHECK(cudaStreamSynchronize(stream));
  long long total = 0;
  for (int o = 0; o < owners; ++o) {
    offsets[o] = total;
    total += counts[o];
  }
  SB_CUDA_CHECK(cudaMemcpyAsync(d_cursors, offsets, sizeof(long long) * owners,
                                cudaMemcpyHostToDevice, stream));
  owner_scatter_kernel<<<grid, kCompactThreads, 0, stream>>>(
      slots, t.capacity, t.width, owners, owner_bits, d_cursors,
      reinterpret_cast<unsigned long long*>(out));
  SB_CUDA_CHECK_LAUNCH();
  // `offsets` must stay valid until the copy above ran: wait here.
  SB_CUDA_CHECK(cudaStreamSynchronize(stream));
  return total;
}

TableStatus hash_finish(const HashTable& t, std::uint64_t* out, cudaStream_t stream) {
  SB_CUDA_CHECK(cudaMemsetAsync(t.status, 0, sizeof(TableStatus), stream));
  compact_summary_kernel<<<grid_for(t.capacity, kCompactThreads, 8), kCompactThreads, 0, stream>>>(
      reinterpret_cast<const unsigned long long*>(t.slots), t.capacity, t.width, t.fields,
      t.overflow, reinterpret_cast<unsigned long long*>(out), t.status);
  SB_CUDA_CHECK_LAUNCH();
  TableStatus host;
  SB_CUDA_CHECK(cudaMemcpyAsync(&host, t.status, sizeof host, cudaMemcpyDeviceToHost, stream));
  SB_CUDA_CHECK(cudaStreamSynchronize(stream));
  return host;
}

bool stage_pays(const HashTable& t, const cudaDeviceProp& prop) {
  const double bytes = static_cast<double>(t.capacity) * t.width * 8.0;
  return bytes > 4.0 * static_cast<double>(prop.l2CacheSize) && t.capacity >= 1 << 16;
}

namespace {

/// Staged-row arrays of `n` rows: keys, x, and y when the table keeps sum y.
void alloc_rows(std::size_t n, bool with_y, std::int64_t*& key, double*& x, double*& y) {
  SB_CUDA_CHECK(cudaMalloc(&key, sizeof(std::int64_t) * n));
  SB_CUDA_CHECK(cudaMalloc(&x, sizeof(double) * n));
  if (with_y) SB_CUDA_CHECK(cudaMalloc(&y, sizeof(double) * n));
}

int log2_capacity(const HashTable& t) {
  int b = 0;
  while ((std::int64_t{1} << b) < t.capacity) ++b;
  return b;
}

/// Slice size for shared memory: the largest power of two of slots within kSliceTableBytes,
/// between one and kSliceMaxPer slots per thread of slice_aggregate_kernel.
int slice_bits_for(int width) {
  int b = 0;
  while ((std::size_t{2} << b) * static_cast<std::size_t>(width) * 8 <= kSliceTableBytes) ++b;
  return std::clamp(b, 9, 11);
}

/// Dynamic shared memory of the staging kernels (opted in on the current device; once per
/// thread and device, as it is asked before every staging launch).
std::size_t stage_shared() {
  constexpr std::size_t bytes = sizeof(StageShared);
  thread_local int ready = -1;  // the device this thread last opted in on
  const int dev = current_device();
  if (dev == ready) return bytes;
  for (const void* k : {reinterpret_cast<const void*>(stage_rows_kernel<std::int64_t>),
                        reinterpret_cast<const void*>(stage_rows_kernel<std::uint32_t>),
                        reinterpret_cast<const void*>(restage_kernel<std::int64_t>),
                        reinterpret_cast<const void*>(restage_kernel<std::uint32_t>),
                        reinterpret_cast<const void*>(restage_segments_kernel<true>),
                        reinterpret_cast<const void*>(restage_segments_kernel<false>)})
    opt_in_shared(k, bytes);
  ready = dev;
  return bytes;
}

/// Blocks of a staging kernel (kStageThreads threads, stage_shared() bytes) resident on one SM
/// at once (the occupancy calculator; cached per device and kernel).
int resident_blocks(const void* kernel) {
  const std::size_t smem = stage_shared();
  static std::mutex m;
  static std::map<std::pair<int, const void*>, int> known;
  const int dev = current_device();
  const std::lock_guard<std::mutex> lock(m);
  auto it = known.find({dev, kernel});
  if (it == known.end()) {
    int n = 0;
    SB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, kStageThreads, smem));
    it = known.emplace(std::make_pair(dev, kernel), std::max(n, 1)).first;
  }
  return it->second;
}

/// stage_rows_kernel over rows [0, n) into the buckets of `tt` (`cap` rows each; okey holds
/// 32-bit keys when `narrow`). per_sm <= 0: exactly the blocks resident at once; each loops over
/// its tiles, and blocks beyond them would start only when the first ones end and run their
/// share on partly empty SMs (one H200, 2026-11-22, bench_groupby_gpu stage + flush: 7.07 ms
/// with three blocks per SM, 6.71 ms with the two that are resident, the second level bounded
/// to two as well).
void launch_stage_rows(const TileTarget& tt, const std::int64_t* key, const double* x,
                       const double* y, std::int64_t n, std::int64_t* okey, double* ox, double* oy,
                       std::int64_t cap, unsigned long long* cursor, int* overflow, bool narrow,
                       int per_sm, cudaStream_t stream) {
  if (n <= 0) return;
  auto* kernel = narrow ? reinterpret_cast<const void*>(stage_rows_kernel<std::uint32_t>)
                        : reinterpret_cast<const void*>(stage_rows_kernel<std::int64_t>);
  const int grid =
      grid_for(n, kStageThreads * kStageRows, per_sm > 0 ? per_sm : resident_blocks(kernel));
  if (narrow) {
    stage_rows_kernel<std::uint32_t><<<grid, kStageThreads, stage_shared(), stream>>>(
        tt, key, x, y, n, reinterpret_cast<std::uint32_t*>(okey), ox, oy, cap, cursor, overflow);
  } else {
    stage_rows_kernel<std::int64_t><<<grid, kStageThreads, stage_shared(), stream>>>(
        tt, key, x, y, n, okey, ox, oy, cap, cursor, overflow);
  }
  SB_CUDA_CHECK_LAUNCH();
}

}  // namespace

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
  const std::int64_t scap =
      split == 0 ? s.region_capacity : rows / count + rows / count / 10 + 1024;
  if (slices && split >= 0 && split <= 10 && scap <= 0xFFFF &&
      slice_shared_bytes(sb, t.width, scap) <= 200 * 1024) {
    s.slice_bits = sb;
    s.slices_per_region = 1 << split;
    s.slice_capacity = scap;
    if (split == 0) {
      // A region is a slice: the first level's buckets are the slices' buckets.
      s.skey = s.key;
      s.sx = s.x;
      s.sy = s.y;
      s.scursor = s.cursor;
    } else {
      // Only the first level can keep narrow keys: the slices' buckets hold 64-bit keys.
      s.narrow_keys = narrow_keys;
      const auto stotal = static_cast<std::size_t>(count * s.slice_capacity);
      alloc_rows(stotal, (t.fields & kSumY) != 0, s.skey, s.sx, s.sy);
      SB_CUDA_CHECK(cudaMalloc(&s.scursor, sizeof(unsigned long long) * count));
      SB_CUDA_CHECK(cudaMemset(s.scursor, 0, sizeof(unsigned long long) * count));
    }
    SB_CUDA_CHECK(cudaMalloc(&s.spilled, sizeof(unsigned long long) * count));
    opt_in_shared(reinterpret_cast<const void*>(slice_aggregate_kernel),
                  slice_shared_bytes(sb, t.width, scap));
  }
  return s;
}

void free_stage(HashStage& s) {
  const bool own_slices = s.skey != nullptr && s.skey != s.key;
  for (void* p : {static_cast<void*>(s.key), static_cast<void*>(s.x), static_cast<void*>(s.y),
                  static_cast<void*>(s.cursor), static_cast<void*>(s.spilled)})
    if (p != nullptr) (void)cudaFree(p);
  if (own_slices)
    for (void* p : {static_cast<void*>(s.skey), static_cast<void*>(s.sx), static_cast<void*>(s.sy),
                    static_cast<void*>(s.scursor)})
      if (p != nullptr) (void)cudaFree(p);
  s = HashStage{};
}

void stage_clear(const HashStage& s, cudaStream_t stream) {
  SB_CUDA_CHECK(cudaMemsetAsync(s.cursor, 0, sizeof(unsigned long long) << s.region_bits, stream));
  if (s.scursor != nullptr && s.scursor != s.cursor)
    SB_CUDA_CHECK(
        cudaMemsetAsync(s.scursor, 0,
                        sizeof(unsigned long long) *
                            (static_cast<std::size_t>(s.slices_per_region) << s.region_bits),
                        stream));
}

void stage_rows(const HashTable& t, const HashStage& s, const ColumnPtrs& in, std::int64_t n,
                cudaStream_t stream) {
  const int log2cap = log2_capacity(t);
  const TileTarget tt = table_target(
      static_cast<std::uint64_t>(t.capacity - 1), log2cap - s.region_bits, 1 << s.region_bits,
      reinterpret_cast<unsigned long long*>(t.slots), t.width, t.fields);
  launch_stage_rows(tt, in.key, in.x, in.y, n, s.key, s.x, s.y, s.region_capacity, s.cursor,
                    t.overflow, s.narrow_keys, 0, stream);
}

void stage_flush(const HashTable& t, const HashStage& s, cudaStream_t stream) {
  const int regions = 1 << s.region_bits;
  std::vector<unsigned long long> cursor(static_cast<std::size_t>(regions));
  SB_CUDA_CHECK(cudaMemcpyAsync(cursor.data(), s.cursor, sizeof(unsigned long long) * regions,
                                cudaMemcpyDeviceToHost, stream));
  SB_CUDA_CHECK(cudaStreamSynchronize(stream));
  auto* slots = reinterpret_cast<unsigned long long*>(t.slots);
  const auto mask = static_cast<std::uint64_t>(t.capacity - 1);
  if (s.slice_bits > 0) {
    // Second level: every region's rows into its slices' buckets.
    const auto per = static_cast<std::int64_t>(s.slices_per_region);
    if (s.skey != s.key) {
      auto* kernel = s.narrow_keys ? reinterpret_cast<const void*>(restage_kernel<std::uint32_t>)
                                   : reinterpret_cast<const void*>(restage_kernel<std::int64_t>);
      const int grid = grid_for(static_cast<std::int64_t>(regions) * s.region_capacity,
                                kStageThreads * kStageRows, resident_blocks(kernel));
      if (s.narrow_keys) {
        restage_kernel<std::uint32_t><<<grid, kStageThreads, stage_shared(), stream>>>(
            slots, mask, t.width, t.fields, s.slice_bits, static_cast<int>(per), regions,
            reinterpret_cast<const std::uint32_t*>(s.key), s.x, s.y, s.region_capacity, s.cursor,
            s.skey, s.sx, s.sy, s.slice_capacity, s.scursor, t.overflow);
      } else {
        restage_kernel<std::int64_t><<<grid, kStageThreads, stage_shared(), stream>>>(
            slots, mask, t.width, t.fields, s.slice_bits, static_cast<int>(per), regions, s.key,
            s.x, s.y, s.region_capacity, s.cursor, s.skey, s.sx, s.sy, s.slice_capacity, s.scursor,
            t.overflow);
      }
      SB_CUDA_CHECK_LAUNCH();
    }
    const auto count = static_cast<unsigned>(per * regions);
    slice_aggregate_kernel<<<count, kSliceThreads,
                             slice_shared_bytes(s.slice_bits, t.width, s.slice_capacity), stream>>>(
        slots, mask, t.width, t.fields, s.slice_bits, s.skey, s.sx, s.sy, s.slice_capacity,
        s.scursor, s.spilled, 0u);
    SB_CUDA_CHECK_LAUNCH();
    spill_rows_kernel<<<count, 128, 0, stream>>>(slots, mask, t.width, t.fields, s.slice_bits,
                                                 s.skey, s.sx, s.sy, s.slice_capacity, s.scursor,
                                                 s.spilled, t.overflow, 0u);
    SB_CUDA_CHECK_LAUNCH();
  } else {
    for (int r = 0; r < regions; ++r) {
      const auto n = static_cast<std::int64_t>(std::min<unsigned long long>(
          cursor[r], static_cast<unsigned long long>(s.region_capacity)));
      if (n == 0) continue;
      const std::int64_t o = static_cast<std::int64_t>(r) * s.region_capacity;
      hash_rows_kernel<<<grid_for(n, 256, 16), 256, 0, stream>>>(
          slots, mask, t.width, t.fields, s.key + o, s.x + o, s.y != nullptr ? s.y + o : nullptr, n,
          t.overflow);
      SB_CUDA_CHECK_LAUNCH();
    }
  }
  stage_clear(s, stream);
}

namespace {

/// Where a region's rows go on the owner: the slices of that region (level two of the owner's
/// table), full slice buckets into the table with global atomics.
TileTarget slice_target(const HashTable& owner, const RowShuffle& s) {
  return table_target(static_cast<std::uint64_t>(owner.capacity - 1), s.slice_bits,
                      s.slices_per_region, reinterpret_cast<unsigned long long*>(owner.slots),
                      owner.width, owner.fields);
}

}  // namespace

RowShuffle plan_row_shuffle(const HashTable& owner, int owners, std::int64_t rows) {
  RowShuffle s;
  if (owners < 2 || owners > kMaxOwners || owners > kMaxRegions) return s;
  const int log2cap = log2_capacity(owner);
  const int sb = slice_bits_for(owner.width);
  if (log2cap < sb) return s;
  // owners * R send buckets: at most kMaxRegions (one staging pass), about kSendBuckets where the
  // table allows (a staged tile of 2048 rows then writes runs of ~16 rows: more buckets mean
  // shorter runs; one GPU of two took 3.2 ms to generate and stage its 5 * 10^7 rows into 1024
  // buckets, 1.8 ms into 128).
  int max_rb = 0, want_rb = 0;
  while ((owners << (max_rb + 1)) <= kMaxRegions) ++max_rb;
  while ((owners << (want_rb + 1)) <= kSendBuckets) ++want_rb;
  const int rb = std::min({std::max(want_rb, log2cap - sb - 10), max_rb, log2cap - sb});
  const int split = log2cap - rb - sb;
  if (split > 10) return s;  // a region's slices fit one staging pass too
  const std::int64_t buckets = static_cast<std::int64_t>(owners) << rb;
  const std::int64_t slices = std::int64_t{1} << (rb + split);
  const std::int64_t per_bucket = rows / buckets;
  const std::int64_t owned = rows / owners + 1;  // rows whose keys one owner owns (uniform keys)
  // Rows past a slice bucket's end go to the table with global atomics (correct, slower): the
  // bucket is capped where the slice's shared memory or 16-bit row numbers end.
  const std::int64_t fit = static_cast<std::int64_t>(
      (200 * 1024 - slice_shared_bytes(sb, owner.width, 0)) / sizeof(unsigned));
  const std::int64_t scap =
      std::min({owned / slices + owned / slices / 10 + 256, fit, std::int64_t{0xFFFF}});
  s.owners = owners;
  s.region_bits = rb;
  s.slice_bits = sb;
  s.slices_per_region = 1 << split;
  s.rcap = (per_bucket + per_bucket / 20 + 4096 + 31) / 32 * 32;  // even: 16-byte aligned pushes
  s.scap = scap;
  s.with_y = (owner.fields & kSumY) != 0;
  const double row = s.with_y ? 24.0 : 16.0;
  s.bytes = row * static_cast<double>(buckets * s.rcap + slices * s.scap) +
            8.0 * static_cast<double>(buckets * (1 + 2 * kSegFields) + 2 * slices);
  return s;
}

void alloc_row_shuffle(RowShuffle& s) {
  const auto B = static_cast<std::size_t>(s.buckets());
  const auto S = static_cast<std::size_t>(s.slices_per_region) << s.region_bits;
  const std::size_t rows = B * static_cast<std::size_t>(s.rcap);
  const std::size_t srows = S * static_cast<std::size_t>(s.scap);
  // The send buckets in one allocation (keys, x, y planes back to back), so that the worker's
  // own buckets read like received data (shuffle_aggregate with from_buckets).
  SB_CUDA_CHECK(cudaMalloc(
      &s.key, sizeof(std::int64_t) * static_cast<std::size_t>(s.bucket_key_words() +
                                                              (s.planes() - 1) * s.plane_rows())));
  s.x = reinterpret_cast<double*>(s.key + s.bucket_key_words());
  s.y = s.with_y ? s.x + rows : nullptr;
  SB_CUDA_CHECK(cudaMalloc(&s.cursor, sizeof(unsigned long long) * B));
  SB_CUDA_CHECK(cudaMemset(s.cursor, 0, sizeof(unsigned long long) * B));
  alloc_rows(srows, s.with_y, s.skey, s.sx, s.sy);
  SB_CUDA_CHECK(cudaMalloc(&s.scursor, sizeof(unsigned long long) * S));
  SB_CUDA_CHECK(cudaMalloc(&s.spilled, sizeof(unsigned long long) * S));
  SB_CUDA_CHECK(cudaMallocHost(&s.host_segs, sizeof(std::int64_t) * kSegFields * B));
  SB_CUDA_CHECK(cudaMalloc(&s.segs, sizeof(std::int64_t) * kSegFields * B));
}

void free_row_shuffle(RowShuffle& s) {
  for (void* p :
       {static_cast<void*>(s.key),  // with x and y
        static_cast<void*>(s.cursor), static_cast<void*>(s.skey), static_cast<void*>(s.sx),
        static_cast<void*>(s.sy), static_cast<void*>(s.scursor), static_cast<void*>(s.spilled),
        static_cast<void*>(s.send), static_cast<void*>(s.recv), static_cast<void*>(s.segs),
        static_cast<void*>(s.landing), static_cast<void*>(s.dests), static_cast<void*>(s.snaps)})
    if (p != nullptr) (void)cudaFree(p);
  if (s.host_segs != nullptr) (void)cudaFreeHost(s.host_segs);
  s = RowShuffle{};
}

void reserve_row_shuffle(RowShuffle& s, std::int64_t send_rows, std::int64_t recv_rows) {
  auto grow = [&](std::int64_t want, std::int64_t& cap, std::uint64_t*& p) {
    if (want <= cap) return;
    SB_CUDA_CHECK(cudaDeviceSynchronize());  // the old array may still be in use
    if (p != nullptr) SB_CUDA_CHECK(cudaFree(p));
    p = nullptr;
    cap = want + want / 8 + 4096;
    SB_CUDA_CHECK(
        cudaMalloc(&p, sizeof(std::uint64_t) * s.planes() * static_cast<std::size_t>(cap)));
  };
  grow(send_rows, s.send_cap, s.send);
  grow(recv_rows, s.recv_cap, s.recv);
}

void shuffle_clear(const RowShuffle& s, cudaStream_t stream) {
  SB_CUDA_CHECK(cudaMemsetAsync(s.cursor, 0, sizeof(unsigned long long) * s.buckets(), stream));
}

void shuffle_stage(const HashTable& owner, const HashTable& spill, const RowShuffle& s,
                   const ColumnPtrs& in, std::int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  const int log2cap = log2_capacity(owner);
  const TileTarget tt{static_cast<std::uint64_t>(owner.capacity - 1),
                      log2cap - s.region_bits,
                      static_cast<unsigned>(s.regions() - 1),
                      s.buckets(),
                      s.owners,
                      reinterpret_cast<unsigned long long*>(spill.slots),
                      static_cast<std::uint64_t>(spill.capacity - 1),
                      spill.width,
                      spill.fields,
                      s.owner_bits};
  // Three blocks per SM where two are resident: the push kernels share the SMs during the
  // tasks, and the spare blocks fill what they leave (2 x H200, 2026-11-22, by-key large on two
  // GPUs: 4.70-4.77 ms; exactly the resident blocks 4.88-4.91 ms).
  launch_stage_rows(tt, in.key, in.x, s.with_y ? in.y : nullptr, n, s.key, s.x, s.y, s.rcap,
                    s.cursor, spill.overflow, s.narrow_keys, 3, stream);
}

void shuffle_cursors(const RowShuffle& s, unsigned long long* host, cudaStream_t stream) {
  SB_CUDA_CHECK(cudaMemcpyAsync(host, s.cursor, sizeof(unsigned long long) * s.buckets(),
                                cudaMemcpyDeviceToHost, stream));
  SB_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void shuffle_upload(const RowShuffle& s, cudaStream_t stream) {
  SB_CUDA_CHECK(cudaMemcpyAsync(s.segs, s.host_segs,
                                sizeof(std::int64_t) * kSegFields * s.buckets(),
                                cudaMemcpyHostToDevice, stream));
}

void shuffle_pack(const RowShuffle& s, int seg0, int nseg, cudaStream_t stream) {
  if (nseg <= 0) return;
  const std::int64_t B = s.buckets();
  const std::int64_t* seg = s.segs + seg0;
  const double* y = s.with_y ? s.y : nullptr;
  if (s.narrow_keys) {
    pack_kernel<true><<<device_sms() * 2, kStageThreads, 0, stream>>>(
        nseg, seg + kPackSrc * B, seg + kPackRows * B, seg + kPackKey * B, seg + kPackDst * B,
        seg + kPackPlane * B, reinterpret_cast<const std::uint32_t*>(s.key), s.x, y, s.send);
  } else {
    pack_kernel<false><<<device_sms() * 2, kStageThreads, 0, stream>>>(
        nseg, seg + kPackSrc * B, seg + kPackRows * B, seg + kPackKey * B, seg + kPackDst * B,
        seg + kPackPlane * B, reinterpret_cast<const std::uint64_t*>(s.key), s.x, y, s.send);
  }
  SB_CUDA_CHECK_LAUNCH();
}

void shuffle_fold(const HashTable& owner, const RowShuffle& s, int region0, int nregions,
                  cudaStream_t stream) {
  if (nregions <= 0) return;
  const int per = s.slices_per_region;
  const auto slice0 = static_cast<unsigned>(region0 * per);
  const auto count = static_cast<unsigned>(nregions * per);
  auto* slots = reinterpret_cast<unsigned long long*>(owner.slots);
  const auto mask = static_cast<std::uint64_t>(owner.capacity - 1);
  const std::size_t smem = slice_shared_bytes(s.slice_bits, owner.width, s.scap);
  opt_in_shared(reinterpret_cast<const void*>(slice_aggregate_kernel), smem);
  slice_aggregate_kernel<<<count, kSliceThreads, smem, stream>>>(
      slots, mask, owner.width, owner.fields, s.slice_bits, s.skey, s.sx, s.sy, s.scap, s.scursor,
      s.spilled, slice0);
  SB_CUDA_CHECK_LAUNCH();
  spill_rows_kernel<<<count, 128, 0, stream>>>(slots, mask, owner.width, owner.fields, s.slice_bits,
                                               s.skey, s.sx, s.sy, s.scap, s.scursor, s.spilled,
                                               owner.overflow, slice0);
  SB_CUDA_CHECK_LAUNCH();
}

void shuffle_aggregate(const HashTable& owner, const RowShuffle& s, int seg0, int nseg, int region0,
                       int nregions, bool from_buckets, cudaStream_t stream) {
  if (nregions <= 0) return;
  shuffle_slices_clear(s, region0, nregions, stream);
  // received rows and the send buckets: keys of the wire's width
  const void* data = from_buckets ? static_cast<const void*>(s.key) : s.recv;
  shuffle_restage(owner, s, seg0, nseg, data, stream);
  shuffle_fold(owner, s, region0, nregions, stream);
}

void alloc_landing(RowShuffle& s) {
  if (s.landing == nullptr)
    SB_CUDA_CHECK(cudaMalloc(&s.landing,
                             sizeof(std::uint64_t) * static_cast<std::size_t>(s.landing_words())));
}

void shuffle_slices_clear(const RowShuffle& s, int region0, int nregions, cudaStream_t stream) {
  const auto per = static_cast<std::size_t>(s.slices_per_region);
  SB_CUDA_CHECK(cudaMemsetAsync(
      s.scursor + static_cast<std::size_t>(region0) * per, 0,
      sizeof(unsigned long long) * static_cast<std::size_t>(nregions) * per, stream));
}

void shuffle_set_landings(RowShuffle& s, const std::vector<void*>& landings) {
  if (static_cast<int>(landings.size()) != s.owners)
    throw Error("groupby: shuffle_set_landings needs one landing area per owner");
  if (s.dests == nullptr) SB_CUDA_CHECK(cudaMalloc(&s.dests, sizeof(void*) * landings.size()));
  SB_CUDA_CHECK(cudaMemcpy(s.dests, landings.data(), sizeof(void*) * landings.size(),
                           cudaMemcpyHostToDevice));
  if (s.snaps == nullptr)
    SB_CUDA_CHECK(cudaMalloc(
        &s.snaps, sizeof(unsigned long long) * kSnapSlots * static_cast<std::size_t>(s.buckets())));
}

void shuffle_snapshot(const RowShuffle& s, int slot, cudaStream_t stream) {
  SB_CUDA_CHECK(cudaMemcpyAsync(s.snaps + static_cast<std::size_t>(slot) * s.buckets(), s.cursor,
                                sizeof(unsigned long long) * s.buckets(), cudaMemcpyDeviceToDevice,
                                stream));
}

void shuffle_push(const RowShuffle& s, int me, int prev_slot, int slot, int ctas,
                  cudaStream_t stream) {
  const unsigned long long* prev =
      prev_slot < 0 ? nullptr : s.snaps + static_cast<std::size_t>(prev_slot) * s.buckets();
  const std::int64_t landing_rows = static_cast<std::int64_t>(s.regions()) * s.rcap;
  push_rows_kernel<<<ctas, kStageThreads, 0, stream>>>(
      reinterpret_cast<const std::uint64_t*>(s.key), s.dests, prev,
      s.snaps + static_cast<std::size_t>(slot) * s.buckets(), me, s.owners, s.regions(), s.planes(),
      s.narrow_keys, s.rcap, s.landing_block(),
      PushPlanes{s.bucket_key_words(), s.plane_rows(), s.key_words(landing_rows), landing_rows});
  SB_CUDA_CHECK_LAUNCH();
}

void shuffle_recv_segment(const RowShuffle& s, std::int64_t idx, std::int64_t key, std::int64_t x,
                          std::int64_t plane, std::int64_t rows, int region) {
  const std::int64_t B = s.buckets();
  std::int64_t* hs = s.host_segs;
  hs[kRecvKey * B + idx] = key;
  hs[kRecvOff * B + idx] = x;
  hs[kRecvRows * B + idx] = rows;
  hs[kRecvRegion * B + idx] = region;
  hs[kRecvPlane * B + idx] = plane;
}

int shuffle_own_segments(const RowShuffle& s, int me, const unsigned long long* counts, int chunks,
                         int first, int chunk_stride) {
  const int R = s.regions();
  const int per = R / chunks;
  for (int r = 0; r < R; ++r) {
    const std::int64_t b = static_cast<std::int64_t>(me) * R + r;
    const std::int64_t idx = static_cast<std::int64_t>(r / per) * chunk_stride + first + r % per;
    shuffle_recv_segment(s, idx, b * s.rcap, s.bucket_key_words() + b * s.rcap, s.plane_rows(),
                         static_cast<std::int64_t>(std::min<unsigned long long>(
                             counts[b], static_cast<unsigned long long>(s.rcap))),
                         r);
  }
  return R;
}

int shuffle_landed_segments(const RowShuffle& s, int me, const long long* rows, int stride) {
  const int R = s.regions();
  int n = R;
  for (int q = 0; q < s.owners; ++q) {
    if (q == me) continue;
    for (int r = 0; r < R; ++r, ++n) {
      const std::int64_t w0 = s.landing_block() * q;  // the block's first word
      const std::int64_t at = static_cast<std::int64_t>(r) * s.rcap;
      shuffle_recv_segment(s, n, s.key_offset(w0) + at, w0 + s.key_words(R * s.rcap) + at,
                           static_cast<std::int64_t>(R) * s.rcap,
                           rows[static_cast<std::size_t>(q) * stride + r], r);
    }
  }
  return n - R;
}

void shuffle_restage(const HashTable& owner, const RowShuffle& s, int seg0, int nseg,
                     const void* data, cudaStream_t stream) {
  std::int64_t rows = 0;
  const std::int64_t B = s.buckets();
  for (int q = seg0; q < seg0 + nseg; ++q) rows += s.host_segs[kRecvRows * B + q];
  if (rows <= 0) return;
  const std::int64_t* seg = s.segs + seg0;
  auto* kernel = s.narrow_keys ? restage_segments_kernel<true> : restage_segments_kernel<false>;
  const int grid = grid_for(rows, kStageThreads * kStageRows,
                            resident_blocks(reinterpret_cast<const void*>(kernel)));
  kernel<<<grid, kStageThreads, stage_shared(), stream>>>(
      slice_target(owner, s), nseg, seg + kRecvKey * B, seg + kRecvOff * B, seg + kRecvRows * B,
      seg + kRecvRegion * B, seg + kRecvPlane * B, static_cast<const std::uint64_t*>(data),
      s.with_y, s.skey, s.sx, s.sy, s.scap, s.scursor, owner.overflow);
  SB_CUDA_CHECK_LAUNCH();
}

bool hash_overflowed(const HashTable& t, cudaStream_t stream) {
  int flag = 0;
  SB_CUDA_CHECK(cudaMemcpyAsync(&flag, t.overflow, sizeof(int), cudaMemcpyDeviceToHost, stream));
  SB_CUDA_CHECK(cudaStreamSynchronize(stream));
  return flag != 0;
}

}  // namespace sb::groupby::gpu
