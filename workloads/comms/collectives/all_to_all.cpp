// all-to-all: block j of rank i's buffer ends as block i of rank j's. S = a rank's whole send
// buffer (n blocks); busbw = algbw * (n-1)/n (all but its own block leave a rank).
#include "comms/collective.hpp"
#include "scalebench/error.hpp"

#if SCALEBENCH_HAVE_CUDA
#include "scalebench/gpu_error.cuh"
#endif

namespace sb::comms {
namespace {

Layout layout(std::int64_t bytes, int ranks) {
  const std::int64_t per = per_rank_elements(bytes, ranks);
  return {per * ranks, per * ranks, per, per * ranks * 4};
}

double bus_factor(int ranks) {
  return static_cast<double>(ranks - 1) / ranks;
}

void run_mpi(const float* send, float* recv, const Layout& l, MPI_Comm comm) {
  const int n = static_cast<int>(l.count);
  SB_MPI_CHECK(MPI_Alltoall(send, n, MPI_FLOAT, recv, n, MPI_FLOAT, comm));
}

#if SCALEBENCH_HAVE_CUDA
// NCCL has no all-to-all call: one grouped send and receive per peer (nccl-tests' way).
void run_nccl(const float* send, float* recv, const Layout& l, ncclComm_t comm,
              cudaStream_t stream) {
  const auto n = static_cast<std::size_t>(l.count);
  int ranks = 0;
  SB_NCCL_CHECK(ncclCommCount(comm, &ranks));
  SB_NCCL_CHECK(ncclGroupStart());
  for (int p = 0; p < ranks; ++p) {
    SB_NCCL_CHECK(ncclSend(send + p * n, n, ncclFloat32, p, comm, stream));
    SB_NCCL_CHECK(ncclRecv(recv + p * n, n, ncclFloat32, p, comm, stream));
  }
  SB_NCCL_CHECK(ncclGroupEnd());
}
#endif

}  // namespace

// Element i of rank me: element me * count + i % count of rank i / count.
extern const Collective kAllToAll = {
    .name = "all-to-all",
    .layout = layout,
    .bus_factor = bus_factor,
    .expected = {.from = Expected::From::block, .at_own_block = true},
    .run_mpi = run_mpi,
#if SCALEBENCH_HAVE_CUDA
    .run_nccl = run_nccl,
#endif
};

}  // namespace sb::comms
