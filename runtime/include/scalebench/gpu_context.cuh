#pragma once
/// @file gpu_context.cuh
/// A GPU worker's device state, shared by every workload's CUDA code.

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <nccl.h>

#include "scalebench/gpu_error.cuh"
#include "scalebench/gpu_runtime.hpp"

namespace sb {

struct GpuContext {
  int device = -1;                ///< CUDA ordinal (among visible devices)
  cudaDeviceProp prop{};          ///< read once at start-up
  cudaStream_t stream = nullptr;  ///< the worker's main stream (non-blocking)
  ncclComm_t nccl = nullptr;      ///< over all GPU workers (multi-gpu); nullptr when only one
  int nccl_rank = 0;
  int nccl_size = 1;

  /// Library handles, created on first use (outside timed regions: call from make_worker)
  /// and bound to `stream`.
  cublasHandle_t cublas();
  cusolverDnHandle_t cusolver();

  cublasHandle_t cublas_ = nullptr;
  cusolverDnHandle_t cusolver_ = nullptr;
};

}  // namespace sb
