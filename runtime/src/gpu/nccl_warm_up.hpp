#pragma once
/// @file nccl_warm_up.hpp
/// SCALEBENCH_NCCL_WARMUP's all-reduce (runtime internals).

#include <nccl.h>

namespace sb::detail {

/// One all-reduce of a double over `comm` on a stream of its own, waited for: NCCL connects its
/// peers lazily, on a communicator's first collective. Throws the typed CUDA or NCCL error.
void nccl_warm_up(ncclComm_t comm);

}  // namespace sb::detail
