// reduce-scatter: rank k ends with block k of the element-wise sum of every rank's buffer.
// S = the reduced input (n blocks); busbw = algbw * (n-1)/n.
#include "comms/collective.hpp"
#include "scalebench/error.hpp"

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

}  // namespace

extern const Collective kReduceScatter = {Op::reduce_scatter, "reduce-scatter", layout, bus_factor,
                                          run_mpi};

}  // namespace sb::comms
