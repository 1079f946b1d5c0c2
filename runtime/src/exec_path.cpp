#include "scalebench/exec_path.hpp"

#include "scalebench/workload.hpp"

namespace sb {

std::string_view to_string(ExecPath p) noexcept {
  switch (p) {
    case ExecPath::single_cpu:
      return "single-cpu";
    case ExecPath::multi_cpu:
      return "multi-cpu";
    case ExecPath::single_gpu:
      return "single-gpu";
    case ExecPath::multi_gpu:
      return "multi-gpu";
    case ExecPath::each_gpu:
      return "each-gpu";
    case ExecPath::each_node:
      return "each-node";
  }
  return "unknown";
}

std::optional<ExecPath> parse_exec_path(std::string_view name) noexcept {
  if (name == "single-cpu" || name == "cpu1") return ExecPath::single_cpu;
  if (name == "multi-cpu" || name == "cpuN") return ExecPath::multi_cpu;
  if (name == "single-gpu" || name == "gpu1") return ExecPath::single_gpu;
  if (name == "multi-gpu" || name == "gpuN") return ExecPath::multi_gpu;
  if (name == "each-gpu") return ExecPath::each_gpu;
  if (name == "each-node") return ExecPath::each_node;
  return std::nullopt;
}

const std::vector<ExecPath>& all_exec_paths() noexcept {
  static const std::vector<ExecPath> all = {ExecPath::single_cpu, ExecPath::multi_cpu,
                                            ExecPath::single_gpu, ExecPath::multi_gpu};
  return all;
}

const std::vector<ExecPath>& known_exec_paths() noexcept {
  static const std::vector<ExecPath> known = {ExecPath::single_cpu, ExecPath::multi_cpu,
                                              ExecPath::single_gpu, ExecPath::multi_gpu,
                                              ExecPath::each_gpu,   ExecPath::each_node};
  return known;
}

std::string_view to_string(Phase p) noexcept {
  switch (p) {
    case Phase::generate:
      return "generate";
    case Phase::compute:
      return "compute";
    case Phase::communicate:
      return "communicate";
  }
  return "unknown";
}

}  // namespace sb
