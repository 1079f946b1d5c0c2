#pragma once
/// @file svd_gpu_kernels.cuh
/// Small CUDA kernels of the svd GPU worker: data generation (philox.cuh, bit-identical to
/// svd_data.hpp) and column-major copies that the TSQR needs around cuSOLVER calls.

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace sb::svd::gpu {

/// Rows [row0, row0 + rows) of A into a (column-major, leading dimension lda):
/// a[r + j * lda] = scales[j] * U(0,1)(seed, (row0 + r) * n + j).
void generate_rows(double* a, std::int64_t lda, std::int64_t row0, std::int64_t rows,
                   std::int64_t n, std::uint64_t seed, const double* scales, cudaStream_t stream);

/// dst (rows x n, leading dimension ldd) = [triu(src[0:n, 0:n]); 0] when triu, else
/// [src[0:top, 0:n]; 0]: the top `top` rows come from src (leading dimension lds), the rest
/// are zero. With triu, top must be n and the strictly lower part of the top block is zero.
void pad_copy(double* dst, std::int64_t ldd, std::int64_t rows, std::int64_t n, const double* src,
              std::int64_t lds, std::int64_t top, bool triu, cudaStream_t stream);

/// dst (rows x n, ldd) = src (rows x n, lds): a strided column-major copy.
void copy_matrix(double* dst, std::int64_t ldd, const double* src, std::int64_t lds,
                 std::int64_t rows, std::int64_t n, cudaStream_t stream);

/// From the ascending eigen-decomposition of G = R^T R (eigenvectors e, eigenvalues w, n x n):
/// v[:, i] = e[:, n-1-i] and s[i] = sqrt(max(w[n-1-i], 0)), i.e. V and S in descending order.
void gram_to_svd(const double* e, const double* w, double* v, double* s, std::int64_t n,
                 cudaStream_t stream);

/// x[:, j] /= s[j] for an n x n column-major x.
void divide_columns(double* x, const double* s, std::int64_t n, cudaStream_t stream);

/// Largest n that sketch_rows takes (its shared memory holds a column of Y and the hits).
inline constexpr std::int64_t kSketchMaxColumns = 8192;

/// Adds S[:, row0 : row0 + rows] * a to y (sketch.hpp: sketch_height(n) x n, column-major, 64-bit
/// fixed point as unsigned words; integer atomics, so the sum is the same in any order).
/// a is rows x n with leading dimension lda; inv_scales[j] = 1 / the scale of column j.
void sketch_rows(const double* a, std::int64_t lda, std::int64_t row0, std::int64_t rows,
                 std::int64_t n, std::uint64_t key, const double* inv_scales, unsigned long long* y,
                 cudaStream_t stream);

/// x (n x n, leading dimension ldx) = the identity.
void set_identity(double* x, std::int64_t ldx, std::int64_t n, cudaStream_t stream);

/// dst = sum of count n x n matrices src[p n^2 ...], added in the order p = 0, 1, ...
void sum_matrices(double* dst, const double* src, int count, std::int64_t n, cudaStream_t stream);

/// d (rows x n, leading dimension ldd) = a r^-1 for an upper triangular n x n r (only its upper
/// triangle is read), by recursive halving: d1 = a1 r11^-1, a2 -= d1 r12 (gemm, in a), then
/// d2 = a2 r22^-1. Blocks of at most 128 columns take the inverse of their diagonal block
/// (cublasDtrsm of the identity, into scratch: 128 x 128 doubles or n x n if smaller) and a
/// gemm, as blocked GPU trsm does: nearly every flop runs in gemm. a is overwritten. On h's
/// stream.
void trsm_right_upper(cublasHandle_t h, std::int64_t rows, std::int64_t n, const double* r,
                      std::int64_t ldr, double* a, std::int64_t lda, double* d, std::int64_t ldd,
                      double* scratch);

/// The upper triangle of g (n x n, leading dimension ldg) = a^T a for a (rows x n, lda), by
/// recursive halving: gemm for the off-diagonal blocks, syrk for blocks of at most 128 columns
/// (one syrk when rows < 16 n).
void gram_upper(cublasHandle_t h, std::int64_t rows, std::int64_t n, const double* a,
                std::int64_t lda, double* g, std::int64_t ldg);

/// yd[i + j s] = y[i + j s] * 2^-kSketchFracBits * scales[j]: the fixed-point sketch as doubles.
void sketch_to_double(const unsigned long long* y, double* yd, std::int64_t n, const double* scales,
                      cudaStream_t stream);

}  // namespace sb::svd::gpu
