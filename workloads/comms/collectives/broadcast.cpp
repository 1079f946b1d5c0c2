// broadcast: every rank ends with the root's buffer. S = the buffer; busbw = algbw (every byte
// leaves the root once, whatever the rank count).
#include <algorithm>

#include "comms/collective.hpp"
#include "scalebench/error.hpp"

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
  if (rank == kBroadcastRoot) std::copy(send, send + l.count, recv);
  SB_MPI_CHECK(MPI_Bcast(recv, static_cast<int>(l.count), MPI_FLOAT, kBroadcastRoot, comm));
}

}  // namespace

extern const Collective kBroadcast = {Op::broadcast, "broadcast", layout, bus_factor, run_mpi};

}  // namespace sb::comms
