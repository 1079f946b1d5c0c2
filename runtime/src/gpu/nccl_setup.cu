// Steps of making a NCCL communicator (nccl_setup.hpp).
#include "nccl_setup.hpp"

#include "scalebench/error.hpp"
#include "scalebench/gpu_error.cuh"

namespace sb::detail {

ncclUniqueId nccl_unique_id(MPI_Comm comm, int rank) {
  struct {
    int rc;
    ncclUniqueId id;
  } msg{};
  if (rank == 0) msg.rc = static_cast<int>(ncclGetUniqueId(&msg.id));
  SB_MPI_CHECK(MPI_Bcast(&msg, static_cast<int>(sizeof msg), MPI_BYTE, 0, comm));
  if (msg.rc != ncclSuccess)
    throw_library_error("NCCL", "ncclGetUniqueId (on the communicator's rank 0)",
                        ncclGetErrorString(static_cast<ncclResult_t>(msg.rc)), __FILE__, __LINE__);
  return msg.id;
}

void nccl_warm_up(ncclComm_t comm) {
  cudaStream_t warm = nullptr;
  SB_CUDA_CHECK(cudaStreamCreateWithFlags(&warm, cudaStreamNonBlocking));
  double* one = nullptr;
  cudaError_t alloc = cudaMalloc(&one, sizeof(double));
  ncclResult_t all_reduce = ncclSuccess;
  if (alloc == cudaSuccess) alloc = cudaMemsetAsync(one, 0, sizeof(double), warm);
  if (alloc == cudaSuccess)
    all_reduce = ncclAllReduce(one, one, 1, ncclDouble, ncclSum, comm, warm);
  const cudaError_t sync = cudaStreamSynchronize(warm);
  if (one != nullptr) (void)cudaFree(one);
  (void)cudaStreamDestroy(warm);
  SB_CUDA_CHECK(alloc);
  SB_NCCL_CHECK(all_reduce);
  SB_CUDA_CHECK(sync);
}

}  // namespace sb::detail
