#include "svd/svd_gpu_kernels.cuh"

#include <algorithm>

#include "scalebench/error.hpp"
#include "scalebench/gpu_device.cuh"
#include "scalebench/gpu_error.cuh"
#include "scalebench/philox.cuh"
#include "svd/sketch.hpp"

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

constexpr int kSketchThreads = 512;
constexpr int kSketchSegment = 4096;  ///< rows of A per thread block

/// One thread block: a segment of up to kSketchSegment rows and a range of columns. The rows'
/// hits (16 bits each: row of Y, sign in bit 15) are computed once into shared memory; then per
/// column the block sums its rows into a shared copy of Y's column with shared atomics and adds
/// the result to y with one global atomic per nonzero row of Y. (This beat blocks that keep 8
/// columns of Y in shared memory and flush less often: they fit one block per SM, and the shared
/// atomics want the warps; bench_svd_gpu bm_case, the tasks of a sketch case.)
__global__ void __launch_bounds__(kSketchThreads)
    sketch_kernel(const double* __restrict__ a, std::int64_t lda, std::int64_t row0,
                  std::int64_t rows, std::int64_t n, std::uint64_t key,
                  const double* __restrict__ inv_scales, unsigned long long* __restrict__ y,
                  std::int64_t s, std::int64_t cols_per_block) {
  extern __shared__ unsigned long long acc[];  // s words, then the hits
  auto* hits = reinterpret_cast<std::uint16_t*>(acc + s);
  const std::int64_t seg0 = blockIdx.x * std::int64_t{kSketchSegment};
  const int seg = static_cast<int>(min(std::int64_t{kSketchSegment}, rows - seg0));
  const std::int64_t layer_rows = s / kSketchLayers;
  for (int i = threadIdx.x; i < seg * kSketchLayers; i += blockDim.x) {
    const int t = i / seg, r = i - t * seg;
    const std::uint32_t h =
        sketch_hit(key, static_cast<std::uint64_t>(row0 + seg0 + r), t, layer_rows);
    hits[t * kSketchSegment + r] =
        static_cast<std::uint16_t>((h & 0x7fffu) | ((h >> 16) & 0x8000u));
  }
  const std::int64_t j0 = blockIdx.y * cols_per_block;
  const std::int64_t j1 = min(n, j0 + cols_per_block);
  for (std::int64_t j = j0; j < j1; ++j) {
    for (std::int64_t i = threadIdx.x; i < s; i += blockDim.x) acc[i] = 0;
    __syncthreads();
    const double inv = inv_scales[j];
    const double* col = a + j * lda + seg0;
    // A 64-bit shared atomic add compiles to a compare-and-swap loop (ATOMS.CAST.SPIN.64 on
    // sm_90); two native 32-bit adds with the low word's carry give the same sum mod 2^64:
    // every carry out of the low word is added to the high word once.
    auto* acc32 = reinterpret_cast<unsigned*>(acc);
    for (int r = threadIdx.x; r < seg; r += blockDim.x) {
      const auto q = static_cast<unsigned long long>(sketch_fixed(col[r], inv));
#pragma unroll
      for (int t = 0; t < kSketchLayers; ++t) {
        const std::uint16_t h = hits[t * kSketchSegment + r];
        const unsigned long long v = (h & 0x8000u) != 0 ? 0ULL - q : q;
        const auto lo = static_cast<unsigned>(v);
        const unsigned old = atomicAdd(&acc32[2 * (h & 0x7fffu)], lo);
        const unsigned hi = static_cast<unsigned>(v >> 32) + (old + lo < old ? 1u : 0u);
        if (hi != 0) atomicAdd(&acc32[2 * (h & 0x7fffu) + 1], hi);
      }
    }
    __syncthreads();
    for (std::int64_t i = threadIdx.x; i < s; i += blockDim.x) {
      const unsigned long long v = acc[i];
      if (v != 0) atomicAdd(&y[i + j * s], v);
    }
    __syncthreads();
  }
}

__global__ void identity_kernel(double* __restrict__ x, std::int64_t ldx, std::int64_t n) {
  const std::int64_t r = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
  const std::int64_t j = blockIdx.y;
  if (r < n) x[r + j * ldx] = r == j ? 1.0 : 0.0;
}

__global__ void sum_matrices_kernel(double* __restrict__ dst, const double* __restrict__ src,
                                    int count, std::int64_t elems) {
  const std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
  if (i >= elems) return;
  double v = src[i];
  for (int p = 1; p < count; ++p) v += src[p * elems + i];
  dst[i] = v;
}

