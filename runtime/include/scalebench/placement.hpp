#pragma once
/// @file placement.hpp
/// Where each rank of a scalebench job runs and what it is (part of the launcher-to-rank
/// protocol, rank_protocol.hpp): the launcher places the ranks on the allocation's nodes and
/// passes the placement to every rank in SCALEBENCH_PLACEMENT; each rank decodes it before
/// MPI_Init to learn its role, node, GPU and threads.

#include <string>
#include <vector>

namespace sb {

/// What a node offers the job: cores and GPUs.
struct NodeShape {
  int cpus = 1;
  int gpus = 0;
};

/// Role and resources of one MPI rank.
struct RankPlacement {
  int rank = 0;
  int node = 0;  ///< index into the allocation's nodes
  bool scheduler = false;
  int worker = -1;     ///< 0..W-1 for workers, -1 for the scheduler
  int local_rank = 0;  ///< rank among the ranks on its node
  int gpu = -1;        ///< GPU ordinal on its node, -1 for none
  int threads = 1;     ///< CPU threads the worker may use
  int first_core = 0;  ///< first of `threads` consecutive cores on the node (for binding)
};

/// Rank 0 is the scheduler, on node 0, holding no GPU. Workers: one per GPU on every node; on a
/// node without GPUs, one worker per node. Cores of a node are shared evenly among its workers.
/// Throws sb::EnvironmentError when there is no node.
[[nodiscard]] std::vector<RankPlacement> place_ranks(const std::vector<NodeShape>& nodes);

/// Placement as one environment-variable-safe string, and back: "v2:96.8*64" (node shapes
/// cpus.gpus, when place_ranks of them gives exactly `placement`) or "v1:" with one record per
/// rank. decode_placement throws sb::EnvironmentError on malformed text.
[[nodiscard]] std::string encode_placement(const std::vector<RankPlacement>& placement);
[[nodiscard]] std::vector<RankPlacement> decode_placement(const std::string& text);

}  // namespace sb
