#pragma once
/// @file exec_path.hpp
/// The four execution paths (docs/specification.md §1).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sb {

enum class ExecPath { single_cpu, multi_cpu, single_gpu, multi_gpu };
enum class Device { cpu, gpu };

[[nodiscard]] std::string_view to_string(ExecPath p) noexcept;
/// Canonical names and aliases: single-cpu|cpu1, multi-cpu|cpuN, single-gpu|gpu1, multi-gpu|gpuN.
[[nodiscard]] std::optional<ExecPath> parse_exec_path(std::string_view name) noexcept;
[[nodiscard]] constexpr Device device_of(ExecPath p) noexcept {
  return (p == ExecPath::single_gpu || p == ExecPath::multi_gpu) ? Device::gpu : Device::cpu;
}
[[nodiscard]] const std::vector<ExecPath>& all_exec_paths() noexcept;

}  // namespace sb
