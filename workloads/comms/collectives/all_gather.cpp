// all-gather: every rank ends with every rank's block, in rank order. S = the gathered total
// (n blocks); busbw = algbw * (n-1)/n (a rank receives all but its own block).
#include "comms/collective.hpp"
#include "scalebench/error.hpp"

#if SCALEBENCH_HAVE_CUDA
#include "scalebench/gpu_error.cuh"
#endif

namespace sb::comms {
namespace {

Layout layout(std::int64_t bytes, int ranks) {
  const std::int64_t per = per_rank_elements(bytes, ranks);
  return {per, per * ranks, per, per * ranks * 4};
}

double bus_factor(int ranks) {
  return static_cast<double>(ranks - 1) / ranks;
}

void run_mpi(const float* send, float* recv, const Layout& l, MPI_Comm comm) {
  const int n = static_cast<int>(l.count);
  SB_MPI_CHECK(MPI_Allgather(send, n, MPI_FLOAT, recv, n, MPI_FLOAT, comm));
}

#if SCALEBENCH_HAVE_CUDA
void run_nccl(const float* send, float* recv, const Layout& l, ncclComm_t comm,
              cudaStream_t stream) {
  SB_NCCL_CHECK(
      ncclAllGather(send, recv, static_cast<std::size_t>(l.count), ncclFloat32, comm, stream));
}
#endif

}  // namespace

// Element i: element i % count of rank i / count.
extern const Collective kAllGather = {
    .name = "all-gather",
    .layout = layout,
    .bus_factor = bus_factor,
    .expected = {.from = Expected::From::block, .at_own_block = false},
    .run_mpi = run_mpi,
#if SCALEBENCH_HAVE_CUDA
    .run_nccl = run_nccl,
#endif
};

}  // namespace sb::comms
