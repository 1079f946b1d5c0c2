/// @file allocation.cpp
/// Allocation detection: local, SLURM, PBS, LSF, Grid Engine (see allocation.hpp).

#include "batch/allocation.hpp"

#include "batch/hostlist.hpp"
#include "batch/node_files.hpp"
#include "scalebench/printable.hpp"

#include <scalebench/error.hpp>

#include <unistd.h>
#include <algorithm>
#include <cctype>
#include <charconv>
#include <system_error>

extern char** environ;  // POSIX

namespace sb::batch {
namespace {

/// Value of `key` in `env`, or empty.
std::string get(const Environment& env, const std::string& key) {
  const auto it = env.find(key);
  return it == env.end() ? std::string{} : it->second;
}

/// First non-empty value among `keys`.
std::string first_of(const Environment& env, std::initializer_list<const char*> keys) {
  for (const char* k : keys) {
    std::string v = get(env, k);
    if (!v.empty()) return v;
  }
  return {};
}

/// An integer in [lo, hi] from an environment variable; throws EnvironmentError when malformed.
int env_int(const std::string& name, const std::string& value, int lo, int hi) {
  int out = 0;
  const auto r = std::from_chars(value.data(), value.data() + value.size(), out);
  if (r.ec != std::errc{} || r.ptr != value.data() + value.size() || out < lo || out > hi)
    throw EnvironmentError(name + "='" + printable(value) + "' is not an integer in [" +
                           std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return out;
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
  });
}

/// GPUs per node from SLURM's variables, in order of precedence; -1 when none is set.
int slurm_gpus(const Environment& env) {
  if (const auto v = get(env, "SLURM_GPUS_ON_NODE"); !v.empty())
    return env_int("SLURM_GPUS_ON_NODE", v, 0, 4096);
  if (const auto v = get(env, "SLURM_GPUS_PER_NODE"); !v.empty()) return count_gpu_spec(v);
  if (const auto it = env.find("SLURM_JOB_GPUS"); it != env.end()) return count_devices(it->second);
  if (const auto it = env.find("CUDA_VISIBLE_DEVICES"); it != env.end())
    return count_devices(it->second);
  return -1;
}

/// GPUs per node of an LSF or Grid Engine job: the request the template exported
/// (SCALEBENCH_GPUS_PER_NODE), else CUDA_VISIBLE_DEVICES (LSF sets it for -gpu jobs), else what
/// this node sees.
int requested_gpus(const Environment& env, int local_gpus) {
  if (const auto v = get(env, "SCALEBENCH_GPUS_PER_NODE"); !v.empty())
    return env_int("SCALEBENCH_GPUS_PER_NODE", v, 0, 4096);
  if (const auto it = env.find("CUDA_VISIBLE_DEVICES"); it != env.end())
    return count_devices(it->second);
  return std::max(0, local_gpus);
}

/// Total slots of `hosts` must equal the batch system's own count `variable` when it is set.
void check_total_slots(const Environment& env, const char* variable,
                       const std::vector<HostSlots>& hosts, const std::string& source) {
  const std::string v = get(env, variable);
  if (v.empty()) return;
  const int total = env_int(variable, v, 1, 1 << 30);
  long long sum = 0;
  for (const auto& h : hosts) sum += h.slots;
  if (sum != total)
    throw EnvironmentError(std::string(variable) + "=" + v + " but " + source + " gives " +
                           std::to_string(sum) + " slots on " + std::to_string(hosts.size()) +
                           " host(s)");
}

Allocation detect_slurm(const Environment& env, int local_cpus, int local_gpus,
                        const std::string& local_host) {
  Allocation a;
  a.scheduler = "slurm";
  a.job_id = first_of(env, {"SLURM_JOB_ID", "SLURM_JOBID"});
  // An array element is named ARRAY_TASK (squeue, sacct, --dependency), as a fleet sweep's
  // manifest names it; its own SLURM_JOB_ID is another number.
  if (const auto array = get(env, "SLURM_ARRAY_JOB_ID"), task = get(env, "SLURM_ARRAY_TASK_ID");
      all_digits(array) && all_digits(task))
    a.job_id = array + "_" + task;
  const std::string list = first_of(env, {"SLURM_JOB_NODELIST", "SLURM_NODELIST"});
  std::vector<std::string> hosts = expand_hostlist(list);
  const std::string num = first_of(env, {"SLURM_JOB_NUM_NODES", "SLURM_NNODES"});
  if (hosts.empty()) {
    if (!num.empty() && env_int("SLURM_JOB_NUM_NODES", num, 1, 1 << 20) != 1)
      throw EnvironmentError("SLURM_JOB_NODELIST is missing in a " + printable(num) +
                             "-node SLURM allocation");
    hosts.push_back(local_host);
  } else if (!num.empty()) {
    const int n = env_int("SLURM_JOB_NUM_NODES", num, 1, 1 << 20);
    if (static_cast<std::size_t>(n) != hosts.size())
      throw EnvironmentError("SLURM_JOB_NUM_NODES=" + num + " but SLURM_JOB_NODELIST '" +
                             printable(list) + "' names " + std::to_string(hosts.size()) +
                             " nodes");
  }

  // CPUs: the per-node list when it matches the nodes, else this node's count for every node.
  std::vector<int> cpus;
  if (const auto v = get(env, "SLURM_JOB_CPUS_PER_NODE"); !v.empty()) {
    cpus = expand_counts(v);
    if (cpus.size() != hosts.size()) cpus.clear();
  }
  if (cpus.empty()) {
    int c = local_cpus;
    if (const auto v = get(env, "SLURM_CPUS_ON_NODE"); !v.empty())
      c = env_int("SLURM_CPUS_ON_NODE", v, 1, 1 << 20);
    cpus.assign(hosts.size(), c);
  }
  // GPUs: SLURM reports them for this node; a SLURM allocation gives every node the same
  // request. No GPU variable at all (no GRES configured): what this node sees.
  int gpus = slurm_gpus(env);
  if (gpus < 0) gpus = local_gpus;
  a.nodes.reserve(hosts.size());
  for (std::size_t i = 0; i < hosts.size(); ++i)
    a.nodes.push_back({std::move(hosts[i]), std::max(1, cpus[i]), std::max(0, gpus)});
  return a;
}

Allocation detect_pbs(const Environment& env, int local_gpus) {
  Allocation a;
  a.scheduler = "pbs";
  a.job_id = get(env, "PBS_JOBID");
  a.nodefile = get(env, "PBS_NODEFILE");
  if (a.nodefile.empty())
    throw EnvironmentError("PBS_JOBID is set but PBS_NODEFILE is not: run inside a PBS job");
  const std::vector<HostSlots> slots = parse_slot_lines(
      read_node_file(a.nodefile, "PBS_NODEFILE"), "PBS_NODEFILE '" + printable(a.nodefile) + "'");
  // ncpus may exceed mpiprocs (select=...:ncpus=16:mpiprocs=1 writes one line per host).
  int ncpus = 0;
  if (const auto v = first_of(env, {"NCPUS", "PBS_NUM_PPN"}); !v.empty())
    ncpus = env_int("NCPUS", v, 1, 1 << 20);
  int gpus = -1;
  if (const auto v = first_of(env, {"PBS_NGPUS", "NGPUS"}); !v.empty())
    gpus = env_int("PBS_NGPUS", v, 0, 4096);
  else if (const auto it = env.find("CUDA_VISIBLE_DEVICES"); it != env.end())
    gpus = count_devices(it->second);
  if (gpus < 0) gpus = local_gpus;
  a.nodes.reserve(slots.size());
  for (auto& [host, n] : slots) a.nodes.push_back({std::move(host), std::max(n, ncpus), gpus});
  return a;
}

Allocation detect_lsf(const Environment& env, int local_gpus) {
  Allocation a;
  a.scheduler = "lsf";
  a.job_id = get(env, "LSB_JOBID");
  // Array jobs: LSB_JOBINDEX is the element (0 outside arrays); bjobs names it ID[INDEX].
  if (const auto index = get(env, "LSB_JOBINDEX"); all_digits(index) && index != "0")
    a.job_id += "[" + index + "]";
  std::vector<HostSlots> slots;
  std::string source;
  if (const auto file = get(env, "LSB_DJOB_HOSTFILE"); !file.empty()) {
    a.nodefile = file;
    source = "LSB_DJOB_HOSTFILE '" + printable(file) + "'";
    slots = parse_slot_lines(read_node_file(file, "LSB_DJOB_HOSTFILE"), source);
  } else if (const auto pairs = get(env, "LSB_MCPU_HOSTS"); !pairs.empty()) {
    source = "LSB_MCPU_HOSTS '" + printable(pairs) + "'";
    slots = parse_host_counts(pairs, source);
  } else {
    throw EnvironmentError(
        "LSB_JOBID is set but neither LSB_DJOB_HOSTFILE nor LSB_MCPU_HOSTS is: run inside an LSF "
        "job");
  }
  check_total_slots(env, "LSB_DJOB_NUMPROC", slots, source);
  const int gpus = requested_gpus(env, local_gpus);
  a.nodes.reserve(slots.size());
  for (auto& [host, n] : slots) a.nodes.push_back({std::move(host), n, gpus});
  if (const auto bindir = get(env, "LSF_BINDIR"); !bindir.empty()) {
    const std::string blaunch = bindir + "/blaunch";
    if (::access(blaunch.c_str(), X_OK) == 0) a.remote_agent = blaunch;
  }
  return a;
}

Allocation detect_sge(const Environment& env, int local_cpus, int local_gpus,
                      const std::string& local_host) {
  Allocation a;
  a.scheduler = "sge";
  a.job_id = get(env, "JOB_ID");
  // Array jobs: SGE_TASK_ID is the task ("undefined" outside arrays); qstat names it ID.TASK.
  if (const auto task = get(env, "SGE_TASK_ID"); all_digits(task)) a.job_id += "." + task;
  std::vector<HostSlots> slots;
  std::string source;
  if (const auto file = get(env, "PE_HOSTFILE"); !file.empty()) {
    a.nodefile = file;
    source = "PE_HOSTFILE '" + printable(file) + "'";
    slots = parse_pe_hostfile(read_node_file(file, "PE_HOSTFILE"), source);
    check_total_slots(env, "NSLOTS", slots, source);
  } else {
    // A job without a parallel environment: this host, NSLOTS slots (1 when unset).
    int n = std::max(1, local_cpus);
    if (const auto v = get(env, "NSLOTS"); !v.empty()) n = env_int("NSLOTS", v, 1, 1 << 20);
    slots.push_back({local_host, n});
  }
  const int gpus = requested_gpus(env, local_gpus);
  a.nodes.reserve(slots.size());
  for (auto& [host, n] : slots) a.nodes.push_back({std::move(host), n, gpus});
  return a;
}

}  // namespace

