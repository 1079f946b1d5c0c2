// all-gather: every rank ends with every rank's block, in rank order. S = the gathered total
// (n blocks); busbw = algbw * (n-1)/n (a rank receives all but its own block).
#include "comms/collective.hpp"
#include "scalebench/error.hpp"

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

}  // namespace

extern const Collective kAllGather = {Op::all_gather, "all-gather", layout, bus_factor, run_mpi};

}  // namespace sb::comms
