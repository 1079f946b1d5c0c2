// Low-cardinality groupby on a GPU (dense_agg.cuh): privatised shared-memory tables over stored
// or generated rows, each block's sums kept in its own partial, the partials added in block
// order.
#include "groupby/gpu/dense_agg.cuh"

#include <algorithm>
#include <string>

#include "groupby/gpu/detail/device_helpers.cuh"
#include "groupby/gpu/detail/launch_config.cuh"
#include "groupby/gpu/row_source.cuh"
#include "scalebench/gpu_error.cuh"

namespace sb::groupby::gpu {

using namespace detail;

namespace {

constexpr int kPrivThreads = 128;  // threads of the privatised kernel (columns of its arrays)
constexpr int kSharedThreads = 256;
constexpr int kMaxPrivateDomain = 32;
constexpr int kInFlight = 4;  // rows a thread loads or generates before it adds the first

int sum_field_count(unsigned fields) {
  return ((fields & kSumX) ? 1 : 0) + ((fields & kSumY) ? 1 : 0) + ((fields & kSumSqX) ? 1 : 0);
}

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

/// Stored rows: the key column (K: int32 names, int64 ids) and x, y (read when asked for).
template <class K>
struct DenseColumns {
  static constexpr bool kPoisson = false;
  const K* key;
  const double* x;
  const double* y;
  __device__ __forceinline__ void load(std::int64_t i, bool rx, bool ry, const PoissonTable*,
                                       long long& k, double& xv, double& yv) const {
    k = static_cast<long long>(key[i]);
    xv = rx ? x[i] : 0.0;
    yv = ry ? y[i] : 0.0;
  }
};

/// Rows generated here, as generate.cuh writes them: x and the key (kKey: kColName or kColId)
/// from stream kStreamXName, y from kStreamYKey only when asked for (by-name: one Philox call a
/// row, by-id: two). Ids are drawn from the Poisson table `pt` (in shared memory). by-id takes
/// the seed's round keys from the host (1.24 against 1.36 ms for 10^8 rows on an H200,
/// bench_groupby_gpu AggregateDense/query:1/generated:1); by-name, whose one call a row leaves
/// the kernel bound by its other work, adds them up itself (0.64 against 0.74 ms).
template <unsigned kKey>
struct DenseGenerated {
  static constexpr bool kPoisson = kKey == kColId;
  data::gpu::RoundKeys rk;
  std::uint64_t seed;
  std::int64_t row0;
  DenseGenerated(const TableSpec& spec, std::int64_t first)
      : rk(data::gpu::round_keys(spec.seed)), seed(spec.seed), row0(first) {}
  __device__ __forceinline__ Words4 words(std::uint64_t r, std::uint32_t stream) const {
    if constexpr (kKey == kColName) {
      return philox4x32_10(r, stream, seed);
    } else {
      return row_words(r, stream, rk);
    }
  }
  __device__ __forceinline__ void load(std::int64_t i, bool rx, bool ry, const PoissonTable* pt,
                                       long long& k, double& xv, double& yv) const {
    const auto r = static_cast<std::uint64_t>(row0 + i);
    const Words4 a = words(r, kStreamXName);
    xv = rx ? centered_uniform(a.w[0], a.w[1]) : 0.0;
    if constexpr (kKey == kColName) {
      k = name_code(a.w[2]);
    } else {
      k = id_of_word(*pt, a.w[3]);
    }
    yv = 0.0;
    if (ry) {
      const Words4 b = words(r, kStreamYKey);
      yv = centered_uniform(b.w[0], b.w[1]);
    }
  }
};

/// The Poisson table in shared memory when the rows need it (the inversion's loads are
/// divergent), else null. Every thread of the block must call it.
template <class Src>
__device__ __forceinline__ const PoissonTable* stage_poisson(const PoissonTable* global,
                                                             unsigned long long* smem) {
  if constexpr (!Src::kPoisson) {
    return nullptr;
  } else {
    constexpr int kWords = sizeof(PoissonTable) / sizeof(unsigned long long);
    const auto* src = reinterpret_cast<const unsigned long long*>(global);
    for (int i = threadIdx.x; i < kWords; i += blockDim.x) smem[i] = src[i];
    __syncthreads();
    return reinterpret_cast<const PoissonTable*>(smem);
  }
}

/// Words of shared memory the Poisson table takes when Src needs it.
template <class Src>
constexpr std::size_t poisson_words() {
  return Src::kPoisson ? sizeof(PoissonTable) / sizeof(unsigned long long) : 0;
}

/// Per-thread private counters and sums in shared memory ([field][D][threads] doubles, then
/// [D][threads] uint32 counts, after the Poisson table when the rows need it); the block's sums
/// are added to its partial.
template <class Src>
__global__ void __launch_bounds__(kPrivThreads)
    dense_private_kernel(const Src src, const PoissonTable* __restrict__ poisson, std::int64_t n,
                         std::int64_t lo, int D, unsigned fields, double* __restrict__ partials,
                         int words) {
  extern __shared__ unsigned long long smem_w[];
  const PoissonTable* pt = stage_poisson<Src>(poisson, smem_w);
  auto* sums = reinterpret_cast<double*>(smem_w + poisson_words<Src>());
  const FieldSlots fs(fields);
  const bool fx = fs.fx, fy = fs.fy, fxx = fs.fxx;
  const int nf = fs.nf, ix = 0, iy = fs.iy, ixx = fs.ixx;
  const bool rx = fx || fxx;
  constexpr int T = kPrivThreads;
  auto* cnt = reinterpret_cast<unsigned*>(sums + static_cast<std::size_t>(nf) * D * T);
  const int t = threadIdx.x;
  for (int d = 0; d < D; ++d) {
    cnt[d * T + t] = 0u;
    for (int f = 0; f < nf; ++f) sums[(f * D + d) * T + t] = 0.0;
  }
  auto add = [&](long long key, double xv, double yv) {
    const int d = static_cast<int>(key - lo);
    if (static_cast<unsigned>(d) >= static_cast<unsigned>(D)) return;  // not in the domain
    cnt[d * T + t] += 1u;
    if (fx) sums[(ix * D + d) * T + t] += xv;
    if (fxx) sums[(ixx * D + d) * T + t] += xv * xv;
    if (fy) sums[(iy * D + d) * T + t] += yv;
  };
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * T;
  std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * T + t;
  for (; i + (kInFlight - 1) * stride < n; i += kInFlight * stride) {
    long long k[kInFlight];
    double xv[kInFlight], yv[kInFlight];
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) src.load(i + u * stride, rx, fy, pt, k[u], xv[u], yv[u]);
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) add(k[u], xv[u], yv[u]);
  }
  for (; i < n; i += stride) {
    long long k = 0;
    double xv = 0.0, yv = 0.0;
    src.load(i, rx, fy, pt, k, xv, yv);
    add(k, xv, yv);
  }
  __syncthreads();
  const int warp = t >> 5;
  const int lane = t & 31;
  double* mine = partials + static_cast<std::size_t>(blockIdx.x) * words;
  for (int p = warp; p < words; p += T / 32) {
    double s = 0.0;
    if (p < D) {
      for (int j = lane; j < T; j += 32) s += static_cast<double>(cnt[p * T + j]);
    } else {
      for (int j = lane; j < T; j += 32) s += sums[(p - D) * T + j];
    }
    s = warp_sum(s);
    if (lane == 0 && s != 0.0) mine[p] += s;
  }
}

