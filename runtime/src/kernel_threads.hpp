#pragma once
/// @file kernel_threads.hpp
/// CPU time of the node's kernel threads (writeback flushers, kswapd, per-CPU workers): work
/// the kernel does mostly for the job's own I/O and memory, which /proc/stat counts as busy
/// time of no process. The interference rule leaves it out of "other processes"
/// (docs/ci.md, "When the machine was busy").

#include <map>
#include <set>

namespace sb::detail {

/// Per kernel thread (pid), its CPU time so far (utime + stime), s.
using KernelThreadTimes = std::map<int, double>;

/// The kernel threads (PF_KTHREAD tasks in /proc) that may run on one of `cpus`, with their CPU
/// time; empty where /proc shows none (a container's own process namespace).
[[nodiscard]] KernelThreadTimes read_kernel_threads(const std::set<int>& cpus);

/// CPU time the kernel threads of `after` used since `before`, s: a thread started since
/// counts whole, one that ended since is lost (its last time is unknown).
[[nodiscard]] double kernel_threads_cpu_since(const KernelThreadTimes& before,
                                              const KernelThreadTimes& after);

}  // namespace sb::detail
