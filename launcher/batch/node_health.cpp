#include "batch/node_health.hpp"

#include <algorithm>
#include <set>
#include <sstream>

#include "batch/run_capture.hpp"
#include "scalebench/find_program.hpp"

namespace sb::batch {

std::vector<std::string> parse_lost_nodes(const std::string& sinfo_output,
                                          const std::vector<std::string>& nodes) {
  std::set<std::string> lost;
  std::istringstream lines(sinfo_output);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string name, state;
    if (!(words >> name >> state)) continue;
    const bool not_responding = !state.empty() && state.back() == '*';
    if (not_responding || state.rfind("down", 0) == 0 || state.rfind("fail", 0) == 0)
      lost.insert(name);
  }
  std::vector<std::string> out;
  for (const auto& n : nodes)
    if (lost.count(n) != 0) out.push_back(n);
  return out;
}

std::vector<std::string> lost_nodes(const Allocation& alloc) {
  if (alloc.scheduler != "slurm" || alloc.nodes.size() < 2) return {};
  const std::string sinfo = find_program("sinfo");
  if (sinfo.empty()) return {};
  std::vector<std::string> names;
  std::string list;
  for (const auto& n : alloc.nodes) {
    names.push_back(n.host);
    list += (list.empty() ? "" : ",") + n.host;
  }
  try {
    const Captured c = run_capture({sinfo, "-h", "-N", "-n", list, "-o", "%N %t"});
    if (c.status != 0) return {};
    return parse_lost_nodes(c.out, names);
  } catch (...) {
    return {};  // no view of the nodes: nothing is concluded
  }
}

Allocation without_nodes(const Allocation& alloc, const std::vector<std::string>& lost) {
  Allocation out = alloc;
  std::erase_if(out.nodes, [&](const NodeResources& n) {
    return std::find(lost.begin(), lost.end(), n.host) != lost.end();
  });
  return out;
}

}  // namespace sb::batch