/// One shared-memory table of D slots per block (after the Poisson table when the rows need
/// it), shared atomics; the block's sums are added to its partial.
template <class Src>
__global__ void __launch_bounds__(kSharedThreads)
    dense_shared_kernel(const Src src, const PoissonTable* __restrict__ poisson, std::int64_t n,
                        std::int64_t lo, int D, unsigned fields, double* __restrict__ partials,
                        int words) {
  extern __shared__ unsigned long long smem_w[];
  const PoissonTable* pt = stage_poisson<Src>(poisson, smem_w);
  auto* sums = reinterpret_cast<double*>(smem_w + poisson_words<Src>());
  const FieldSlots fs(fields);
  const bool fx = fs.fx, fy = fs.fy, fxx = fs.fxx;
  const int nf = fs.nf, ix = 0, iy = fs.iy, ixx = fs.ixx;
  const bool rx = fx || fxx;
  auto* cnt = reinterpret_cast<unsigned*>(sums + static_cast<std::size_t>(nf) * D);
  for (int k = threadIdx.x; k < nf * D; k += blockDim.x) sums[k] = 0.0;
  for (int k = threadIdx.x; k < D; k += blockDim.x) cnt[k] = 0u;
  __syncthreads();
  auto add = [&](long long key, double xv, double yv) {
    const int d = static_cast<int>(key - lo);
    if (static_cast<unsigned>(d) >= static_cast<unsigned>(D)) return;
    atomicAdd(&cnt[d], 1u);
    if (fx) atomicAdd(&sums[ix * D + d], xv);
    if (fxx) atomicAdd(&sums[ixx * D + d], xv * xv);
    if (fy) atomicAdd(&sums[iy * D + d], yv);
  };
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + (kInFlight - 1) * stride < n; i += kInFlight * stride) {
    long long k[kInFlight];
    double xv[kInFlight], yv[kInFlight];
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) src.load(i + u * stride, rx, fy, pt, k[u], xv[u], yv[u]);
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) add(k[u], xv[u], yv[u]);
  }
  for (; i < n; i += stride) {
    long long k = 0;
    double xv = 0.0, yv = 0.0;
    src.load(i, rx, fy, pt, k, xv, yv);
    add(k, xv, yv);
  }
  __syncthreads();
  // Groups this block never saw keep a zero count and zero sums: their partial is left alone.
  double* mine = partials + static_cast<std::size_t>(blockIdx.x) * words;
  for (int p = threadIdx.x; p < words; p += blockDim.x) {
    const int d = p % D;
    if (cnt[d] == 0u) continue;
    mine[p] += p < D ? static_cast<double>(cnt[p]) : sums[p - D];
  }
}

