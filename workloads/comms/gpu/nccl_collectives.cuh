#pragma once
/// @file nccl_collectives.cuh
/// The collectives of collective.hpp over NCCL (float sum, out of place), on `stream`.

#include <cuda_runtime.h>
#include <nccl.h>

#include "comms/collective.hpp"

namespace sb::comms::gpu {

void run_nccl(Op op, const float* send, float* recv, const Layout& layout, ncclComm_t comm,
              cudaStream_t stream);

}  // namespace sb::comms::gpu
