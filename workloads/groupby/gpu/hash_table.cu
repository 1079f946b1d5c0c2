// The global hash table of high-cardinality groupby on a GPU (hash_table.cuh): clearing,
// rows and records into the table, compaction (by owner, or with the checksums in one pass).
#include "groupby/gpu/hash_table.cuh"

#include <string>

#include "groupby/gpu/detail/device_helpers.cuh"
#include "groupby/gpu/detail/launch_config.cuh"
#include "groupby/gpu/detail/record_summary.cuh"
#include "groupby/gpu/row_source.cuh"
#include "groupby/group_table.hpp"
#include "scalebench/gpu_error.cuh"

namespace sb::groupby::gpu {

using namespace detail;

namespace {

/// Every word of the table set to its slot pattern, the table seen as one flat array so that
/// a warp writes consecutive words.
__global__ void hash_clear_kernel(unsigned long long* __restrict__ slots, std::int64_t capacity,
                                  int width, SlotPattern pattern) {
  const std::int64_t words = capacity * width;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t w = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; w < words;
       w += stride)
    slots[w] = pattern_word(pattern, static_cast<int>(w % width));
}

/// Src: stored columns or rows generated here (row_source.cuh).
template <class Src>
__global__ void hash_rows_kernel(unsigned long long* __restrict__ slots, std::uint64_t mask,
                                 int width, unsigned fields, const Src src, std::int64_t n,
                                 int* overflow) {
  const bool rx = (fields & (kSumX | kSumSqX | kMinX | kMaxX)) != 0;
  const bool ry = (fields & kSumY) != 0;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  // Four rows per thread at a time: their inputs and first probes are loaded before any update,
  // so four random slot reads are in flight per thread.
  for (; i + 3 * stride < n; i += 4 * stride) {
    long long k[4];
    double xv[4], yv[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) src.load(i + u * stride, rx, ry, k[u], xv[u], yv[u]);
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
    long long key = 0;
    double xv = 0.0, yv = 0.0;
    src.load(i, rx, ry, key, xv, yv);
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

constexpr int kCompactThreads = 256;

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

}  // namespace

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
  hash_clear_kernel<<<grid_for(t.capacity, 256, 8), 256, 0, stream>>>(
      reinterpret_cast<unsigned long long*>(t.slots), t.capacity, t.width, empty_slot(t.fields));
  SB_CUDA_CHECK_LAUNCH();
}

void hash_aggregate(const HashTable& t, const RowSource& in, std::int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  auto* slots = reinterpret_cast<unsigned long long*>(t.slots);
  const auto mask = static_cast<std::uint64_t>(t.capacity - 1);
  const int grid = grid_for(n, 256, 16);
  if (in.is_generated()) {
    hash_rows_kernel<<<grid, 256, 0, stream>>>(slots, mask, t.width, t.fields,
                                               GeneratedRows{in.spec, in.row0}, n, t.overflow);
  } else {
    hash_rows_kernel<<<grid, 256, 0, stream>>>(slots, mask, t.width, t.fields,
                                               ColumnRows<std::int64_t>{in.key, in.x, in.y}, n,
                                               t.overflow);
  }
  SB_CUDA_CHECK_LAUNCH();
}

void hash_aggregate(const HashTable& t, const ColumnPtrs& in, std::int64_t n, cudaStream_t stream) {
  hash_aggregate(t, RowSource::columns(in), n, stream);
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

bool hash_overflowed(const HashTable& t, cudaStream_t stream) {
  int flag = 0;
  SB_CUDA_CHECK(cudaMemcpyAsync(&flag, t.overflow, sizeof(int), cudaMemcpyDeviceToHost, stream));
  SB_CUDA_CHECK(cudaStreamSynchronize(stream));
  return flag != 0;
}

}  // namespace sb::groupby::gpu
