#pragma once
/// @file cpu_allowance.hpp
/// The CPUs this process may use, as opposed to the node's: a run plans its workers' threads
/// from them, records them in /system/nodes, and `scalebench info` shows them. A process may be
/// held to fewer CPUs than its node has by
///   - its affinity mask (sched_getaffinity: taskset, numactl, an MPI starter's or a batch
///     system's binding), a cgroup cpuset (v1 cpuset.cpus, v2 cpuset.cpus.effective) being the
///     usual cause under SLURM, PBS and container runtimes;
///   - a cgroup CPU quota (v1 cpu.cfs_quota_us / cpu.cfs_period_us, v2 cpu.max; the lowest on
///     the way to the root), which allows ceil(quota / period) CPUs' worth of time (as the JVM
///     and Go count it);
///   - a batch system's CPUs for this task, read through settings::environment_variable:
///     SLURM_CPUS_PER_TASK inside a job step, LSB_BIND_CPU_LIST (LSF affinity), SGE_BINDING
///     (Grid Engine core binding), NCPUS (PBS: the CPUs of the job's chunk on this node); not in
///     the ranks scalebench starts, whose starter sets them for itself (srun --cpus-per-task=1)
///     and whose kernel-enforced mask, cpuset and quota say what they may use.
/// Threads are planned per physical core (hardware threads of one core share its units): a
/// core counts when any of its hardware threads is allowed.

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace sb {

/// One thing that holds this process to fewer CPUs than its node has.
struct CpuLimit {
  std::string
      source;  ///< "affinity mask", "cgroup cpuset", "cgroup CPU quota", "SLURM_CPUS_PER_TASK", ...
  int cores = 0;       ///< physical cores it allows
  std::string detail;  ///< "CPUs 0-3", "150000/100000 us", "4"
};

struct CpuAllowance {
  int node_cores = 1;            ///< physical cores of the node (every one, allowed or not)
  int node_cpus = 1;             ///< hardware threads of the node
  int allowed_cpus = 1;          ///< hardware threads of the affinity mask
  int usable_cores = 1;          ///< cores to plan threads with: the tightest limit, at least 1
  std::string cpu_list;          ///< the affinity mask as a CPU list, "0-3,8"
  std::vector<CpuLimit> limits;  ///< each limit below the node's cores, tightest first
  [[nodiscard]] bool limited() const noexcept { return usable_cores < node_cores; }
  /// "1 of 2 cores (affinity mask: CPUs 0)", or "2 cores" when nothing limits them.
  [[nodiscard]] std::string summary() const;
  /// {node_cores, node_cpus, allowed_cpus, usable_cores, cpu_list, limited_by, limits}.
  [[nodiscard]] nlohmann::json to_json() const;
};

/// This process's allowance, found once per process (hwloc, /proc/self/cgroup, the batch
/// system's variables).
[[nodiscard]] const CpuAllowance& cpu_allowance();

/// The CPU ids of a Linux CPU list ("0-3,8,10-11"; spaces also separate, as SGE_BINDING and
/// LSB_BIND_CPU_LIST write them); empty when the text is not one.
[[nodiscard]] std::vector<int> parse_cpu_list(std::string_view text);
/// The shortest CPU list of `cpus` ("0-3,8").
[[nodiscard]] std::string format_cpu_list(std::vector<int> cpus);

/// CPUs' worth of time a cgroup CPU quota allows: ceil(quota / period) of the lowest quota on
/// the way from the process's cgroup to the root; 0 when none is set. `proc_cgroup` is the text
/// of /proc/self/cgroup and `root` the cgroup mount ("/sys/fs/cgroup"): v1 reads
/// <root>/cpu<path>/cpu.cfs_quota_us (or <root>/cpu,cpuacct<path>/...), v2 <root><path>/cpu.max.
/// `detail` (when given) receives "quota 50000 us per 100000 us period (path)".
[[nodiscard]] int cgroup_quota_cpus(const std::string& proc_cgroup, const std::string& root,
                                    std::string* detail = nullptr);
/// The CPUs of the process's cgroup cpuset (v1 cpuset.effective_cpus or cpuset.cpus, v2
/// cpuset.cpus.effective); empty when there is none or it cannot be read.
[[nodiscard]] std::vector<int> cgroup_cpuset(const std::string& proc_cgroup,
                                             const std::string& root);

}  // namespace sb
