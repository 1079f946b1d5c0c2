// Whether and how a case would run on an allocation of a given shape (case_forecast.hpp).
#include "scalebench/case_forecast.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "memory_check.hpp"
#include "participant_plan.hpp"
#include "scalebench/byte_size.hpp"

namespace sb {

double available_host_memory() {
  return detail::host_memory_available();
}

std::string memory_text(double bytes) {
  return human_bytes(bytes);
}

std::string cannot_run_reason(const Workload& wl, ExecPath path, std::size_t workers) {
  if (!runs_on(wl, path)) return fmt::format("{} does not run on {}", wl.name, to_string(path));
  if (static_cast<int>(workers) >= wl.min_workers) return {};
  if (path == ExecPath::each_node)
    return fmt::format(
        "{} needs at least {} workers and each node has {} (each-node: the node's workers; one "
        "per GPU, or one per node without GPUs)",
        wl.name, wl.min_workers, workers);
  const bool gpu = device_of(path) == Device::gpu;
  return fmt::format(
      "{} needs at least {} workers and {} has {} here ({}: run on {} or more)", wl.name,
      wl.min_workers, to_string(path), workers,
      gpu ? "one worker per GPU" : "one CPU worker per GPU, or per node without GPUs",
      gpu ? fmt::format("{} GPUs", wl.min_workers) : fmt::format("{} nodes", wl.min_workers));
}

std::string memory_shortfall(const std::string& workload, const MemoryNeed& need, double host_total,
                             int host_sharers, double gpu_free, int gpu) {
  if (gpu_free >= 0 && need.device_bytes > gpu_free)
    return fmt::format(
        "{}: needs {} of GPU memory per worker, {} has {} free; use more GPUs or smaller sizes",
        workload, human_bytes(need.device_bytes),
        gpu >= 0 ? fmt::format("GPU {}", gpu) : std::string("a GPU"), human_bytes(gpu_free));
  const int sharers = std::max(1, host_sharers);
  if (host_total >= 0 && need.host_bytes > host_total / sharers) {
    const std::string share =
        sharers > 1 ? fmt::format(" per worker ({} shared by the case's {} workers on it)",
                                  human_bytes(host_total), sharers)
                    : std::string();
    return fmt::format(
        "{}: needs {} of host memory per worker, this node has {} available{}; use more nodes "
        "or smaller sizes",
        workload, human_bytes(need.host_bytes), human_bytes(host_total / sharers), share);
  }
  return {};
}

CaseForecast forecast_case(const CaseSpec& spec_in, const MachineShape& m) {
  CaseForecast f;
  const auto& all = workloads();
  const auto it = std::find_if(all.begin(), all.end(),
                               [&](const Workload& w) { return w.name == spec_in.workload; });
  if (it == all.end()) {
    f.outcome = CaseForecast::Outcome::fail;
    f.reason = fmt::format("unknown workload '{}'", spec_in.workload);
    return f;
  }
  const Workload& wl = *it;
  CaseSpec spec = spec_in;
  const Device device = device_of(spec.path);
  const int nodes = std::max(1, m.nodes);
  int available = 1;  // workers of the path (each-*: of one device)
  switch (spec.path) {
    case ExecPath::single_cpu:
    case ExecPath::single_gpu:
    case ExecPath::each_gpu:
      available = 1;
      break;
    case ExecPath::multi_cpu:
      available = std::max(1, m.workers);
      break;
    case ExecPath::multi_gpu:
      available = m.gpus;
      break;
    case ExecPath::each_node:
      available = std::max(1, m.gpus_per_node);
      break;
  }
  f.devices = spec.path == ExecPath::each_gpu    ? std::max(1, m.gpus)
              : spec.path == ExecPath::each_node ? nodes
                                                 : 1;
  if (device == Device::gpu && m.gpus == 0) {
    f.outcome = CaseForecast::Outcome::skip;
    f.reason = m.no_gpu_reason.empty() ? "no GPU" : m.no_gpu_reason;
    f.workers = 0;
    return f;
  }
  f.threads = spec.path == ExecPath::single_cpu ? 1 : std::max(1, m.threads);
  if (const std::string why = cannot_run_reason(wl, spec.path, static_cast<std::size_t>(available));
      !why.empty()) {
    f.outcome = CaseForecast::Outcome::skip;
    f.not_applicable = true;
    f.reason = why;
    f.workers = available;
    return f;
  }
  f.workers = available;
  try {
    const detail::ParticipantPlan plan =
        detail::plan_participants(wl, spec, available, m.automatic_participants);
    f.workers = plan.workers;
    f.fewer_why = plan.why;
  } catch (const std::exception&) {
    f.workers = available;  // the run records the workload's error
  }
  spec.workers = f.workers;
  if (!wl.memory_needed) return f;
  try {
    CaseEnv env;
    env.device = device;
    env.size = f.workers;
    env.threads = f.threads;
    const MemoryNeed need = wl.memory_needed(spec, env);
    f.host_bytes = need.host_bytes;
    if (device == Device::gpu) f.device_bytes = need.device_bytes;
    // The workers of the case on one node share its memory (worker.cpp's check).
    const bool each = spec.path == ExecPath::each_gpu || spec.path == ExecPath::each_node;
    const int per_node = (f.workers + nodes - 1) / nodes;
    const int sharers = f.workers <= 1 && !each
                            ? 1
                            : std::max(1, device == Device::gpu ? std::max(1, m.gpus_per_node)
                                                                : (each ? available : per_node));
    const std::string why = memory_shortfall(spec.workload, need, m.host_memory, sharers,
                                             device == Device::gpu ? m.gpu_memory : -1.0, -1);
    if (!why.empty()) {
      f.outcome = CaseForecast::Outcome::fail;
      f.reason = why;
    }
  } catch (const std::exception&) {
    // No estimate: the run checks nothing either, or reports the workload's error.
  }
  return f;
}

}  // namespace sb
