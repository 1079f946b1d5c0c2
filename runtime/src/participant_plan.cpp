// Fewer workers for small problems (participant_plan.hpp).
#include "participant_plan.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace sb::detail {

ParticipantPlan plan_participants(const Workload& wl, const CaseSpec& spec, int available,
                                  bool automatic) {
  ParticipantPlan p;
  p.available = available;
  p.workers = available;
  const bool multi = spec.path == ExecPath::multi_cpu || spec.path == ExecPath::multi_gpu;
  if (!automatic || !multi || !wl.plan_workers || available <= 1 || available < wl.min_workers)
    return p;
  const WorkerPlan w = wl.plan_workers(spec, available);
  p.workers = std::clamp(w.workers, std::max(1, wl.min_workers), available);
  if (p.workers < available) p.why = w.why.empty() ? "the workload's plan" : w.why;
  return p;
}

void record_participant_plan(nlohmann::json& rec, const ParticipantPlan& plan, bool gpu) {
  if (plan.workers >= plan.available) return;
  auto& m = rec["metrics"];
  m["workers_available"] = plan.available;
  m["workers_plan"] = plan.why;
  if (!m.contains("notes") || !m["notes"].is_array()) m["notes"] = nlohmann::json::array();
  m["notes"].push_back(
      fmt::format("fewer workers ({} of {} {}): {} (SCALEBENCH_PARTICIPANTS=all "
                  "uses every one)",
                  plan.workers, plan.available, gpu ? "GPUs" : "workers", plan.why));
}

}  // namespace sb::detail