Environment current_environment() {
  Environment env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry(*e);
    const auto eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    env.emplace(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return env;
}

Allocation detect_allocation(const Environment& env, int local_cpus, int local_gpus,
                             const std::string& local_host) {
  if (!first_of(env, {"SLURM_JOB_ID", "SLURM_JOBID"}).empty())
    return detect_slurm(env, local_cpus, local_gpus, local_host);
  if (!get(env, "PBS_JOBID").empty()) return detect_pbs(env, local_gpus);
  if (!get(env, "LSB_JOBID").empty()) return detect_lsf(env, local_gpus);
  // JOB_ID alone is too common a name; Grid Engine also sets SGE_ROOT (and PE_HOSTFILE in
  // parallel jobs).
  if (!get(env, "JOB_ID").empty() && !first_of(env, {"PE_HOSTFILE", "SGE_ROOT"}).empty())
    return detect_sge(env, local_cpus, local_gpus, local_host);
  Allocation a;
  a.nodes.push_back({local_host, std::max(1, local_cpus), std::max(0, local_gpus)});
  return a;
}

std::vector<RankPlacement> place_ranks(const Allocation& alloc) {
  std::vector<NodeShape> shapes;
  shapes.reserve(alloc.nodes.size());
  for (const auto& n : alloc.nodes) shapes.push_back({n.cpus, n.gpus});
  return sb::place_ranks(shapes);
}

}  // namespace sb::batch