/// acc[p] = the sum over blocks of partials[b][p], in block order: one block per word, its
/// threads taking the blocks in turn, then a fixed-shape reduction (deterministic).
__global__ void __launch_bounds__(256)
    dense_reduce_kernel(const double* __restrict__ partials, int blocks, int words,
                        double* __restrict__ acc) {
  __shared__ double s_warp[8];
  const int p = blockIdx.x;
  double s = 0.0;
  for (int b = threadIdx.x; b < blocks; b += blockDim.x)
    s += partials[static_cast<std::size_t>(b) * words + p];
  s = warp_sum(s);
  if ((threadIdx.x & 31) == 0) s_warp[threadIdx.x >> 5] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    double t = 0.0;
    for (int w = 0; w < 8; ++w) t += s_warp[w];
    acc[p] = t;
  }
}

std::size_t private_smem(int D, int nf) {
  return static_cast<std::size_t>(D) * kPrivThreads * (sizeof(double) * nf + sizeof(unsigned));
}
std::size_t shared_smem(int D, int nf) {
  return static_cast<std::size_t>(D) * (sizeof(double) * nf + sizeof(unsigned));
}

/// The launch's grid: as many blocks as its rows fill, at most a.max_blocks (a function of n
/// alone, so that every block adds to its own partial in the same order each repeat).
template <class Src>
void launch_dense(const DenseAgg& a, const Src& src, const PoissonTable* poisson, std::int64_t n,
                  cudaStream_t stream) {
  const int nf = sum_field_count(a.fields);
  const std::size_t extra = poisson_words<Src>() * sizeof(unsigned long long);
  if (a.domain <= kMaxPrivateDomain) {
    const std::size_t smem = private_smem(a.domain, nf) + extra;
    opt_in_shared(reinterpret_cast<const void*>(dense_private_kernel<Src>), smem);
    const std::int64_t want = (n + kPrivThreads * 8 - 1) / (kPrivThreads * 8);
    const int blocks =
        static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(want, a.max_blocks)));
    dense_private_kernel<Src><<<blocks, kPrivThreads, smem, stream>>>(
        src, poisson, n, a.domain_lo, a.domain, a.fields, a.partials, a.words);
  } else {
    const std::size_t smem = shared_smem(a.domain, nf) + extra;
    opt_in_shared(reinterpret_cast<const void*>(dense_shared_kernel<Src>), smem);
    const std::int64_t want = (n + kSharedThreads * 16 - 1) / (kSharedThreads * 16);
    const int blocks =
        static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(want, a.max_blocks)));
    dense_shared_kernel<Src><<<blocks, kSharedThreads, smem, stream>>>(
        src, poisson, n, a.domain_lo, a.domain, a.fields, a.partials, a.words);
  }
  SB_CUDA_CHECK_LAUNCH();
}

}  // namespace

