// all-to-all: block j of rank i's buffer ends as block i of rank j's. S = a rank's whole send
// buffer (n blocks); busbw = algbw * (n-1)/n (all but its own block leave a rank).
#include "comms/collective.hpp"
#include "scalebench/error.hpp"

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

}  // namespace

extern const Collective kAllToAll = {Op::all_to_all, "all-to-all", layout, bus_factor, run_mpi};

}  // namespace sb::comms
