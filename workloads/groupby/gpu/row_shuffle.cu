// The row shuffle of a multi-GPU high-cardinality case (row_shuffle.cuh): send buckets by
// owner and region, packing by segment, and the owner's split of received rows into the
// slices of its table.
#include "groupby/gpu/row_shuffle.cuh"

#include <algorithm>
#include <type_traits>

#include "groupby/gpu/detail/device_helpers.cuh"
#include "groupby/gpu/detail/launch_config.cuh"
#include "groupby/gpu/detail/slice_fold.cuh"
#include "groupby/gpu/detail/stage_launch.cuh"
#include "scalebench/gpu_error.cuh"

namespace sb::groupby::gpu {

using namespace detail;

namespace {

constexpr int kSendBuckets = 128;  // send buckets of the row shuffle, where the table allows

/// The type of a packed key (RowShuffle::narrow_keys).
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
__global__ void __launch_bounds__(kStageThreads) restage_segments_kernel(
    const TileTarget tt, int nseg, const std::int64_t* __restrict__ keyoff,
    const std::int64_t* __restrict__ off, const std::int64_t* __restrict__ rows,
    const std::int64_t* __restrict__ region, const std::int64_t* __restrict__ plane,
    const std::uint64_t* __restrict__ recv, bool with_y, PackedKey<kNarrow>* __restrict__ slice_key,
    double* __restrict__ slice_x, double* __restrict__ slice_y, std::int64_t slice_capacity,
    unsigned long long* __restrict__ slice_cursor, int* overflow) {
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
    const std::int64_t out = region[q] * per * slice_capacity;
    const int first = sh.tile_start[q];
    __syncthreads();  // tile_start is read before stage_tile reuses the scan storage
    const ColumnRows<PackedKey<kNarrow>> src{keys, x, y};
    stage_tile(sh, tt, src, rows[q], static_cast<std::int64_t>(t - first) * kTile, slice_key + out,
               slice_x + out, slice_y != nullptr ? slice_y + out : nullptr, slice_capacity,
               slice_cursor + region[q] * per, overflow);
  }
}

/// Dynamic shared memory of restage_segments_kernel (StageShared), opted in on the current
/// device (once per thread and device, as it is asked before every launch).
std::size_t segments_shared() {
  constexpr std::size_t bytes = sizeof(StageShared);
  thread_local int ready = -1;  // the device this thread last opted in on
  const int dev = current_device();
  if (dev == ready) return bytes;
  for (const void* k : {reinterpret_cast<const void*>(restage_segments_kernel<true>),
                        reinterpret_cast<const void*>(restage_segments_kernel<false>)})
    opt_in_shared(k, bytes);
  ready = dev;
  return bytes;
}

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
  // shorter runs and slower staging; bench_groupby_gpu BM_WorkerLarge on two GPUs).
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
  const std::int64_t slice_capacity =
      std::min({owned / slices + owned / slices / 10 + 256, fit, std::int64_t{0xFFFF}});
  s.owners = owners;
  s.region_bits = rb;
  s.slice_bits = sb;
  s.slices_per_region = 1 << split;
  s.bucket_capacity =
      (per_bucket + per_bucket / 20 + 4096 + 31) / 32 * 32;  // even: 16-byte aligned pushes
  s.slice_capacity = slice_capacity;
  s.with_y = (owner.fields & kSumY) != 0;
  const double row = s.with_y ? 24.0 : 16.0;
  s.bytes = row * static_cast<double>(buckets * s.bucket_capacity + slices * s.slice_capacity) +
            8.0 * static_cast<double>(buckets * (1 + 2 * kSegFields) + 2 * slices);
  return s;
}

