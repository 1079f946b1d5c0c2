// GPU worker identity and the NVLink ceiling (identity.hpp).
#include "comms/gpu/identity.hpp"

#include <algorithm>

#include "scalebench/gpu_context.cuh"
#include "scalebench/gpu_runtime.hpp"

namespace sb::comms::gpu {

Identity identity(const CaseEnv& env) {
  Identity id;
  id.host = env.host;
  const nlohmann::json d = describe_gpu(*env.gpu);
  id.gpu = d.contains("nvml_index") && d["nvml_index"].is_number_integer()
               ? d["nvml_index"].get<int>()
               : env.gpu->device;
  return id;
}

LinkCeiling link_ceiling(const CaseEnv& env, const std::vector<Link>& links) {
  LinkCeiling c;
  int fewest = 0;
  for (int j = 0; j < static_cast<int>(links.size()); ++j) {
    if (j == env.rank) continue;
    const Link& l = links[static_cast<std::size_t>(j)];
    if (l.kind != LinkKind::nvlink || l.nvlinks < 1) return {};
    fewest = fewest == 0 ? l.nvlinks : std::min(fewest, l.nvlinks);
  }
  const double rate = nvlink_rate_per_link(env.gpu->prop.major);
  if (fewest == 0 || rate <= 0) return {};
  c.bytes_per_s = fewest * rate;
  c.nvlinks = fewest;
  return c;
}

}  // namespace sb::comms::gpu
