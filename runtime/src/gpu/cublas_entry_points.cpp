// The cuBLAS functions scalebench calls, each forwarding to cuBLAS loaded when first needed
// (gpu_math_library.hpp). Hidden: a plugin or cuSOLVER that links cuBLAS reaches cuBLAS itself.
// The header's declarations make the compiler check every signature below.
#include <cublas_v2.h>

#include "gpu_math_library.hpp"

#define SB_CUBLAS_ENTRY(name, params, args)                                          \
  extern "C" __attribute__((visibility("hidden"))) cublasStatus_t name params {      \
    static const auto fn = reinterpret_cast<decltype(&name)>(                        \
        ::sb::detail::gpu_math_symbol(::sb::detail::GpuMathLibrary::cublas, #name)); \
    return fn args;                                                                  \
  }

SB_CUBLAS_ENTRY(cublasCreate_v2, (cublasHandle_t * handle), (handle))
SB_CUBLAS_ENTRY(cublasDestroy_v2, (cublasHandle_t handle), (handle))
SB_CUBLAS_ENTRY(cublasSetStream_v2, (cublasHandle_t handle, cudaStream_t stream), (handle, stream))
SB_CUBLAS_ENTRY(cublasGetStream_v2, (cublasHandle_t handle, cudaStream_t* stream), (handle, stream))
SB_CUBLAS_ENTRY(cublasGetProperty, (libraryPropertyType type, int* value), (type, value))
SB_CUBLAS_ENTRY(cublasDnrm2_v2,
                (cublasHandle_t handle, int n, const double* x, int incx, double* result),
                (handle, n, x, incx, result))
SB_CUBLAS_ENTRY(cublasDgemm_v2,
                (cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                 int n, int k, const double* alpha, const double* A, int lda, const double* B,
                 int ldb, const double* beta, double* C, int ldc),
                (handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc))
SB_CUBLAS_ENTRY(cublasDsymm_v2,
                (cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo, int m, int n,
                 const double* alpha, const double* A, int lda, const double* B, int ldb,
                 const double* beta, double* C, int ldc),
                (handle, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc))
SB_CUBLAS_ENTRY(cublasDsyrk_v2,
                (cublasHandle_t handle, cublasFillMode_t uplo, cublasOperation_t trans, int n,
                 int k, const double* alpha, const double* A, int lda, const double* beta,
                 double* C, int ldc),
                (handle, uplo, trans, n, k, alpha, A, lda, beta, C, ldc))
SB_CUBLAS_ENTRY(cublasDtrmm_v2,
                (cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo,
                 cublasOperation_t trans, cublasDiagType_t diag, int m, int n, const double* alpha,
                 const double* A, int lda, const double* B, int ldb, double* C, int ldc),
                (handle, side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb, C, ldc))
SB_CUBLAS_ENTRY(cublasDtrsm_v2,
                (cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo,
                 cublasOperation_t trans, cublasDiagType_t diag, int m, int n, const double* alpha,
                 const double* A, int lda, double* B, int ldb),
                (handle, side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb))
