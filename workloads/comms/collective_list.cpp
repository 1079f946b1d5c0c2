// The collectives of the sweep in sweep order (op=all), one entry per file of collectives/
// (collective.hpp).
#include "comms/collective.hpp"

// X(descriptor) for each collective, in sweep order: a new collective is one entry here.
#define SB_COMMS_COLLECTIVES(X) \
  X(kAllReduce)                 \
  X(kAllGather)                 \
  X(kReduceScatter)             \
  X(kAllToAll)                  \
  X(kBroadcast)

namespace sb::comms {

#define SB_DECLARE_COLLECTIVE(descriptor) extern const Collective descriptor;
SB_COMMS_COLLECTIVES(SB_DECLARE_COLLECTIVE)
#undef SB_DECLARE_COLLECTIVE

const std::vector<const Collective*>& collectives() {
#define SB_LIST_COLLECTIVE(descriptor) &descriptor,
  static const std::vector<const Collective*> all = {SB_COMMS_COLLECTIVES(SB_LIST_COLLECTIVE)};
#undef SB_LIST_COLLECTIVE
  return all;
}

const Collective* find_collective(std::string_view name) {
  for (const Collective* c : collectives())
    if (c->name == name) return c;
  return nullptr;
}

}  // namespace sb::comms
