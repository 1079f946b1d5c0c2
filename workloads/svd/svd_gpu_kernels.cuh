#pragma once
/// @file svd_gpu_kernels.cuh
/// Small CUDA kernels of the svd GPU worker: data generation (philox.cuh, bit-identical to
/// svd_data.hpp) and column-major copies that the TSQR needs around cuSOLVER calls.

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

}  // namespace sb::svd::gpu
