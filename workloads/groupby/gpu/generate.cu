// GPU generation of the groupby table (generate.cuh): the per-row functions of table.hpp, bit
// for bit.
#include "groupby/gpu/generate.cuh"

#include <algorithm>

#include "scalebench/gpu_error.cuh"

namespace sb::groupby::gpu {

namespace {

constexpr int kThreads = 256;

__global__ void generate_kernel(TableSpec spec, const PoissonTable* __restrict__ poisson,
                                std::int64_t row0, std::int64_t n, unsigned columns,
                                ColumnPtrs out) {
  extern __shared__ unsigned long long smem_words[];
  const PoissonTable* pt = poisson;
  if (columns & kColId) {
    // Stage the 10 KB table in shared memory: the bisection's loads are divergent.
    constexpr int kWords = sizeof(PoissonTable) / sizeof(unsigned long long);
    const auto* src = reinterpret_cast<const unsigned long long*>(poisson);
    for (int i = threadIdx.x; i < kWords; i += blockDim.x) smem_words[i] = src[i];
    __syncthreads();
    pt = reinterpret_cast<const PoissonTable*>(smem_words);
  }
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const std::int64_t r = row0 + i;
    const auto ur = static_cast<std::uint64_t>(r);
    if (columns & (kColX | kColName | kColId)) {
      const Words4 a = philox4x32_10(ur, kStreamXName, spec.seed);
      if (columns & kColX) out.x[i] = centered_uniform(a.w[0], a.w[1]);
      if (columns & kColName) out.name[i] = name_code(a.w[2]);
      if (columns & kColId) out.id[i] = id_of_word(*pt, a.w[3]);
    }
    if (columns & (kColY | kColKey)) {
      const Words4 b = philox4x32_10(ur, kStreamYKey, spec.seed);
      if (columns & kColY) out.y[i] = centered_uniform(b.w[0], b.w[1]);
      if (columns & kColKey) out.key[i] = bounded_key(b.w[2], b.w[3], spec.cardinality);
    }
    if (columns & kColTimestamp) out.timestamp[i] = timestamp_ns(r);
  }
}

int sm_count() {
  int dev = 0;
  SB_CUDA_CHECK(cudaGetDevice(&dev));
  int sms = 0;
  SB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  return sms;
}

}  // namespace

PoissonTable* upload_poisson_table(const PoissonTable& t, cudaStream_t stream) {
  PoissonTable* d = nullptr;
  SB_CUDA_CHECK(cudaMalloc(&d, sizeof(PoissonTable)));
  SB_CUDA_CHECK(cudaMemcpyAsync(d, &t, sizeof(PoissonTable), cudaMemcpyHostToDevice, stream));
  SB_CUDA_CHECK(cudaStreamSynchronize(stream));
  return d;
}

void generate(const TableSpec& spec, const PoissonTable* d_poisson, std::int64_t row0,
              std::int64_t n, unsigned columns, const ColumnPtrs& out, cudaStream_t stream) {
  if (n <= 0) return;
  if ((columns & kColId) && d_poisson == nullptr)
    throw Error("groupby: GPU generation of `id` needs the device Poisson table");
  static const int sms = sm_count();
  const std::int64_t want = (n + kThreads - 1) / kThreads;
  const int blocks = static_cast<int>(std::min<std::int64_t>(want, std::int64_t{sms} * 16));
  const std::size_t smem = (columns & kColId) ? sizeof(PoissonTable) : 0;
  generate_kernel<<<blocks, kThreads, smem, stream>>>(spec, d_poisson, row0, n, columns, out);
  SB_CUDA_CHECK_LAUNCH();
}

}  // namespace sb::groupby::gpu
