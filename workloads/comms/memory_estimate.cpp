#include "comms/memory_estimate.hpp"

#include <algorithm>

#include "comms/config.hpp"
#include "comms/sweep.hpp"

namespace sb::comms {

MemoryNeed memory_needed(const CaseSpec& spec, const CaseEnv& env) {
  const Config cfg = parse(spec.params);
  double bytes = 0;
  if (cfg.measure == Measure::pairs) {
    bytes = 2.0 * static_cast<double>(cfg.pair_bytes / 4 * 4);
  } else {
    const BufferSizes b = buffer_sizes(sweep_sizes(cfg, std::max(1, env.size)));
    bytes = 4.0 * static_cast<double>(b.send + b.recv);
  }
  MemoryNeed need;
  if (env.device == Device::gpu) {
    need.device_bytes = bytes;
  } else {
    need.host_bytes = bytes;
  }
  return need;
}

}  // namespace sb::comms
