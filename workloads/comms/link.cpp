#include "comms/link.hpp"

#include <sstream>

namespace sb::comms {

std::string_view link_kind_name(LinkKind kind) {
  switch (kind) {
    case LinkKind::shared_memory:
      return "shared memory";
    case LinkKind::nvlink:
      return "NVLink";
    case LinkKind::pcie:
      return "PCIe";
    case LinkKind::pcie_cross_socket:
      return "PCIe across sockets";
    case LinkKind::network:
      return "network";
    case LinkKind::same_node:
      return "same node";
  }
  return "unknown";
}

std::string_view transport_name(Transport t) {
  switch (t) {
    case Transport::mpi:
      return "mpi";
    case Transport::copy:
      return "copy";
    case Transport::nccl:
      return "nccl";
  }
  return "unknown";
}

Topology parse_topology(const std::string& text) {
  // Rows "GPU<i>  <cell> <cell> ...", after a header line of column names that starts with
  // blanks.
  Topology out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == ' ') continue;
    std::istringstream words(line);
    std::string head;
    if (!(words >> head) || head.rfind("GPU", 0) != 0) continue;
    std::vector<std::string> row;
    for (std::string cell; words >> cell;) row.push_back(cell);
    out.push_back(std::move(row));
  }
  return out;
}

Link classify(const Identity& a, const Identity& b, const Topology& topology) {
  Link l;
  if (a.host != b.host) {
    l.kind = LinkKind::network;
    l.detail = a.host + " - " + b.host;
    return l;
  }
  if (a.gpu < 0 || b.gpu < 0) {
    l.kind = LinkKind::shared_memory;
    return l;
  }
  l.kind = LinkKind::same_node;
  const auto i = static_cast<std::size_t>(a.gpu);
  const auto j = static_cast<std::size_t>(b.gpu);
  if (i >= topology.size() || j >= topology[i].size()) return l;
  l.detail = topology[i][j];
  if (l.detail.rfind("NV", 0) == 0 && l.detail.size() > 2) {
    l.kind = LinkKind::nvlink;
    try {
      l.nvlinks = std::stoi(l.detail.substr(2));
    } catch (...) {
      l.nvlinks = 0;
    }
  } else if (l.detail == "PIX" || l.detail == "PXB" || l.detail == "PHB" || l.detail == "NODE") {
    l.kind = LinkKind::pcie;
  } else if (l.detail == "SYS") {
    l.kind = LinkKind::pcie_cross_socket;
  }
  return l;
}

double nvlink_rate_per_link(int compute_major) {
  if (compute_major >= 7 && compute_major < 10) return 25e9;
  if (compute_major == 10) return 50e9;
  return 0;
}

}  // namespace sb::comms
