// How many workers a multi-* groupby case uses (worker_plan.hpp).
#include "groupby/worker_plan.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace sb::groupby {
namespace {

/// One GPU's time per row and the fixed cost of combining across GPUs, per query
/// (tools/gpu-campaign.sh sizes: tiny, small and seed on 1, 2 and 4 H100s; by-key's seed on 1
/// to 4 with SCALEBENCH_PARTICIPANTS=all).
struct GpuCost {
  double seconds_per_row;
  double combine_s;
  const char* combine;
};

GpuCost gpu_cost(Query q) {
  switch (q) {
    case Query::by_name:
      return {0.31e-9, 0.1e-3, "the combine of partial groups"};
    case Query::by_id:
      return {0.47e-9, 0.1e-3, "the combine of partial groups"};
    case Query::by_key:
      break;
  }
  return {0.38e-9, 0.3e-3, "the exchange of rows between GPUs"};
}

/// The least saving, against one GPU, that is worth more GPUs.
constexpr double kMinGain = 0.10;

}  // namespace

WorkerPlan plan_workers(const Config& c, Device device, int available) {
  WorkerPlan p{available, {}};
  const bool reduction = !c.def.high_cardinality;
  if (reduction && c.num_tasks() < p.workers) {
    p.workers = static_cast<int>(std::max<std::int64_t>(1, c.num_tasks()));
    p.why = fmt::format("{} tasks of {} rows: a worker without one would only wait", c.num_tasks(),
                        c.partition);
  }
  if (device != Device::gpu || p.workers <= 1) return p;
  const GpuCost cost = gpu_cost(c.def.query);
  const double one = static_cast<double>(c.rows) * cost.seconds_per_row;
  const double many = one / p.workers + cost.combine_s;
  if (many <= (1.0 - kMinGain) * one) return p;
  return {1, fmt::format("{} rows take about {:.2f} ms on one GPU; {} GPUs would save {:.2f} ms "
                         "and {} costs about {:.2f} ms",
                         c.rows, one * 1e3, p.workers, (one - one / p.workers) * 1e3, cost.combine,
                         cost.combine_s * 1e3)};
}

}  // namespace sb::groupby
