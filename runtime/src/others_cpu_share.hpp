#pragma once
/// @file others_cpu_share.hpp
/// How much of this process's CPUs other processes took while it measured something: a CPU
/// ceiling (STREAM triad, DGEMM) taken beside another process's work measures that work too,
/// and must not be kept as the machine's (ceiling_cache.hpp).

#include <functional>

namespace sb::detail {

/// Others' share at or above which a CPU ceiling measured meanwhile is used for its run only.
inline constexpr double kBusyCeilingShare = 0.10;

/// Runs `work` and returns the share (0..1) of the time of the CPUs this process may run on
/// that other processes, and the hypervisor's steal, used meanwhile (/proc/stat's busy time
/// less this process's own CPU time, interrupt handling and the kernel threads'); NaN where
/// /proc/stat cannot be read.
[[nodiscard]] double others_cpu_share(const std::function<void()>& work);

}  // namespace sb::detail
