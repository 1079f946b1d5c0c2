// all-reduce: every rank ends with the element-wise sum of every rank's buffer. S = the buffer;
// busbw = algbw * 2(n-1)/n (each element crosses n-1 links to be reduced and n-1 to be spread).
#include "comms/collective.hpp"
#include "scalebench/error.hpp"

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

}  // namespace

extern const Collective kAllReduce = {Op::all_reduce, "all-reduce", layout, bus_factor, run_mpi};

}  // namespace sb::comms
