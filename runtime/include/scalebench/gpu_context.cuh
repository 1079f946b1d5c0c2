#pragma once
/// @file gpu_context.cuh
/// A GPU worker's device state, shared by every workload's CUDA code (CaseEnv::gpu on GPU paths;
/// public: docs/writing-a-workload.md). The runtime makes it once per worker at start-up and
/// keeps it for the life of the job: a workload uses its device, stream, communicator and
/// library handles and never destroys them.

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <nccl.h>

#include "scalebench/gpu_error.cuh"

namespace sb {

struct GpuContext {
  int device = -1;                ///< CUDA ordinal (among visible devices)
  cudaDeviceProp prop{};          ///< read once at start-up
  cudaStream_t stream = nullptr;  ///< the worker's main stream (non-blocking)
  ncclComm_t nccl = nullptr;      ///< over all GPU workers (multi-gpu); nullptr when only one
  int nccl_rank = 0;              ///< this worker's rank in `nccl`
  int nccl_size = 1;              ///< GPU workers in `nccl`

  /// Library handles, created on first use (outside timed regions: call from make_worker)
  /// and bound to `stream`.
  cublasHandle_t cublas();
  cusolverDnHandle_t cusolver();

  cublasHandle_t cublas_ = nullptr;
  cusolverDnHandle_t cusolver_ = nullptr;
};

}  // namespace sb
