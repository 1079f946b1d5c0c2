// subset-mean's memory per worker: the draws are generated and reduced on the fly, so nothing
// grows with n^2; a CPU worker keeps two doubles per row of a block (worker_cpu.cpp) and a
// GPU worker one double2 per block of its grid plus a ticket (worker_gpu.cu).
#include "subset_mean/memory_estimate.hpp"

#include "subset_mean/config.hpp"

namespace sb::subset_mean {

MemoryNeed memory_needed(const CaseSpec& spec, const CaseEnv& env) {
  const Config cfg = parse(spec.params);
  MemoryNeed need;
  // CPU scratch: 2 * chunk doubles (subset and full sum of every row of a block).
  need.host_bytes = 2.0 * static_cast<double>(cfg.chunk) * sizeof(double);
  if (env.device == Device::gpu) {
    // A grid of at most a few thousand blocks, one double2 each: well under a megabyte.
    need.device_bytes = 1 << 20;
  }
  return need;
}

}  // namespace sb::subset_mean
