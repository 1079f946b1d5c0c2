#pragma once
/// @file node_health.hpp
/// Which nodes of an allocation the batch system reports lost, after a job ended badly: the
/// launcher then names the node in the running case's message and runs the remaining cases on
/// the nodes that are left (docs/batch.md, "When a node is lost").

#include <string>
#include <vector>

#include "batch/allocation.hpp"

namespace sb::batch {

/// The nodes of `alloc` that SLURM reports down, failing or not responding (`sinfo -h -N -n
/// NODES -o "%N %t"`). Empty for other batch systems (they give no such view from inside a
/// job), for one-node allocations, and when sinfo cannot be run.
[[nodiscard]] std::vector<std::string> lost_nodes(const Allocation& alloc);

/// The lost nodes in sinfo's output ("NAME STATE" lines; a state ending in '*' is not
/// responding, "down..." or "fail..." is lost), among `nodes`, in their order.
[[nodiscard]] std::vector<std::string> parse_lost_nodes(const std::string& sinfo_output,
                                                        const std::vector<std::string>& nodes);

/// `alloc` without the nodes named in `lost` (the launcher's next job runs on the others).
[[nodiscard]] Allocation without_nodes(const Allocation& alloc,
                                       const std::vector<std::string>& lost);

}  // namespace sb::batch
