#pragma once
/// @file tree.hpp
/// Reduction-tree plans of the TSQR, shared by the CPU and GPU workers.
///
/// Across workers: a binary tree towards case rank 0. At stride s = 1, 2, 4, ...: rank r with
/// r % 2s == 0 receives the R factor of rank r + s (when it exists) and merges it under its own;
/// rank r with r % 2s == s sends its R to r - s and leaves the upward pass. The downward pass
/// (pieces of U_R) runs the same steps in reverse, receivers sending and senders receiving.
///
/// Inside a worker: its k block R factors are merged pairwise, level by level (node a absorbs
/// node b); merges of one level are independent and run in parallel.

#include <vector>

namespace sb::svd {

/// One step of a rank in the cross-worker tree.
struct TreeStep {
  int stride = 1;        ///< s
  int partner = 0;       ///< the other rank
  bool receive = false;  ///< true: this rank absorbs partner's R; false: it sends its R
};

/// This rank's upward steps, in order. Rank 0 only receives; any other rank ends with a send.
std::vector<TreeStep> tree_steps(int rank, int size);

/// One pairwise merge of node b under node a (node a keeps the merged R).
struct LocalMerge {
  int a = 0;
  int b = 0;
};

/// Merges of k leaves (ids 0..k-1) level by level; after all of them node 0 holds the root.
/// Merges inside one level touch disjoint nodes.
std::vector<std::vector<LocalMerge>> local_levels(int k);

}  // namespace sb::svd
