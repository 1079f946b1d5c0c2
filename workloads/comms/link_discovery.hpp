#pragma once
/// @file link_discovery.hpp
/// Every worker of a case learns who the others are and what joins it to each (link.hpp):
/// identities are gathered over MPI; on GPU cases one worker per node reads the node's
/// topology matrix through NVML and shares it with the node's other workers. Collective over
/// the case's communicator; once per case, before the first repeat.

#include <mpi.h>

#include <vector>

#include "comms/link.hpp"

namespace sb::comms {

struct Peers {
  std::vector<Identity> ids;  ///< by case rank
  std::vector<Link> links;    ///< links[j]: from this worker to worker j (j != me)
};

/// `gpu`: a GPU case (every worker passes the same), whose workers share their node's topology.
[[nodiscard]] Peers discover_peers(const Identity& mine, int me, MPI_Comm comm, bool gpu);

}  // namespace sb::comms
