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

#include <utility>
#include <vector>

#include "scalebench/gpu_error.cuh"

namespace sb {

struct GpuContext {
  int device = -1;                ///< CUDA ordinal (among visible devices)
  cudaDeviceProp prop{};          ///< read once at start-up
  cudaStream_t stream = nullptr;  ///< the worker's main stream (non-blocking)
  /// Over the case's GPU workers (multi-gpu): all of them, or the first few when the case runs
  /// on fewer (participant_plan.hpp); nullptr when only one. The runtime points it at the
  /// case's communicator before make_worker.
  ncclComm_t nccl = nullptr;
  int nccl_rank = 0;  ///< this worker's rank in `nccl`
  int nccl_size = 1;  ///< GPU workers in `nccl`

  /// Library handles, created on first use (outside timed regions: call from make_worker)
  /// and bound to `stream`.
  cublasHandle_t cublas();
  cusolverDnHandle_t cusolver();

  cublasHandle_t cublas_ = nullptr;
  cusolverDnHandle_t cusolver_ = nullptr;
  /// The runtime's: the communicator over every GPU worker, and those over the first few
  /// (size, communicator), made on first use; `nccl` points at one of them.
  ncclComm_t nccl_all_ = nullptr;
  int nccl_all_rank_ = 0;
  int nccl_all_size_ = 1;
  std::vector<std::pair<int, ncclComm_t>> nccl_first_;
};

}  // namespace sb
