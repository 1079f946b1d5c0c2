#pragma once
/// @file registry.hpp
/// The registry's side of plugin loading (plugin_loader.cpp): turning a shared
/// object's registrations into workloads, checking them, and appending them after the ones
/// registered before. Internal to runtime/.

#include <string>
#include <vector>

#include "scalebench/workload.hpp"
#include "scalebench/workload_registration.hpp"

namespace sb::detail {

/// The workloads of a registration list, in its order (each registration's make()).
[[nodiscard]] std::vector<Workload> make_workloads(const WorkloadRegistration* head);

/// What is wrong with a workload's description ("" when nothing): a bad name, a required
/// member left empty.
[[nodiscard]] std::string workload_problem(const Workload& w);

/// Appends `added` to the registry. Throws sb::UsageError (prefixed by `origin`, e.g. "plugin
/// /x/libfoo.so") when a workload is malformed or its name is taken by a registered workload
/// (named with its own origin) or by another of `added`; then nothing is appended.
void append_workloads(std::vector<Workload> added, const std::string& origin);

}  // namespace sb::detail
