#include "svd/svd_gpu_kernels.cuh"

#include "scalebench/gpu_error.cuh"
#include "scalebench/philox.cuh"

namespace sb::svd::gpu {

namespace {

constexpr int kRowsPerBlock = 256;

/// One thread per element, columns on grid.y: consecutive threads write consecutive rows.
__global__ void generate_kernel(double* __restrict__ a, std::int64_t lda, std::int64_t row0,
                                std::int64_t rows, std::int64_t n, std::uint64_t seed,
                                const double* __restrict__ scales) {
  const std::int64_t r = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
  const std::int64_t j = blockIdx.y;
  if (r >= rows) return;
  const auto e = static_cast<std::uint64_t>((row0 + r) * n + j);
  const uint4 w = data::gpu::philox_words(seed, e >> 1);
  const double u = (e & 1u) ? data::gpu::u01(w.z, w.w) : data::gpu::u01(w.x, w.y);
  a[r + j * lda] = u * scales[j];
}

__global__ void pad_copy_kernel(double* __restrict__ dst, std::int64_t ldd, std::int64_t rows,
                                const double* __restrict__ src, std::int64_t lds, std::int64_t top,
                                bool triu) {
  const std::int64_t r = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
  const std::int64_t j = blockIdx.y;
  if (r >= rows) return;
  double v = 0.0;
  if (r < top && (!triu || r <= j)) v = src[r + j * lds];
  dst[r + j * ldd] = v;
}

__global__ void copy_kernel(double* __restrict__ dst, std::int64_t ldd,
                            const double* __restrict__ src, std::int64_t lds, std::int64_t rows) {
  const std::int64_t r = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
  const std::int64_t j = blockIdx.y;
  if (r < rows) dst[r + j * ldd] = src[r + j * lds];
}

__global__ void gram_to_svd_kernel(const double* __restrict__ e, const double* __restrict__ w,
                                   double* __restrict__ v, double* __restrict__ s, std::int64_t n) {
  const std::int64_t r = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
  const std::int64_t j = blockIdx.y;
  if (r >= n) return;
  const std::int64_t src = n - 1 - j;
  v[r + j * n] = e[r + src * n];
  if (r == 0) s[j] = sqrt(fmax(w[src], 0.0));
}

__global__ void divide_columns_kernel(double* __restrict__ x, const double* __restrict__ s,
                                      std::int64_t n) {
  const std::int64_t r = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
  const std::int64_t j = blockIdx.y;
  if (r < n) x[r + j * n] /= s[j];
}

dim3 grid_of(std::int64_t rows, std::int64_t n) {
  return dim3(static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock),
              static_cast<unsigned>(n));
}

}  // namespace

void generate_rows(double* a, std::int64_t lda, std::int64_t row0, std::int64_t rows,
                   std::int64_t n, std::uint64_t seed, const double* scales, cudaStream_t stream) {
  if (rows <= 0 || n <= 0) return;
  generate_kernel<<<grid_of(rows, n), kRowsPerBlock, 0, stream>>>(a, lda, row0, rows, n, seed,
                                                                  scales);
  SB_CUDA_CHECK_LAUNCH();
}

void pad_copy(double* dst, std::int64_t ldd, std::int64_t rows, std::int64_t n, const double* src,
              std::int64_t lds, std::int64_t top, bool triu, cudaStream_t stream) {
  if (rows <= 0 || n <= 0) return;
  pad_copy_kernel<<<grid_of(rows, n), kRowsPerBlock, 0, stream>>>(dst, ldd, rows, src, lds, top,
                                                                  triu);
  SB_CUDA_CHECK_LAUNCH();
}

void copy_matrix(double* dst, std::int64_t ldd, const double* src, std::int64_t lds,
                 std::int64_t rows, std::int64_t n, cudaStream_t stream) {
  if (rows <= 0 || n <= 0) return;
  copy_kernel<<<grid_of(rows, n), kRowsPerBlock, 0, stream>>>(dst, ldd, src, lds, rows);
  SB_CUDA_CHECK_LAUNCH();
}

void gram_to_svd(const double* e, const double* w, double* v, double* s, std::int64_t n,
                 cudaStream_t stream) {
  gram_to_svd_kernel<<<grid_of(n, n), kRowsPerBlock, 0, stream>>>(e, w, v, s, n);
  SB_CUDA_CHECK_LAUNCH();
}

void divide_columns(double* x, const double* s, std::int64_t n, cudaStream_t stream) {
  divide_columns_kernel<<<grid_of(n, n), kRowsPerBlock, 0, stream>>>(x, s, n);
  SB_CUDA_CHECK_LAUNCH();
}

}  // namespace sb::svd::gpu