__global__ void sketch_to_double_kernel(const unsigned long long* __restrict__ y,
                                        double* __restrict__ yd, std::int64_t s,
                                        const double* __restrict__ scales) {
  const std::int64_t r = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
  const std::int64_t j = blockIdx.y;
  if (r >= s) return;
  constexpr double unit = 1.0 / static_cast<double>(std::int64_t{1} << kSketchFracBits);
  yd[r + j * s] = static_cast<double>(static_cast<long long>(y[r + j * s])) * unit * scales[j];
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

void sketch_rows(const double* a, std::int64_t lda, std::int64_t row0, std::int64_t rows,
                 std::int64_t n, std::uint64_t key, const double* inv_scales, unsigned long long* y,
                 cudaStream_t stream) {
  if (rows <= 0 || n <= 0) return;
  SB_EXPECTS(n <= kSketchMaxColumns, "svd: the sketch takes at most 8192 columns");
  const std::int64_t s = sketch_height(n);
  const std::size_t smem = static_cast<std::size_t>(s) * sizeof(unsigned long long) +
                           std::size_t{kSketchSegment} * kSketchLayers * sizeof(std::uint16_t);
  static const bool opted_in = [] {
    const std::size_t most = static_cast<std::size_t>(sketch_height(kSketchMaxColumns)) * 8 +
                             std::size_t{kSketchSegment} * kSketchLayers * 2;
    SB_CUDA_CHECK(cudaFuncSetAttribute(sketch_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(most)));
    return true;
  }();
  (void)opted_in;
  // Enough blocks for two per SM: row segments first, then columns split among them.
  const std::int64_t gx = (rows + kSketchSegment - 1) / kSketchSegment;
  const std::int64_t want = 2 * sb::gpu::sm_count();
  const std::int64_t gy0 = std::clamp<std::int64_t>((want + gx - 1) / gx, 1, n);
  const std::int64_t cols = (n + gy0 - 1) / gy0;
  const std::int64_t gy = (n + cols - 1) / cols;
  sketch_kernel<<<dim3(static_cast<unsigned>(gx), static_cast<unsigned>(gy)), kSketchThreads, smem,
                  stream>>>(a, lda, row0, rows, n, key, inv_scales, y, s, cols);
  SB_CUDA_CHECK_LAUNCH();
}

void set_identity(double* x, std::int64_t ldx, std::int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  identity_kernel<<<grid_of(n, n), kRowsPerBlock, 0, stream>>>(x, ldx, n);
  SB_CUDA_CHECK_LAUNCH();
}

void sum_matrices(double* dst, const double* src, int count, std::int64_t n, cudaStream_t stream) {
  const std::int64_t elems = n * n;
  if (elems <= 0 || count <= 0) return;
  sum_matrices_kernel<<<static_cast<unsigned>((elems + 255) / 256), 256, 0, stream>>>(dst, src,
                                                                                      count, elems);
  SB_CUDA_CHECK_LAUNCH();
}

void trsm_right_upper(cublasHandle_t h, std::int64_t rows, std::int64_t n, const double* r,
                      std::int64_t ldr, double* a, std::int64_t lda, double* d, std::int64_t ldd,
                      double* scratch) {
  if (rows <= 0 || n <= 0) return;
  const double one = 1.0, zero = 0.0, minus_one = -1.0;
  const int ir = static_cast<int>(rows), in = static_cast<int>(n);
  if (n <= 128) {
    // X = r^-1 (a triangular solve of the identity: its lower part comes out exactly zero),
    // then d = a X by gemm.
    cudaStream_t st = nullptr;
    SB_CUBLAS_CHECK(cublasGetStream(h, &st));
    set_identity(scratch, n, n, st);
    SB_CUBLAS_CHECK(cublasDtrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                                CUBLAS_DIAG_NON_UNIT, in, in, &one, r, static_cast<int>(ldr),
                                scratch, in));
    SB_CUBLAS_CHECK(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, ir, in, in, &one, a,
                                static_cast<int>(lda), scratch, in, &zero, d,
                                static_cast<int>(ldd)));
    return;
  }
  const std::int64_t n1 = (n / 2 + 63) / 64 * 64, n2 = n - n1;
  trsm_right_upper(h, rows, n1, r, ldr, a, lda, d, ldd, scratch);
  SB_CUBLAS_CHECK(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, ir, static_cast<int>(n2),
                              static_cast<int>(n1), &minus_one, d, static_cast<int>(ldd),
                              r + n1 * ldr, static_cast<int>(ldr), &one, a + n1 * lda,
                              static_cast<int>(lda)));
  trsm_right_upper(h, rows, n2, r + n1 + n1 * ldr, ldr, a + n1 * lda, lda, d + n1 * ldd, ldd,
                   scratch);
}

void gram_upper(cublasHandle_t h, std::int64_t rows, std::int64_t n, const double* a,
                std::int64_t lda, double* g, std::int64_t ldg) {
  if (n <= 0) return;
  const double one = 1.0, zero = 0.0;
  // Short: one syrk beats the recursion's extra launches; from 16 n rows the recursion wins
  // (bench_svd_gpu bm_case, the seed and large presets' slices).
  if (n <= 128 || rows < 16 * n) {
    SB_CUBLAS_CHECK(cublasDsyrk(h, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T, static_cast<int>(n),
                                static_cast<int>(rows), &one, a, static_cast<int>(lda), &zero, g,
                                static_cast<int>(ldg)));
    return;
  }
  const std::int64_t n1 = (n / 2 + 63) / 64 * 64, n2 = n - n1;
  gram_upper(h, rows, n1, a, lda, g, ldg);
  SB_CUBLAS_CHECK(cublasDgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(n1),
                              static_cast<int>(n2), static_cast<int>(rows), &one, a,
                              static_cast<int>(lda), a + n1 * lda, static_cast<int>(lda), &zero,
                              g + n1 * ldg, static_cast<int>(ldg)));
  gram_upper(h, rows, n2, a + n1 * lda, lda, g + n1 + n1 * ldg, ldg);
}

void sketch_to_double(const unsigned long long* y, double* yd, std::int64_t n, const double* scales,
                      cudaStream_t stream) {
  const std::int64_t s = sketch_height(n);
  sketch_to_double_kernel<<<grid_of(s, n), kRowsPerBlock, 0, stream>>>(y, yd, s, scales);
  SB_CUDA_CHECK_LAUNCH();
}

}  // namespace sb::svd::gpu
