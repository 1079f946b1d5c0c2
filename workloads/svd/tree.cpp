#include "svd/tree.hpp"

namespace sb::svd {

std::vector<TreeStep> tree_steps(int rank, int size) {
  std::vector<TreeStep> steps;
  for (int s = 1; s < size; s *= 2) {
    if (rank % (2 * s) == 0) {
      if (rank + s < size) steps.push_back({s, rank + s, true});
    } else {
      steps.push_back({s, rank - s, false});  // rank % 2s == s
      break;
    }
  }
  return steps;
}

std::vector<std::vector<LocalMerge>> local_levels(int k) {
  std::vector<std::vector<LocalMerge>> levels;
  for (int s = 1; s < k; s *= 2) {
    std::vector<LocalMerge> level;
    for (int a = 0; a + s < k; a += 2 * s) level.push_back({a, a + s});
    levels.push_back(std::move(level));
  }
  return levels;
}

}  // namespace sb::svd
