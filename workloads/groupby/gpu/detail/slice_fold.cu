// The fold of staged rows into shared-memory slices of a hash table (slice_fold.cuh).
#include "groupby/gpu/detail/slice_fold.cuh"

#include <algorithm>

#include "groupby/gpu/detail/device_helpers.cuh"
#include "groupby/gpu/detail/launch_config.cuh"
#include "groupby/gpu/detail/record_summary.cuh"
#include "scalebench/gpu_error.cuh"

namespace sb::groupby::gpu::detail {

namespace {

constexpr int kSliceThreads = 512;
constexpr std::size_t kSliceTableBytes = 50 * 1024;  // the slice's slots
constexpr int kSliceMaxPer = 4;                      // slots scanned per thread

/// One block per slice of 2^slice_bits slots. The slice is loaded into shared memory; every row
/// of the slice's bucket finds or inserts its key there (64-bit compare-and-swap, the only
/// atomic on a slot) and is counted per slot; the rows are then ordered by slot (a counting
/// sort of 16-bit row numbers), and one thread per slot folds its rows in registers and
/// updates the slot without atomics (shared-memory fp64 adds and 64-bit min/max would be
/// compare-and-swap loops). The slice is written back. Rows whose probe runs past the end of
/// the slice are counted in spilled[slice] and left for spill_rows_kernel.
///
/// kEmit (the last fold of a pass, fold_emit_slices): the slice starts empty instead of being
/// read, a probe wraps around the slice (its slots need not be the table's), its groups go to
/// em.out as records with their checksums instead of back to the table, and the rows that found
/// no slot (the slice is full) go to the table at once; em.status->spilled then tells the caller
/// to merge the records into the table.
///
/// Two blocks share an SM (the launch bound keeps the registers to 64; shared memory allows two).
/// Each phase keeps several independent loads in flight per thread (keys four at a time in A,
/// a slot's x and y four rows at a time in D): a block's phases are latency-bound.
template <bool kEmit, class Key>
__global__ void __launch_bounds__(kSliceThreads, 2)
    slice_aggregate_kernel(unsigned long long* __restrict__ slots, std::uint64_t mask, int width,
                           unsigned fields, int slice_bits, const Key* __restrict__ keys,
                           const double* __restrict__ x, const double* __restrict__ y,
                           std::int64_t cap, const unsigned long long* __restrict__ cursor,
                           unsigned long long* __restrict__ spilled, unsigned slice0,
                           EmitTarget em) {
  extern __shared__ unsigned long long s_slice[];
  __shared__ unsigned s_nspill;
  __shared__ unsigned long long s_emit, s_emit_base;
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
  const int n = static_cast<int>(min(static_cast<std::int64_t>(cursor[slice]), cap));
  const std::int64_t off = static_cast<std::int64_t>(slice) * cap;
  const Key* kin = keys + off;
  const double* xin = x + off;
  const bool ry = (fields & kSumY) != 0;
  const double* yin = ry ? y + off : nullptr;
  // The bucket into L2 while the slice is set up: the keys are read next (A), x and y by each
  // slot's thread in D, scattered over the bucket.
  prefetch_l2(kin, n);
  prefetch_l2(xin, n);
  prefetch_l2(yin, n);
  if constexpr (kEmit) {
    // Slot by slot, the pattern's words at constant indices (a word index taken modulo the
    // width would copy the pattern to local memory in every thread).
    for (int p = threadIdx.x; p < slots_per_slice; p += kSliceThreads) {
      unsigned long long* c = s_slice + p * width;
#pragma unroll
      for (int w = 0; w < kMaxSlotWords; ++w)
        if (w < width) c[w] = em.empty.w[w];
    }
  } else {
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
  // A: every key to its slot. The slots of a slice that is written back are the table's, so
  // a probe stops at the slice's end; one whose groups become records probes around the slice
  // (its keys spill only when it is full).
  constexpr int kBatch = 4;  // keys loaded before the first probe
  for (int i0 = threadIdx.x; i0 < n; i0 += kBatch * kSliceThreads) {
    long long kb[kBatch];
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      const int i = i0 + u * kSliceThreads;
      kb[u] = i < n ? static_cast<long long>(kin[i]) : 0;
    }
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      const int i = i0 + u * kSliceThreads;
      if (i >= n) break;
      const long long k = kb[u];
      int hit = -1;
      const int home = static_cast<int>((slot_hash(k) & mask) - first);
      for (int step = 0; step < slots_per_slice - (kEmit ? 0 : home); ++step) {
        const int p = kEmit ? (home + step) & (slots_per_slice - 1) : home + step;
        unsigned long long* c = s_slice + p * width;
        const unsigned long long cur = *reinterpret_cast<volatile unsigned long long*>(c);
        if (cur == static_cast<unsigned long long>(k)) {
          hit = p;
          break;
        }
        if (cur == kEmptyKey) {
          const unsigned long long prev =
              atomicCAS(c, kEmptyKey, static_cast<unsigned long long>(k));
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
    constexpr int kGather = 4;  // rows whose x and y are loaded before the first is added
    for (unsigned j0 = end - c; j0 < end; j0 += kGather) {
      double xv[kGather], yv[kGather];
#pragma unroll
      for (int u = 0; u < kGather; ++u) {
        const bool in = j0 + u < end;
        const int i = in ? s_order[j0 + u] : 0;
        xv[u] = in ? xin[i] : 0.0;
        yv[u] = in && ry ? yin[i] : 0.0;
      }
#pragma unroll
      for (int u = 0; u < kGather; ++u) {
        if (j0 + u >= end) break;
        sx += xv[u];
        sxx += xv[u] * xv[u];
        mn = fmin(mn, xv[u]);
        mx = fmax(mx, xv[u]);
        sy += yv[u];
      }
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
  if constexpr (kEmit) {
    // E: rows without a slot here, into the table.
    if (s_nspill != 0) {
      for (int i = threadIdx.x; i < n; i += kSliceThreads) {
        if (s_slot[i] != 0xFFFFu) continue;
        const double xv = xin[i];
        const double yv = ry ? yin[i] : 0.0;
        unsigned long long* t = upsert_slot(slots, mask, width, kin[i], em.overflow);
        if (t != nullptr) accumulate(t, fields, 1ull, xv, yv, xv * xv, xv, xv);
      }
    }
    // F: the slice's groups as records (one global atomic per block for their place), and
    // whether any row of the slice reached the table: spilled here, or before the fold from a
    // full bucket of this level or of the first.
    if (threadIdx.x == 0) s_emit = 0;
    __syncthreads();
    const int per = slots_per_slice / kSliceThreads;  // 1..kSliceMaxPer (checked on the host)
    unsigned long long pos[kSliceMaxPer];
#pragma unroll
    for (int e = 0; e < kSliceMaxPer; ++e) {
      const int p = e * kSliceThreads + threadIdx.x;
      const bool valid = e < per && s_slice[p * width] != kEmptyKey;
      if (e < per) pos[e] = warp_claim(&s_emit, 0, valid);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      s_emit_base = s_emit != 0 ? atomicAdd(&em.status->records, s_emit) : 0;
      const bool touched =
          s_nspill != 0 || cursor[slice] > static_cast<unsigned long long>(cap) ||
          (em.region_cursor != nullptr && em.region_cursor[slice / static_cast<unsigned>(em.per)] >
                                              static_cast<unsigned long long>(em.region_capacity));
      if (touched) atomicExch(&em.status->spilled, 1);
    }
    // The occupied slots in record order (s_cur is free after D), then the block's records
    // written as one run of words, consecutive threads on consecutive words.
    unsigned* s_list = s_cur;
    double v[6] = {0, 0, 0, 0, 0, 0};
#pragma unroll
    for (int e = 0; e < kSliceMaxPer; ++e) {
      const int p = e * kSliceThreads + threadIdx.x;
      if (e >= per || s_slice[p * width] == kEmptyKey) continue;
      s_list[pos[e]] = static_cast<unsigned>(p);
      summary_add(v, s_slice + p * width, fields);
    }
    __syncthreads();
    const auto uw = static_cast<unsigned>(width);
    const unsigned total = static_cast<unsigned>(s_emit) * uw;
    unsigned long long* dst = em.out + s_emit_base * uw;
    for (unsigned j = threadIdx.x; j < total; j += kSliceThreads) {
      const unsigned r = j / uw;
      dst[j] = s_slice[s_list[r] * uw + (j - r * uw)];
    }
    summary_flush(v, em.status->sum);
  } else {
    for (int j = threadIdx.x; j < words; j += kSliceThreads) g[j] = s_slice[j];
    if (threadIdx.x == 0) spilled[slice] = s_nspill;
  }
}

/// The rows slice_aggregate_kernel could not place, into the global table (one block per
/// slice; slices without spills return at once). A row spilled exactly when, in the written-back
/// slice, every slot from its home to the slice's end holds another key (slots only fill up),
/// so the rows are told apart without a list.
template <class Key>
__global__ void spill_rows_kernel(unsigned long long* __restrict__ slots, std::uint64_t mask,
                                  int width, unsigned fields, int slice_bits,
                                  const Key* __restrict__ keys, const double* __restrict__ x,
                                  const double* __restrict__ y, std::int64_t cap,
                                  const unsigned long long* __restrict__ cursor,
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
    const auto k = static_cast<long long>(keys[o]);
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

}  // namespace

std::size_t slice_shared_bytes(int slice_bits, int width, std::int64_t cap) {
  const std::size_t slots = std::size_t{1} << slice_bits;
  return slots * static_cast<std::size_t>(width) * 8 + slots * 8 +
         static_cast<std::size_t>(cap) * 4;
}

int slice_bits_for(int width) {
  int b = 0;
  while ((std::size_t{2} << b) * static_cast<std::size_t>(width) * 8 <= kSliceTableBytes) ++b;
  return std::clamp(b, 9, 11);
}

void opt_in_slice_fold(std::size_t smem) {
  for (const void* k : {reinterpret_cast<const void*>(slice_aggregate_kernel<false, std::int64_t>),
                        reinterpret_cast<const void*>(slice_aggregate_kernel<true, std::int64_t>),
                        reinterpret_cast<const void*>(slice_aggregate_kernel<false, std::uint32_t>),
                        reinterpret_cast<const void*>(slice_aggregate_kernel<true, std::uint32_t>)})
    opt_in_shared(k, smem);
}

namespace {

template <class Key>
void fold_slices_of(unsigned long long* slots, std::uint64_t mask, int width, unsigned fields,
                    int slice_bits, const Key* keys, const double* x, const double* y,
                    std::int64_t cap, const unsigned long long* cursor, unsigned long long* spilled,
                    int* overflow, unsigned slice0, unsigned count, std::size_t smem,
                    cudaStream_t stream) {
  slice_aggregate_kernel<false, Key>
      <<<count, kSliceThreads, smem, stream>>>(slots, mask, width, fields, slice_bits, keys, x, y,
                                               cap, cursor, spilled, slice0, EmitTarget{});
  SB_CUDA_CHECK_LAUNCH();
  spill_rows_kernel<Key><<<count, 128, 0, stream>>>(slots, mask, width, fields, slice_bits, keys, x,
                                                    y, cap, cursor, spilled, overflow, slice0);
  SB_CUDA_CHECK_LAUNCH();
}

}  // namespace

void fold_slices(unsigned long long* slots, std::uint64_t mask, int width, unsigned fields,
                 int slice_bits, const std::int64_t* keys, bool narrow, const double* x,
                 const double* y, std::int64_t cap, const unsigned long long* cursor,
                 unsigned long long* spilled, int* overflow, unsigned slice0, unsigned count,
                 std::size_t smem, cudaStream_t stream) {
  if (count == 0) return;
  if (narrow) {
    fold_slices_of(slots, mask, width, fields, slice_bits,
                   reinterpret_cast<const std::uint32_t*>(keys), x, y, cap, cursor, spilled,
                   overflow, slice0, count, smem, stream);
  } else {
    fold_slices_of(slots, mask, width, fields, slice_bits, keys, x, y, cap, cursor, spilled,
                   overflow, slice0, count, smem, stream);
  }
}

void fold_emit_slices(const HashTable& t, int slice_bits, const std::int64_t* keys, bool narrow,
                      const double* x, const double* y, std::int64_t cap,
                      const unsigned long long* cursor, unsigned count, std::size_t smem,
                      std::uint64_t* out, const unsigned long long* region_cursor,
                      std::int64_t region_capacity, int per, cudaStream_t stream) {
  SB_CUDA_CHECK(cudaMemsetAsync(t.status, 0, sizeof(TableStatus), stream));
  if (count == 0) return;
  EmitTarget em;
  em.empty = empty_slot(t.fields);
  em.out = reinterpret_cast<unsigned long long*>(out);
  em.status = t.status;
  em.region_cursor = region_cursor;
  em.region_capacity = region_capacity;
  em.per = per;
  em.overflow = t.overflow;
  auto* slots = reinterpret_cast<unsigned long long*>(t.slots);
  const auto mask = static_cast<std::uint64_t>(t.capacity - 1);
  if (narrow) {
    slice_aggregate_kernel<true, std::uint32_t><<<count, kSliceThreads, smem, stream>>>(
        slots, mask, t.width, t.fields, slice_bits, reinterpret_cast<const std::uint32_t*>(keys), x,
        y, cap, cursor, nullptr, 0u, em);
  } else {
    slice_aggregate_kernel<true, std::int64_t><<<count, kSliceThreads, smem, stream>>>(
        slots, mask, t.width, t.fields, slice_bits, keys, x, y, cap, cursor, nullptr, 0u, em);
  }
  SB_CUDA_CHECK_LAUNCH();
}

}  // namespace sb::groupby::gpu::detail
