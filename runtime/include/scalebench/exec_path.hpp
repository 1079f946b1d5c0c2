#pragma once
/// @file exec_path.hpp
/// The execution paths (docs/specification.md §1): the four that measure the workload, and the
/// two that measure every device of the allocation on its own (node acceptance).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sb {

enum class ExecPath { single_cpu, multi_cpu, single_gpu, multi_gpu, each_gpu, each_node };
enum class Device { cpu, gpu };

[[nodiscard]] std::string_view to_string(ExecPath p) noexcept;
/// Canonical names and aliases: single-cpu|cpu1, multi-cpu|cpuN, single-gpu|gpu1, multi-gpu|gpuN,
/// each-gpu, each-node.
[[nodiscard]] std::optional<ExecPath> parse_exec_path(std::string_view name) noexcept;
[[nodiscard]] constexpr Device device_of(ExecPath p) noexcept {
  return (p == ExecPath::single_gpu || p == ExecPath::multi_gpu || p == ExecPath::each_gpu)
             ? Device::gpu
             : Device::cpu;
}
/// each-gpu (the single-gpu case on every GPU at once) and each-node (the multi-cpu case on
/// every node at once): one record per device.
[[nodiscard]] constexpr bool is_each_device(ExecPath p) noexcept {
  return p == ExecPath::each_gpu || p == ExecPath::each_node;
}
/// The paths a run takes when none is named: the four workload paths.
[[nodiscard]] const std::vector<ExecPath>& all_exec_paths() noexcept;
/// Every path, in plan order (the four, then each-gpu and each-node).
[[nodiscard]] const std::vector<ExecPath>& known_exec_paths() noexcept;

}  // namespace sb