void alloc_row_shuffle(RowShuffle& s) {
  const auto B = static_cast<std::size_t>(s.buckets());
  const auto S = static_cast<std::size_t>(s.slices_per_region) << s.region_bits;
  const std::size_t rows = B * static_cast<std::size_t>(s.bucket_capacity);
  const std::size_t srows = S * static_cast<std::size_t>(s.slice_capacity);
  // The send buckets in one allocation (keys, x, y planes back to back), so that the worker's
  // own buckets read like received data (shuffle_aggregate with from_buckets).
  SB_CUDA_CHECK(cudaMalloc(
      &s.key, sizeof(std::int64_t) * static_cast<std::size_t>(s.bucket_key_words() +
                                                              (s.planes() - 1) * s.plane_rows())));
  s.x = reinterpret_cast<double*>(s.key + s.bucket_key_words());
  s.y = s.with_y ? s.x + rows : nullptr;
  SB_CUDA_CHECK(cudaMalloc(&s.cursor, sizeof(unsigned long long) * B));
  SB_CUDA_CHECK(cudaMemset(s.cursor, 0, sizeof(unsigned long long) * B));
  alloc_rows(srows, s.with_y, s.slice_key, s.slice_x, s.slice_y);
  SB_CUDA_CHECK(cudaMalloc(&s.slice_cursor, sizeof(unsigned long long) * S));
  SB_CUDA_CHECK(cudaMalloc(&s.spilled, sizeof(unsigned long long) * S));
  SB_CUDA_CHECK(cudaMallocHost(&s.host_segments, sizeof(std::int64_t) * kSegFields * B));
  SB_CUDA_CHECK(cudaMalloc(&s.segments, sizeof(std::int64_t) * kSegFields * B));
}

void free_row_shuffle(RowShuffle& s) {
  for (void* p : {static_cast<void*>(s.key),  // with x and y
                  static_cast<void*>(s.cursor), static_cast<void*>(s.slice_key),
                  static_cast<void*>(s.slice_x), static_cast<void*>(s.slice_y),
                  static_cast<void*>(s.slice_cursor), static_cast<void*>(s.spilled),
                  static_cast<void*>(s.send), static_cast<void*>(s.recv),
                  static_cast<void*>(s.segments), static_cast<void*>(s.landing),
                  static_cast<void*>(s.dests), static_cast<void*>(s.snapshots)})
    if (p != nullptr) (void)cudaFree(p);
  if (s.host_segments != nullptr) (void)cudaFreeHost(s.host_segments);
  if (s.host_snapshots != nullptr) (void)cudaFreeHost(s.host_snapshots);
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
  shuffle_stage(owner, spill, s, RowSource::columns(in), n, stream);
}

void shuffle_stage(const HashTable& owner, const HashTable& spill, const RowShuffle& s,
                   const RowSource& in, std::int64_t n, cudaStream_t stream) {
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
  // tasks, and the spare blocks fill what they leave (tools/gpu-campaign.sh bykey, against
  // exactly the resident blocks).
  launch_stage_rows(tt, in, n, s.key, s.x, s.y, s.bucket_capacity, s.cursor, spill.overflow,
                    s.narrow_keys, 3, stream);
}

