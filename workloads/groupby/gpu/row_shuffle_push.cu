// The peer exchange's pushes of the row shuffle (row_shuffle.cuh): after each task, the rows
// its buckets gained are stored into their owners' landing areas, mapped by CUDA IPC.
#include "groupby/gpu/row_shuffle.cuh"

#include "groupby/gpu/detail/device_helpers.cuh"
#include "scalebench/gpu_error.cuh"

namespace sb::groupby::gpu {

using namespace detail;

namespace {

/// Elements [lo, hi) of src to dst by one block, 16-byte words in the middle (src + lo and
/// dst + lo share their alignment modulo 16 bytes, so the loads stay 16-byte aligned).
template <class T>
__device__ __forceinline__ void copy_run(const T* __restrict__ src, T* __restrict__ dst,
                                         std::int64_t lo, std::int64_t hi) {
  constexpr std::int64_t kV = 16 / sizeof(T);  // elements per 16-byte word
  // The head runs up to dst's next 128-byte line, so that each warp's 512-byte store covers
  // four lines across NVLink instead of five (tools/gpu-campaign.sh bykey).
  const auto mis = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(dst + lo) % 128);
  const std::int64_t head = min(hi, lo + (128 - mis) % 128 / static_cast<std::int64_t>(sizeof(T)));
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
/// [prev, cur) of bucket (o, r) (counts capped at bucket_capacity; prev null: 0) in every plane,
/// from this worker's buckets into block `me` of owner o's landing area (another GPU's memory,
/// mapped; stores cross NVLink). Each block takes (owner, region, plane) items in turn, the owner
/// varying fastest (me + 1, me + 2, ... mod owners): every source pushes to every owner at
/// once, so each owner receives from all sources evenly however far apart their tasks run
/// (one owner at a time, the rounds of an all-to-all, needed the sources in step: a late one
/// sent two sources to one owner; tools/gpu-campaign.sh bykey). Keys are 32-bit words when
/// `narrow`; every plane and bucket starts 16-byte aligned (bucket_capacity is a multiple of 32).
__global__ void __launch_bounds__(kStageThreads)
    push_rows_kernel(const std::uint64_t* __restrict__ buckets, std::uint64_t* const* dests,
                     const unsigned long long* __restrict__ prev,
                     const unsigned long long* __restrict__ cur, int me, int owners, int regions,
                     int planes, bool narrow, std::int64_t bucket_capacity, std::int64_t block,
                     PushPlanes pl) {
  const int items = (owners - 1) * regions * planes;
  const auto cap = static_cast<unsigned long long>(bucket_capacity);
  for (int it = blockIdx.x; it < items; it += gridDim.x) {
    const int o = (me + 1 + it % (owners - 1)) % owners;
    const int q = it / (owners - 1);  // (region, plane)
    const int z = q % planes;
    const int r = q / planes;
    const int b = o * regions + r;  // bucket (owner, region)
    const unsigned long long c1 = cur[b] < cap ? cur[b] : cap;
    const unsigned long long c0 = prev == nullptr ? 0ull : (prev[b] < cap ? prev[b] : cap);
    if (c1 <= c0) continue;
    const auto lo = static_cast<std::int64_t>(c0);
    const auto hi = static_cast<std::int64_t>(c1);
    std::uint64_t* dst = dests[o] + block * me;
    if (z == 0 && narrow) {
      copy_run(reinterpret_cast<const std::uint32_t*>(buckets) + b * bucket_capacity,
               reinterpret_cast<std::uint32_t*>(dst) + r * bucket_capacity, lo, hi);
    } else if (z == 0) {
      copy_run(buckets + b * bucket_capacity, dst + r * bucket_capacity, lo, hi);
    } else {
      copy_run(buckets + pl.keys_src + (z - 1) * pl.rows_src + b * bucket_capacity,
               dst + pl.keys_dst + (z - 1) * pl.rows_dst + r * bucket_capacity, lo, hi);
    }
  }
}

}  // namespace

void alloc_landing(RowShuffle& s) {
  if (s.landing == nullptr)
    SB_CUDA_CHECK(cudaMalloc(&s.landing,
                             sizeof(std::uint64_t) * static_cast<std::size_t>(s.landing_words())));
}

void shuffle_set_landings(RowShuffle& s, const std::vector<void*>& landings, cudaStream_t stream) {
  if (static_cast<int>(landings.size()) != s.owners)
    throw Error("groupby: shuffle_set_landings needs one landing area per owner");
  if (s.dests == nullptr) SB_CUDA_CHECK(cudaMalloc(&s.dests, sizeof(void*) * landings.size()));
  SB_CUDA_CHECK(cudaMemcpyAsync(s.dests, landings.data(), sizeof(void*) * landings.size(),
                                cudaMemcpyHostToDevice, stream));
  const std::size_t ring = sizeof(unsigned long long) * kSnapSlots * s.buckets();
  if (s.snapshots == nullptr) SB_CUDA_CHECK(cudaMalloc(&s.snapshots, ring));
  if (s.host_snapshots == nullptr) SB_CUDA_CHECK(cudaMallocHost(&s.host_snapshots, ring));
}

void shuffle_snapshot(const RowShuffle& s, int slot, bool to_host, cudaStream_t stream) {
  const std::size_t at = static_cast<std::size_t>(slot) * s.buckets();
  const std::size_t bytes = sizeof(unsigned long long) * s.buckets();
  SB_CUDA_CHECK(
      cudaMemcpyAsync(s.snapshots + at, s.cursor, bytes, cudaMemcpyDeviceToDevice, stream));
  if (to_host)
    SB_CUDA_CHECK(cudaMemcpyAsync(s.host_snapshots + at, s.snapshots + at, bytes,
                                  cudaMemcpyDeviceToHost, stream));
}

void shuffle_push(const RowShuffle& s, int me, int prev_slot, int slot, int ctas,
                  cudaStream_t stream) {
  const unsigned long long* prev =
      prev_slot < 0 ? nullptr : s.snapshots + static_cast<std::size_t>(prev_slot) * s.buckets();
  const std::int64_t landing_rows = static_cast<std::int64_t>(s.regions()) * s.bucket_capacity;
  push_rows_kernel<<<ctas, kStageThreads, 0, stream>>>(
      reinterpret_cast<const std::uint64_t*>(s.key), s.dests, prev,
      s.snapshots + static_cast<std::size_t>(slot) * s.buckets(), me, s.owners, s.regions(),
      s.planes(), s.narrow_keys, s.bucket_capacity, s.landing_block(),
      PushPlanes{s.bucket_key_words(), s.plane_rows(), s.key_words(landing_rows), landing_rows});
  SB_CUDA_CHECK_LAUNCH();
}

}  // namespace sb::groupby::gpu
