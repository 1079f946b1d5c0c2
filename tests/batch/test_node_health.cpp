// Which nodes SLURM reports lost (batch/node_health.hpp), and the allocation without them.
#include <gtest/gtest.h>

#include "batch/node_health.hpp"

namespace {

using sb::batch::Allocation;

TEST(NodeHealth, SinfoStatesThatMeanLost) {
  const std::string out =
      "node1 alloc\nnode2 down*\nnode3 mix\nnode4 idle*\nnode5 fail\nnode6 drain\nnode7 comp\n";
  const std::vector<std::string> nodes{"node1", "node2", "node3", "node4",
                                       "node5", "node6", "node7", "node8"};
  EXPECT_EQ(sb::batch::parse_lost_nodes(out, nodes),
            (std::vector<std::string>{"node2", "node4", "node5"}));
  EXPECT_TRUE(sb::batch::parse_lost_nodes("", nodes).empty());
  EXPECT_TRUE(sb::batch::parse_lost_nodes("nodeX down*\n", nodes).empty());  // not ours
}

TEST(NodeHealth, TheNextJobRunsOnTheNodesLeft) {
  Allocation a;
  a.scheduler = "slurm";
  a.nodes = {{"node1", 2, 0}, {"node2", 2, 0}, {"node3", 2, 0}};
  const Allocation left = sb::batch::without_nodes(a, {"node3"});
  ASSERT_EQ(left.nodes.size(), 2u);
  EXPECT_EQ(left.nodes[0].host, "node1");
  EXPECT_EQ(left.nodes[1].host, "node2");
  EXPECT_EQ(sb::batch::place_ranks(left).size(), 3u);  // scheduler + one worker per node
  // Outside SLURM, and on one node, nothing is looked up.
  Allocation local;
  local.nodes = {{"me", 2, 0}};
  EXPECT_TRUE(sb::batch::lost_nodes(local).empty());
}

}  // namespace
