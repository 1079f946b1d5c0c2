// broadcast: every rank ends with the root's buffer. S = the buffer; busbw = algbw (every byte
// leaves the root once, whatever the rank count).
#include <algorithm>

#include "comms/collective.hpp"
#include "scalebench/error.hpp"

#if SCALEBENCH_HAVE_CUDA
#include "scalebench/gpu_error.cuh"
#endif

namespace sb::comms {
namespace {

Layout layout(std::int64_t bytes, int /*ranks*/) {
  const std::int64_t n = bytes / 4;
  return {n, n, n, n * 4};
}

double bus_factor(int /*ranks*/) {
  return 1.0;
}

void run_mpi(const float* send, float* recv, const Layout& l, MPI_Comm comm) {
  // Out of place as NCCL's: the root's payload is copied into its own receive buffer first.
  int rank = 0;
  SB_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  if (rank == kRoot) std::copy(send, send + l.count, recv);
  SB_MPI_CHECK(MPI_Bcast(recv, static_cast<int>(l.count), MPI_FLOAT, kRoot, comm));
}

#if SCALEBENCH_HAVE_CUDA
void run_nccl(const float* send, float* recv, const Layout& l, ncclComm_t comm,
              cudaStream_t stream) {
  SB_NCCL_CHECK(ncclBroadcast(send, recv, static_cast<std::size_t>(l.count), ncclFloat32, kRoot,
                              comm, stream));
}
#endif

}  // namespace

// Element i of every rank: the root's element i.
extern const Collective kBroadcast = {
    .name = "broadcast",
    .layout = layout,
    .bus_factor = bus_factor,
    .expected = {.from = Expected::From::root, .at_own_block = false},
    .run_mpi = run_mpi,
#if SCALEBENCH_HAVE_CUDA
    .run_nccl = run_nccl,
#endif
};

}  // namespace sb::comms
