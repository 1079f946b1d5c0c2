#pragma once
/// @file nccl_setup.hpp
/// (runtime internals) Steps of making a NCCL communicator, shared by the start-up one
/// (gpu_context.cu) and the per-case ones (gpu_case_communicator.cu).

#include <mpi.h>

#include <nccl.h>

namespace sb::detail {

/// The unique id of a new communicator over `comm`'s ranks: made by its rank 0 and broadcast
/// (collective over `comm`). Rank 0's status travels with it, so that a failure there makes
/// every rank throw the typed NCCL error instead of hanging in ncclCommInitRank.
[[nodiscard]] ncclUniqueId nccl_unique_id(MPI_Comm comm, int rank);

/// One all-reduce of a double over `comm` on a stream of its own, waited for: NCCL connects its
/// peers lazily, on a communicator's first collective (SCALEBENCH_NCCL_WARMUP). Throws the
/// typed CUDA or NCCL error.
void nccl_warm_up(ncclComm_t comm);

}  // namespace sb::detail