void shuffle_cursors(const RowShuffle& s, unsigned long long* host, cudaStream_t stream) {
  SB_CUDA_CHECK(cudaMemcpyAsync(host, s.cursor, sizeof(unsigned long long) * s.buckets(),
                                cudaMemcpyDeviceToHost, stream));
  SB_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void shuffle_upload(const RowShuffle& s, cudaStream_t stream) {
  SB_CUDA_CHECK(cudaMemcpyAsync(s.segments, s.host_segments,
                                sizeof(std::int64_t) * kSegFields * s.buckets(),
                                cudaMemcpyHostToDevice, stream));
}

void shuffle_pack(const RowShuffle& s, int seg0, int nseg, cudaStream_t stream) {
  if (nseg <= 0) return;
  const std::int64_t B = s.buckets();
  const std::int64_t* seg = s.segments + seg0;
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
  const std::size_t smem = slice_shared_bytes(s.slice_bits, owner.width, s.slice_capacity);
  opt_in_slice_fold(smem);
  fold_slices(slots, mask, owner.width, owner.fields, s.slice_bits, s.slice_key, s.narrow_keys,
              s.slice_x, s.slice_y, s.slice_capacity, s.slice_cursor, s.spilled, owner.overflow,
              slice0, count, smem, stream);
}

void shuffle_fold_emit(const HashTable& owner, const RowShuffle& s, std::uint64_t* out,
                       cudaStream_t stream) {
  const std::size_t smem = slice_shared_bytes(s.slice_bits, owner.width, s.slice_capacity);
  opt_in_slice_fold(smem);
  // No first level here: a full send bucket's rows go to the spill table, not the owner's.
  fold_emit_slices(owner, s.slice_bits, s.slice_key, s.narrow_keys, s.slice_x, s.slice_y,
                   s.slice_capacity, s.slice_cursor,
                   static_cast<unsigned>(s.regions() * s.slices_per_region), smem, out, nullptr, 0,
                   1, stream);
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

void shuffle_slices_clear(const RowShuffle& s, int region0, int nregions, cudaStream_t stream) {
  const auto per = static_cast<std::size_t>(s.slices_per_region);
  SB_CUDA_CHECK(cudaMemsetAsync(
      s.slice_cursor + static_cast<std::size_t>(region0) * per, 0,
      sizeof(unsigned long long) * static_cast<std::size_t>(nregions) * per, stream));
}

void shuffle_recv_segment(const RowShuffle& s, std::int64_t idx, std::int64_t key, std::int64_t x,
                          std::int64_t plane, std::int64_t rows, int region) {
  const std::int64_t B = s.buckets();
  std::int64_t* hs = s.host_segments;
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
    shuffle_recv_segment(s, idx, b * s.bucket_capacity,
                         s.bucket_key_words() + b * s.bucket_capacity, s.plane_rows(),
                         static_cast<std::int64_t>(std::min<unsigned long long>(
                             counts[b], static_cast<unsigned long long>(s.bucket_capacity))),
                         r);
  }
  return R;
}

int shuffle_landing_segments(const RowShuffle& s, int me, const long long* rows, int stride,
                             const long long* from) {
  const int R = s.regions();
  int n = R;
  for (int q = 0; q < s.owners; ++q) {
    if (q == me) continue;
    for (int r = 0; r < R; ++r, ++n) {
      const std::size_t i = static_cast<std::size_t>(q) * stride + r;
      const std::int64_t first = from != nullptr ? from[i] : 0;
      const std::int64_t w0 = s.landing_block() * q;  // the block's first word
      const std::int64_t at = static_cast<std::int64_t>(r) * s.bucket_capacity + first;
      shuffle_recv_segment(s, n, s.key_offset(w0) + at,
                           w0 + s.key_words(R * s.bucket_capacity) + at,
                           static_cast<std::int64_t>(R) * s.bucket_capacity, rows[i] - first, r);
    }
  }
  return n - R;
}

void shuffle_restage(const HashTable& owner, const RowShuffle& s, int seg0, int nseg,
                     const void* data, cudaStream_t stream) {
  std::int64_t rows = 0;
  const std::int64_t B = s.buckets();
  for (int q = seg0; q < seg0 + nseg; ++q) rows += s.host_segments[kRecvRows * B + q];
  if (rows <= 0) return;
  const std::int64_t* seg = s.segments + seg0;
  const auto launch = [&](auto* kernel, auto* slice_key) {
    const int grid = grid_for(
        rows, kStageThreads * kStageRows,
        resident_blocks(reinterpret_cast<const void*>(kernel), kStageThreads, segments_shared()));
    kernel<<<grid, kStageThreads, segments_shared(), stream>>>(
        slice_target(owner, s), nseg, seg + kRecvKey * B, seg + kRecvOff * B, seg + kRecvRows * B,
        seg + kRecvRegion * B, seg + kRecvPlane * B, static_cast<const std::uint64_t*>(data),
        s.with_y, slice_key, s.slice_x, s.slice_y, s.slice_capacity, s.slice_cursor,
        owner.overflow);
  };
  // The slice buckets keep the keys as they travel (32-bit words when narrow).
  if (s.narrow_keys) {
    launch(restage_segments_kernel<true>, reinterpret_cast<std::uint32_t*>(s.slice_key));
  } else {
    launch(restage_segments_kernel<false>, reinterpret_cast<std::uint64_t*>(s.slice_key));
  }
  SB_CUDA_CHECK_LAUNCH();
}

}  // namespace sb::groupby::gpu
