// reduce-scatter: rank k ends with block k of the element-wise sum of every rank's buffer.
// S = the reduced input (n blocks); busbw = algbw * (n-1)/n.
#include "comms/collective.hpp"
#include "scalebench/error.hpp"

#if SCALEBENCH_HAVE_CUDA
#include "scalebench/gpu_error.cuh"
#endif

namespace sb::comms {
namespace {

Layout layout(std::int64_t bytes, int ranks) {
  const std::int64_t per = per_rank_elements(bytes, ranks);
  return {per * ranks, per, per, per * ranks * 4};
}

double bus_factor(int ranks) {
  return static_cast<double>(ranks - 1) / ranks;
}

void run_mpi(const float* send, float* recv, const Layout& l, MPI_Comm comm) {
  SB_MPI_CHECK(
      MPI_Reduce_scatter_block(send, recv, static_cast<int>(l.count), MPI_FLOAT, MPI_SUM, comm));
}

#if SCALEBENCH_HAVE_CUDA
void run_nccl(const float* send, float* recv, const Layout& l, ncclComm_t comm,
              cudaStream_t stream) {
  SB_NCCL_CHECK(ncclReduceScatter(send, recv, static_cast<std::size_t>(l.count), ncclFloat32,
                                  ncclSum, comm, stream));
}
#endif

}  // namespace

// Element i of rank me: the sum over every rank of its element me * count + i.
extern const Collective kReduceScatter = {
    .name = "reduce-scatter",
    .layout = layout,
    .bus_factor = bus_factor,
    .expected = {.from = Expected::From::every, .at_own_block = true},
    .run_mpi = run_mpi,
#if SCALEBENCH_HAVE_CUDA
    .run_nccl = run_nccl,
#endif
};

}  // namespace sb::comms
