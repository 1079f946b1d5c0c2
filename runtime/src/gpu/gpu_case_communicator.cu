// A multi-gpu case's NCCL communicator, made when a case first needs it (gpu_runtime.hpp:
// select_gpu_communicator; participant_plan.hpp).
#include <mpi.h>

#include <nccl.h>

#include "nccl_setup.hpp"
#include "scalebench/error.hpp"
#include "scalebench/gpu_context.cuh"
#include "scalebench/gpu_error.cuh"
#include "scalebench/gpu_runtime.hpp"
#include "scalebench/settings.hpp"

namespace sb {

namespace {

/// A communicator over `case_comm`'s ranks.
ncclComm_t make_communicator(const GpuContext& ctx, MPI_Comm case_comm, int size, int rank) {
  const ncclUniqueId id = detail::nccl_unique_id(case_comm, rank);
  SB_CUDA_CHECK(cudaSetDevice(ctx.device));
  ncclComm_t comm = nullptr;
  SB_NCCL_CHECK(ncclCommInitRank(&comm, size, id, rank));
  if (settings::nccl_warmup()) {
    try {
      detail::nccl_warm_up(comm);
    } catch (...) {
      (void)ncclCommDestroy(comm);
      throw;
    }
  }
  return comm;
}

}  // namespace

void set_gpu_workers(GpuContext& ctx, int rank, int size) {
  ctx.nccl_all_rank_ = rank;
  ctx.nccl_all_size_ = size;
}

void select_gpu_communicator(GpuContext& ctx, MPI_Comm case_comm, int size) {
  if (size <= 1) return;  // one worker uses no communicator
  int rank = 0;
  SB_MPI_CHECK(MPI_Comm_rank(case_comm, &rank));
  ncclComm_t* have = nullptr;
  if (size == ctx.nccl_all_size_) {
    have = &ctx.nccl_all_;
    rank = ctx.nccl_all_rank_;
  } else {
    for (auto& [n, comm] : ctx.nccl_first_)
      if (n == size) have = &comm;
  }
  if (have == nullptr || *have == nullptr) {
    const ncclComm_t made = make_communicator(ctx, case_comm, size, rank);
    if (have == nullptr) {
      ctx.nccl_first_.emplace_back(size, made);
      have = &ctx.nccl_first_.back().second;
    } else {
      *have = made;
    }
  }
  ctx.nccl = *have;
  ctx.nccl_rank = rank;
  ctx.nccl_size = size;
}

}  // namespace sb
