#pragma once
/// @file link.hpp
/// What joins two workers, so that each link of the pair matrix is compared with links of its
/// own kind: NVLink, PCIe (one socket) or PCIe across sockets between GPUs of one node (from
/// the node's `nvidia-smi topo -m` matrix, which NVML gives without CUDA seeing the peer: each
/// GPU worker sees only its own GPU), MPI's shared memory between CPU workers of one node, the
/// network between nodes.

#include <string>
#include <string_view>
#include <vector>

namespace sb::comms {

enum class LinkKind : int {
  shared_memory = 0,
  nvlink = 1,
  pcie = 2,
  pcie_cross_socket = 3,
  network = 4,
  same_node = 5,  ///< two GPUs of one node whose connection NVML does not tell
};
[[nodiscard]] std::string_view link_kind_name(LinkKind kind);

/// How a pair's transfers travel.
enum class Transport : int {
  mpi = 0,   ///< MPI_Send / MPI_Recv between CPU workers
  copy = 1,  ///< cudaMemcpyAsync into the peer's buffer, mapped by CUDA IPC (one node)
  nccl = 2,  ///< ncclSend / ncclRecv (across nodes, or where CUDA IPC maps no buffer)
};
[[nodiscard]] std::string_view transport_name(Transport t);

/// A worker as the pair matrix names it.
struct Identity {
  std::string host;
  int gpu = -1;  ///< the GPU's index as nvidia-smi numbers it (NVML); -1: a CPU worker
};

struct Link {
  LinkKind kind = LinkKind::network;
  std::string detail;  ///< the topology cell ("NV18", "PIX", "SYS"), or empty
  int nvlinks = 0;     ///< NVLinks joining the two GPUs (NV<n>), 0 when not NVLink
};

/// The cells of a topology matrix as nvml_topology_matrix() prints it: cells[i][j] for the
/// GPUs of NVML index i and j ("X", "NV18", "PIX", "PXB", "PHB", "NODE", "SYS", "?").
using Topology = std::vector<std::vector<std::string>>;
[[nodiscard]] Topology parse_topology(const std::string& text);

/// The link from worker a to worker b; `topology` is the matrix of a's node (may be empty).
[[nodiscard]] Link classify(const Identity& a, const Identity& b, const Topology& topology);

/// Nominal NVLink bandwidth per link and direction: 25 GB/s for NVLink 2 to 4 (V100, A100,
/// H100), 50 GB/s for NVLink 5 (compute capability 10: B200). 0 for other devices.
[[nodiscard]] double nvlink_rate_per_link(int compute_major);

}  // namespace sb::comms
