// The collectives of the sweep, one entry each (collective.hpp).
#include "comms/collective.hpp"

namespace sb::comms {

extern const Collective kAllReduce;
extern const Collective kAllGather;
extern const Collective kReduceScatter;
extern const Collective kAllToAll;
extern const Collective kBroadcast;

const std::vector<const Collective*>& collectives() {
  static const std::vector<const Collective*> all = {&kAllReduce, &kAllGather, &kReduceScatter,
                                                     &kAllToAll, &kBroadcast};
  return all;
}

const Collective& collective(Op op) {
  for (const Collective* c : collectives())
    if (c->op == op) return *c;
  return kAllReduce;
}

std::optional<Op> parse_op(std::string_view name) {
  for (const Collective* c : collectives())
    if (c->name == name) return c->op;
  return std::nullopt;
}

}  // namespace sb::comms
