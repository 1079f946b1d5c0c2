// Low-cardinality groupby on a GPU (dense_agg.cuh): privatised shared-memory tables, one
// partial per block, the partials added in block order.
#include "groupby/gpu/dense_agg.cuh"

#include <algorithm>
#include <string>

#include "groupby/gpu/detail/device_helpers.cuh"
#include "groupby/gpu/detail/launch_config.cuh"
#include "scalebench/gpu_error.cuh"

namespace sb::groupby::gpu {

using namespace detail;

namespace {

constexpr int kPrivThreads = 128;  // threads of the privatised kernel (columns of its arrays)
constexpr int kSharedThreads = 256;
constexpr int kMaxPrivateDomain = 32;

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

}  // namespace sb::groupby::gpu
