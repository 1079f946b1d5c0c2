// The cuSOLVER functions scalebench calls, each forwarding to cuSOLVER loaded when first needed
// (gpu_math_library.hpp). Hidden: a plugin that links cuSOLVER reaches cuSOLVER itself. The
// header's declarations make the compiler check every signature below.
#include <cusolverDn.h>

#include "gpu_math_library.hpp"

#define SB_CUSOLVER_ENTRY(name, params, args)                                          \
  extern "C" __attribute__((visibility("hidden"))) cusolverStatus_t name params {      \
    static const auto fn = reinterpret_cast<decltype(&name)>(                          \
        ::sb::detail::gpu_math_symbol(::sb::detail::GpuMathLibrary::cusolver, #name)); \
    return fn args;                                                                    \
  }

SB_CUSOLVER_ENTRY(cusolverGetProperty, (libraryPropertyType type, int* value), (type, value))
SB_CUSOLVER_ENTRY(cusolverDnCreate, (cusolverDnHandle_t * handle), (handle))
SB_CUSOLVER_ENTRY(cusolverDnDestroy, (cusolverDnHandle_t handle), (handle))
SB_CUSOLVER_ENTRY(cusolverDnSetStream, (cusolverDnHandle_t handle, cudaStream_t stream),
                  (handle, stream))
SB_CUSOLVER_ENTRY(cusolverDnCreateParams, (cusolverDnParams_t * params), (params))
SB_CUSOLVER_ENTRY(cusolverDnDestroyParams, (cusolverDnParams_t params), (params))
SB_CUSOLVER_ENTRY(cusolverDnCreateGesvdjInfo, (gesvdjInfo_t * info), (info))
SB_CUSOLVER_ENTRY(cusolverDnDestroyGesvdjInfo, (gesvdjInfo_t info), (info))
SB_CUSOLVER_ENTRY(cusolverDnDgeqrf_bufferSize,
                  (cusolverDnHandle_t handle, int m, int n, double* A, int lda, int* lwork),
                  (handle, m, n, A, lda, lwork))
SB_CUSOLVER_ENTRY(cusolverDnDgeqrf,
                  (cusolverDnHandle_t handle, int m, int n, double* A, int lda, double* tau,
                   double* work, int lwork, int* info),
                  (handle, m, n, A, lda, tau, work, lwork, info))
SB_CUSOLVER_ENTRY(cusolverDnDormqr_bufferSize,
                  (cusolverDnHandle_t handle, cublasSideMode_t side, cublasOperation_t trans, int m,
                   int n, int k, const double* A, int lda, const double* tau, const double* C,
                   int ldc, int* lwork),
                  (handle, side, trans, m, n, k, A, lda, tau, C, ldc, lwork))
SB_CUSOLVER_ENTRY(cusolverDnDormqr,
                  (cusolverDnHandle_t handle, cublasSideMode_t side, cublasOperation_t trans, int m,
                   int n, int k, const double* A, int lda, const double* tau, double* C, int ldc,
                   double* work, int lwork, int* info),
                  (handle, side, trans, m, n, k, A, lda, tau, C, ldc, work, lwork, info))
SB_CUSOLVER_ENTRY(cusolverDnDpotrf_bufferSize,
                  (cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, double* A, int lda,
                   int* lwork),
                  (handle, uplo, n, A, lda, lwork))
SB_CUSOLVER_ENTRY(cusolverDnDpotrf,
                  (cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, double* A, int lda,
                   double* work, int lwork, int* info),
                  (handle, uplo, n, A, lda, work, lwork, info))
SB_CUSOLVER_ENTRY(cusolverDnDsyevd_bufferSize,
                  (cusolverDnHandle_t handle, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n,
                   const double* A, int lda, const double* W, int* lwork),
                  (handle, jobz, uplo, n, A, lda, W, lwork))
SB_CUSOLVER_ENTRY(cusolverDnDsyevd,
                  (cusolverDnHandle_t handle, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n,
                   double* A, int lda, double* W, double* work, int lwork, int* info),
                  (handle, jobz, uplo, n, A, lda, W, work, lwork, info))
SB_CUSOLVER_ENTRY(cusolverDnDgesvd_bufferSize,
                  (cusolverDnHandle_t handle, int m, int n, int* lwork), (handle, m, n, lwork))
SB_CUSOLVER_ENTRY(cusolverDnDgesvd,
                  (cusolverDnHandle_t handle, signed char jobu, signed char jobvt, int m, int n,
                   double* A, int lda, double* S, double* U, int ldu, double* VT, int ldvt,
                   double* work, int lwork, double* rwork, int* info),
                  (handle, jobu, jobvt, m, n, A, lda, S, U, ldu, VT, ldvt, work, lwork, rwork,
                   info))
SB_CUSOLVER_ENTRY(cusolverDnDgesvdj_bufferSize,
                  (cusolverDnHandle_t handle, cusolverEigMode_t jobz, int econ, int m, int n,
                   const double* A, int lda, const double* S, const double* U, int ldu,
                   const double* V, int ldv, int* lwork, gesvdjInfo_t params),
                  (handle, jobz, econ, m, n, A, lda, S, U, ldu, V, ldv, lwork, params))
SB_CUSOLVER_ENTRY(cusolverDnDgesvdj,
                  (cusolverDnHandle_t handle, cusolverEigMode_t jobz, int econ, int m, int n,
                   double* A, int lda, double* S, double* U, int ldu, double* V, int ldv,
                   double* work, int lwork, int* info, gesvdjInfo_t params),
                  (handle, jobz, econ, m, n, A, lda, S, U, ldu, V, ldv, work, lwork, info, params))
SB_CUSOLVER_ENTRY(cusolverDnXgesvdp_bufferSize,
                  (cusolverDnHandle_t handle, cusolverDnParams_t params, cusolverEigMode_t jobz,
                   int econ, int64_t m, int64_t n, cudaDataType typeA, const void* A, int64_t lda,
                   cudaDataType typeS, const void* S, cudaDataType typeU, const void* U,
                   int64_t ldu, cudaDataType typeV, const void* V, int64_t ldv,
                   cudaDataType compute, size_t* device_bytes, size_t* host_bytes),
                  (handle, params, jobz, econ, m, n, typeA, A, lda, typeS, S, typeU, U, ldu, typeV,
                   V, ldv, compute, device_bytes, host_bytes))
SB_CUSOLVER_ENTRY(cusolverDnXgesvdp,
                  (cusolverDnHandle_t handle, cusolverDnParams_t params, cusolverEigMode_t jobz,
                   int econ, int64_t m, int64_t n, cudaDataType typeA, void* A, int64_t lda,
                   cudaDataType typeS, void* S, cudaDataType typeU, void* U, int64_t ldu,
                   cudaDataType typeV, void* V, int64_t ldv, cudaDataType compute,
                   void* device_buffer, size_t device_bytes, void* host_buffer, size_t host_bytes,
                   int* info, double* h_err_sigma),
                  (handle, params, jobz, econ, m, n, typeA, A, lda, typeS, S, typeU, U, ldu, typeV,
                   V, ldv, compute, device_buffer, device_bytes, host_buffer, host_bytes, info,
                   h_err_sigma))
