#pragma once
/// @file gpu_error.cuh
/// CUDA-side members of the scalebench error family (see error.hpp): CUDA runtime, NCCL,
/// cuSOLVER, cuBLAS and cuRAND calls all throw sb::LibraryError with file:line, call, message,
/// host and rank.

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <curand.h>
#include <cusolverDn.h>
#include <nccl.h>

#include <string>

#include "scalebench/error.hpp"

namespace sb::detail {
const char* cublas_status_string(cublasStatus_t s);
const char* cusolver_status_string(cusolverStatus_t s);
const char* curand_status_string(curandStatus_t s);
/// Throws the LibraryError of a failed CUDA runtime call. It first clears the thread's last
/// error (cudaGetLastError, as nvbench's cuda_call does), so that a later SB_CUDA_CHECK_LAUNCH
/// or cudaPeekAtLastError does not report this failure a second time; a sticky error (a kernel
/// fault) stays, since the context itself is broken.
[[noreturn]] void throw_cuda_error(cudaError_t rc, const char* call, const char* file, int line);
}  // namespace sb::detail

#define SB_CUDA_CHECK(call)                                                   \
  do {                                                                        \
    const cudaError_t sb_cuda_rc_ = (call);                                   \
    if (sb_cuda_rc_ != cudaSuccess)                                           \
      ::sb::detail::throw_cuda_error(sb_cuda_rc_, #call, __FILE__, __LINE__); \
  } while (0)

/// After a kernel launch: the launch error, if any.
#define SB_CUDA_CHECK_LAUNCH() SB_CUDA_CHECK(cudaGetLastError())

#define SB_NCCL_CHECK(call)                                                                       \
  do {                                                                                            \
    const ncclResult_t sb_nccl_rc_ = (call);                                                      \
    if (sb_nccl_rc_ != ncclSuccess)                                                               \
      ::sb::detail::throw_library_error("NCCL", #call, ncclGetErrorString(sb_nccl_rc_), __FILE__, \
                                        __LINE__);                                                \
  } while (0)

#define SB_CUSOLVER_CHECK(call)                                                                    \
  do {                                                                                             \
    const cusolverStatus_t sb_cs_rc_ = (call);                                                     \
    if (sb_cs_rc_ != CUSOLVER_STATUS_SUCCESS)                                                      \
      ::sb::detail::throw_library_error(                                                           \
          "cuSOLVER", #call, ::sb::detail::cusolver_status_string(sb_cs_rc_), __FILE__, __LINE__); \
  } while (0)

#define SB_CUBLAS_CHECK(call)                                                                  \
  do {                                                                                         \
    const cublasStatus_t sb_cb_rc_ = (call);                                                   \
    if (sb_cb_rc_ != CUBLAS_STATUS_SUCCESS)                                                    \
      ::sb::detail::throw_library_error(                                                       \
          "cuBLAS", #call, ::sb::detail::cublas_status_string(sb_cb_rc_), __FILE__, __LINE__); \
  } while (0)

#define SB_CURAND_CHECK(call)                                                                  \
  do {                                                                                         \
    const curandStatus_t sb_cr_rc_ = (call);                                                   \
    if (sb_cr_rc_ != CURAND_STATUS_SUCCESS)                                                    \
      ::sb::detail::throw_library_error(                                                       \
          "cuRAND", #call, ::sb::detail::curand_status_string(sb_cr_rc_), __FILE__, __LINE__); \
  } while (0)