DenseAgg make_dense(const QueryDef& q, const cudaDeviceProp& prop) {
  if (q.high_cardinality || q.domain_size <= 0)
    throw Error("groupby: dense GPU aggregation needs a low-cardinality query");
  if (q.fields & (kMinX | kMaxX))
    throw Error("groupby: the dense GPU aggregation keeps count, sum x, sum y and sum x^2 only");
  if (q.key_column != kColName && q.key_column != kColId)
    throw Error("groupby: the dense GPU aggregation groups by name or id");
  DenseAgg a;
  a.domain_lo = q.domain_lo;
  a.domain = static_cast<int>(q.domain_size);
  a.fields = q.fields;
  a.key_column = q.key_column;
  a.words = (1 + sum_field_count(q.fields)) * a.domain;
  const int nf = sum_field_count(q.fields);
  // The generating kernels of ids also hold the Poisson table.
  const std::size_t smem =
      (a.domain <= kMaxPrivateDomain ? private_smem(a.domain, nf) : shared_smem(a.domain, nf)) +
      (q.key_column == kColId ? sizeof(PoissonTable) : 0);
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
  SB_CUDA_CHECK(cudaMemsetAsync(
      a.partials, 0, sizeof(double) * a.words * static_cast<std::size_t>(a.max_blocks), stream));
}

void dense_aggregate(const QueryDef& q, const DenseAgg& a, const ColumnPtrs& in, std::int64_t n,
                     cudaStream_t stream) {
  if (n <= 0) return;
  if (q.key_column == kColName) {
    launch_dense(a, DenseColumns<std::int32_t>{in.name, in.x, in.y}, nullptr, n, stream);
  } else if (q.key_column == kColId) {
    launch_dense(a, DenseColumns<std::int64_t>{in.id, in.x, in.y}, nullptr, n, stream);
  } else {
    launch_dense(a, DenseColumns<std::int64_t>{in.key, in.x, in.y}, nullptr, n, stream);
  }
}

void dense_generate(const DenseAgg& a, const TableSpec& spec, const PoissonTable* d_poisson,
                    std::int64_t row0, std::int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  if (a.key_column == kColName) {
    launch_dense(a, DenseGenerated<kColName>{spec, row0}, nullptr, n, stream);
  } else {
    if (d_poisson == nullptr)
      throw Error("groupby: GPU generation of `id` needs the device Poisson table");
    launch_dense(a, DenseGenerated<kColId>{spec, row0}, d_poisson, n, stream);
  }
}

void dense_finish(const DenseAgg& a, cudaStream_t stream) {
  dense_reduce_kernel<<<a.words, 256, 0, stream>>>(a.partials, a.max_blocks, a.words, a.acc);
  SB_CUDA_CHECK_LAUNCH();
}

}  // namespace sb::groupby::gpu
