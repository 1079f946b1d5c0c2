#include "comms/link_discovery.hpp"

#include <cstring>
#include <string>

#include "scalebench/error.hpp"
#include "scalebench/nvml_probe.hpp"

namespace sb::comms {
namespace {

struct WireIdentity {
  char host[256];
  int gpu;
};

std::vector<Identity> gather_identities(const Identity& mine, MPI_Comm comm) {
  int size = 1;
  SB_MPI_CHECK(MPI_Comm_size(comm, &size));
  WireIdentity w{};
  std::strncpy(w.host, mine.host.c_str(), sizeof w.host - 1);
  w.gpu = mine.gpu;
  std::vector<WireIdentity> all(static_cast<std::size_t>(size));
  SB_MPI_CHECK(MPI_Allgather(&w, sizeof w, MPI_BYTE, all.data(), sizeof w, MPI_BYTE, comm));
  std::vector<Identity> out;
  for (const auto& a : all)
    out.push_back({std::string(a.host, strnlen(a.host, sizeof a.host)), a.gpu});
  return out;
}

/// The topology matrix of this worker's node: read by the node's first worker (NVML opens
/// every GPU of the node, once), broadcast to the node's others.
Topology node_topology(const std::vector<Identity>& ids, int me, MPI_Comm comm) {
  int color = me;
  for (int j = 0; j < me; ++j)
    if (ids[static_cast<std::size_t>(j)].host == ids[static_cast<std::size_t>(me)].host) {
      color = j;
      break;
    }
  MPI_Comm node = MPI_COMM_NULL;
  SB_MPI_CHECK(MPI_Comm_split(comm, color, me, &node));
  std::string text = color == me ? nvml_topology_matrix() : std::string();
  int len = static_cast<int>(text.size());
  SB_MPI_CHECK(MPI_Bcast(&len, 1, MPI_INT, 0, node));
  text.resize(static_cast<std::size_t>(len));
  if (len > 0) SB_MPI_CHECK(MPI_Bcast(text.data(), len, MPI_CHAR, 0, node));
  SB_MPI_CHECK(MPI_Comm_free(&node));
  return parse_topology(text);
}

}  // namespace

Peers discover_peers(const Identity& mine, int me, MPI_Comm comm, bool gpu) {
  Peers p;
  p.ids = gather_identities(mine, comm);
  Topology topo;
  if (gpu) topo = node_topology(p.ids, me, comm);
  p.links.resize(p.ids.size());
  for (std::size_t j = 0; j < p.ids.size(); ++j)
    if (static_cast<int>(j) != me)
      p.links[j] = classify(p.ids[static_cast<std::size_t>(me)], p.ids[j], topo);
  return p;
}

}  // namespace sb::comms
