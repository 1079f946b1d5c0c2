// all-reduce: every rank ends with the element-wise sum of every rank's buffer. S = the buffer;
// busbw = algbw * 2(n-1)/n (each element crosses n-1 links to be reduced and n-1 to be spread).
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

double bus_factor(int ranks) {
  return 2.0 * (ranks - 1) / ranks;
}

void run_mpi(const float* send, float* recv, const Layout& l, MPI_Comm comm) {
  SB_MPI_CHECK(MPI_Allreduce(send, recv, static_cast<int>(l.count), MPI_FLOAT, MPI_SUM, comm));
}

#if SCALEBENCH_HAVE_CUDA
void run_nccl(const float* send, float* recv, const Layout& l, ncclComm_t comm,
              cudaStream_t stream) {
  SB_NCCL_CHECK(ncclAllReduce(send, recv, static_cast<std::size_t>(l.count), ncclFloat32, ncclSum,
                              comm, stream));
}
#endif

}  // namespace

// Element i of every rank: the sum over every rank of its element i.
extern const Collective kAllReduce = {
    .name = "all-reduce",
    .layout = layout,
    .bus_factor = bus_factor,
    .expected = {.from = Expected::From::every, .at_own_block = false},
    .run_mpi = run_mpi,
#if SCALEBENCH_HAVE_CUDA
    .run_nccl = run_nccl,
#endif
};

}  // namespace sb::comms
