/// @file allocation.cpp
/// Allocation detection, rank placement and launch plans (see allocation.hpp).

#include "batch/allocation.hpp"

#include "batch/hostlist.hpp"

#include <scalebench/error.hpp>

#include <unistd.h>
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
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

/// A positive integer from an environment variable; throws EnvironmentError when malformed.
int env_int(const std::string& name, const std::string& value, int lo, int hi) {
  int out = 0;
  const auto r = std::from_chars(value.data(), value.data() + value.size(), out);
  if (r.ec != std::errc{} || r.ptr != value.data() + value.size() || out < lo || out > hi)
    throw EnvironmentError(name + "='" + value + "' is not an integer in [" + std::to_string(lo) +
                           ", " + std::to_string(hi) + "]");
  return out;
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

Allocation detect_slurm(const Environment& env, int local_cpus, int local_gpus,
                        const std::string& local_host) {
  Allocation a;
  a.scheduler = "slurm";
  a.job_id = first_of(env, {"SLURM_JOB_ID", "SLURM_JOBID"});
  const std::string list = first_of(env, {"SLURM_JOB_NODELIST", "SLURM_NODELIST"});
  std::vector<std::string> hosts = expand_hostlist(list);
  const std::string num = first_of(env, {"SLURM_JOB_NUM_NODES", "SLURM_NNODES"});
  if (hosts.empty()) {
    if (!num.empty() && env_int("SLURM_JOB_NUM_NODES", num, 1, 1 << 20) != 1)
      throw EnvironmentError("SLURM_JOB_NODELIST is missing in a " + num +
                             "-node SLURM allocation");
    hosts.push_back(local_host);
  } else if (!num.empty()) {
    const int n = env_int("SLURM_JOB_NUM_NODES", num, 1, 1 << 20);
    if (static_cast<std::size_t>(n) != hosts.size())
      throw EnvironmentError("SLURM_JOB_NUM_NODES=" + num + " but SLURM_JOB_NODELIST '" + list +
                             "' names " + std::to_string(hosts.size()) + " nodes");
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
  for (std::size_t i = 0; i < hosts.size(); ++i)
    a.nodes.push_back({hosts[i], std::max(1, cpus[i]), std::max(0, gpus)});
  return a;
}

Allocation detect_pbs(const Environment& env, int local_cpus, int local_gpus) {
  (void)local_cpus;
  Allocation a;
  a.scheduler = "pbs";
  a.job_id = get(env, "PBS_JOBID");
  a.nodefile = get(env, "PBS_NODEFILE");
  if (a.nodefile.empty())
    throw EnvironmentError("PBS_JOBID is set but PBS_NODEFILE is not: run inside a PBS job");
  std::ifstream in(a.nodefile);
  if (!in) throw EnvironmentError("cannot read PBS_NODEFILE '" + a.nodefile + "'");
  // One line per slot; hosts keep the order of their first line.
  std::vector<std::pair<std::string, int>> slots;
  std::string line;
  while (std::getline(in, line)) {
    const auto b = line.find_first_not_of(" \t\r");
    if (b == std::string::npos) continue;
    const auto e = line.find_last_not_of(" \t\r");
    const std::string host = line.substr(b, e - b + 1);
    if (host.find_first_of(" \t") != std::string::npos)
      throw EnvironmentError("malformed line '" + line + "' in PBS_NODEFILE '" + a.nodefile + "'");
    auto it =
        std::find_if(slots.begin(), slots.end(), [&](const auto& s) { return s.first == host; });
    if (it == slots.end())
      slots.emplace_back(host, 1);
    else
      ++it->second;
  }
  if (slots.empty()) throw EnvironmentError("PBS_NODEFILE '" + a.nodefile + "' lists no host");
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
  for (const auto& [host, n] : slots) a.nodes.push_back({host, std::max(n, ncpus), gpus});
  return a;
}

/// Ranks per node, in node order.
std::vector<int> ranks_per_node(const Allocation& alloc,
                                const std::vector<RankPlacement>& placement) {
  std::vector<int> count(alloc.nodes.size(), 0);
  for (const auto& p : placement) {
    if (p.node < 0 || static_cast<std::size_t>(p.node) >= count.size())
      throw EnvironmentError("rank " + std::to_string(p.rank) + " placed on node " +
                             std::to_string(p.node) + " outside the allocation");
    ++count[static_cast<std::size_t>(p.node)];
  }
  return count;
}

bool oversubscribed(const Allocation& alloc, const std::vector<int>& per_node) {
  for (std::size_t i = 0; i < per_node.size(); ++i)
    if (per_node[i] > alloc.nodes[i].cpus) return true;
  return false;
}

/// Placement must be in rank order, with every node's ranks contiguous (the host files and
/// OpenMPI's by-slot mapping place ranks in that order).
void check_contiguous(const std::vector<RankPlacement>& placement) {
  for (std::size_t i = 0; i < placement.size(); ++i) {
    if (placement[i].rank != static_cast<int>(i))
      throw EnvironmentError("placement is not in rank order at rank " + std::to_string(i));
    if (i > 0 && placement[i].node < placement[i - 1].node)
      throw EnvironmentError("placement of rank " + std::to_string(i) +
                             " goes back to an earlier node");
  }
}

/// Host lists up to this length go on the command line (Linux caps one argument at 128 KiB);
/// longer ones go to a file (LaunchPlan::files).
constexpr std::size_t kInlineHostsMax = 64 * 1024;

std::string file_stem(const Allocation& alloc, const LaunchOptions& options) {
  const std::string dir = options.work_dir.empty() ? std::string("/tmp") : options.work_dir;
  std::string id;
  for (const char c : alloc.job_id)
    id +=
        (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_') ? c : '_';
  if (id.empty()) id = "nojob";
  return dir + "/scalebench-" + alloc.scheduler + "-" + id;
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
  if (!get(env, "PBS_JOBID").empty()) return detect_pbs(env, local_cpus, local_gpus);
  Allocation a;
  a.nodes.push_back({local_host, std::max(1, local_cpus), std::max(0, local_gpus)});
  return a;
}

std::vector<RankPlacement> place_ranks(const Allocation& alloc) {
  if (alloc.nodes.empty()) throw EnvironmentError("the allocation has no node");
  std::vector<RankPlacement> out;
  RankPlacement sched;
  sched.rank = 0;
  sched.node = 0;
  sched.scheduler = true;
  sched.worker = -1;
  sched.local_rank = 0;
  sched.gpu = -1;
  sched.threads = 1;  // it sleeps in MPI waits: no core of its own
  sched.first_core = 0;
  out.push_back(sched);
  int worker = 0;
  for (std::size_t n = 0; n < alloc.nodes.size(); ++n) {
    const NodeResources& node = alloc.nodes[n];
    const int cpus = std::max(1, node.cpus);
    const int workers = node.gpus > 0 ? node.gpus : 1;
    int local = n == 0 ? 1 : 0;
    int core = 0;
    for (int k = 0; k < workers; ++k) {
      RankPlacement p;
      p.rank = static_cast<int>(out.size());
      p.node = static_cast<int>(n);
      p.worker = worker++;
      p.local_rank = local++;
      p.gpu = node.gpus > 0 ? k : -1;
      if (cpus >= workers) {
        // Even split; the first (cpus % workers) workers take one core more.
        p.threads = cpus / workers + (k < cpus % workers ? 1 : 0);
        p.first_core = core;
        core += p.threads;
      } else {
        p.threads = 1;
        p.first_core = k % cpus;
      }
      out.push_back(p);
    }
  }
  return out;
}

LaunchPlan plan_launch(const Allocation& alloc, const std::vector<RankPlacement>& placement,
                       const std::string& rank_executable,
                       const std::vector<std::string>& rank_args, const LaunchOptions& options) {
  if (placement.empty()) throw EnvironmentError("no rank to launch");
  check_contiguous(placement);
  const std::vector<int> per_node = ranks_per_node(alloc, placement);
  const std::string n = std::to_string(placement.size());
  LaunchPlan plan;
  plan.env["SCALEBENCH_PLACEMENT"] = encode_placement(placement);
  auto& argv = plan.argv;

  if (alloc.scheduler == "slurm") {
    // srun inside the allocation. Ranks go where placement says through the arbitrary
    // distribution: --nodelist names one host per rank, in rank order (for lists too long for
    // one argument, SLURM_HOSTFILE names a file holding them, one per line). No CPU binding
    // (workers pin their own thread pools from first_core/threads when they want to) and no
    // GPU binding: every rank sees all the node's GPUs and a worker selects placement.gpu.
    // Without --exact the step gets all the job's CPUs on each node, so thread pools are not
    // squeezed into one CPU per task; --cpus-per-task=1 keeps a job's --cpus-per-task (newer
    // srun reads SLURM_CPUS_PER_TASK) from multiplying the CPUs the step asks for.
    std::string hosts;
    for (const auto& p : placement)
      hosts += (hosts.empty() ? "" : ",") + alloc.nodes[static_cast<std::size_t>(p.node)].host;
    std::size_t used_nodes = 0;
    for (const int c : per_node) used_nodes += c > 0 ? 1 : 0;
    argv = {options.srun.empty() ? std::string("srun") : options.srun,
            "--mpi=" + (options.slurm_mpi.empty() ? std::string("pmix") : options.slurm_mpi),
            "-n",
            n,
            "--nodes=" + std::to_string(used_nodes),
            "--distribution=arbitrary"};
    if (hosts.size() <= kInlineHostsMax) {
      argv.push_back("--nodelist=" + hosts);
    } else {
      std::replace(hosts.begin(), hosts.end(), ',', '\n');
      const std::string hostfile = file_stem(alloc, options) + ".hosts";
      plan.files.push_back({hostfile, hosts + "\n"});
      plan.env["SLURM_HOSTFILE"] = hostfile;
    }
    argv.insert(argv.end(), {"--cpus-per-task=1", "--cpu-bind=none", "--kill-on-bad-exit=1"});
    bool any_gpu = false;
    for (const auto& node : alloc.nodes) any_gpu = any_gpu || node.gpus > 0;
    if (any_gpu) argv.emplace_back("--gpu-bind=none");
    if (oversubscribed(alloc, per_node)) argv.emplace_back("--overcommit");
  } else if (alloc.scheduler == "pbs") {
    // mpiexec with our own host list: each node once with slots = its rank count, mapped by
    // slot, so ranks fill node 0, then node 1, ... exactly as placement says (--host h:5,h2:4;
    // a host file with `h slots=5` lines for lists too long for one argument). -x forwards the
    // placement to remote ranks (OpenMPI syntax; other MPIs: SCALEBENCH_MPIEXEC_ARGS).
    std::string hosts;
    std::string lines;
    for (std::size_t i = 0; i < per_node.size(); ++i) {
      if (per_node[i] == 0) continue;
      hosts += (hosts.empty() ? "" : ",") + alloc.nodes[i].host + ":" + std::to_string(per_node[i]);
      lines += alloc.nodes[i].host + " slots=" + std::to_string(per_node[i]) + "\n";
    }
    argv = {options.mpiexec.empty() ? std::string("mpiexec") : options.mpiexec};
    if (hosts.size() <= kInlineHostsMax) {
      argv.insert(argv.end(), {"--host", hosts});
    } else {
      const std::string hostfile = file_stem(alloc, options) + ".hostfile";
      plan.files.push_back({hostfile, lines});
      argv.insert(argv.end(), {"--hostfile", hostfile});
    }
    argv.insert(argv.end(),
                {"-n", n, "--map-by", "slot", "--bind-to", "none", "-x", "SCALEBENCH_PLACEMENT"});
    // PBS counts slots from mpiprocs; the scheduler rank may exceed them on node 0.
    if (options.oversubscribe || oversubscribed(alloc, per_node))
      argv.emplace_back("--oversubscribe");
    if (options.allow_run_as_root) argv.emplace_back("--allow-run-as-root");
  } else {
    argv = {options.mpiexec.empty() ? std::string("mpiexec") : options.mpiexec, "-n", n,
            "--bind-to", "none"};
    if (options.oversubscribe) argv.emplace_back("--oversubscribe");
    if (options.allow_run_as_root) argv.emplace_back("--allow-run-as-root");
  }
  argv.insert(argv.end(), options.extra.begin(), options.extra.end());
  argv.push_back(rank_executable);
  argv.insert(argv.end(), rank_args.begin(), rank_args.end());
  return plan;
}

void write_launch_files(const LaunchPlan& plan) {
  namespace fs = std::filesystem;
  for (const auto& f : plan.files) {
    const fs::path path(f.path);
    std::error_code ec;
    if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
    const fs::path tmp = path.string() + ".tmp" + std::to_string(::getpid());
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out << f.content;
      if (!out.flush()) throw EnvironmentError("cannot write launch file '" + tmp.string() + "'");
    }
    fs::rename(tmp, path, ec);
    if (ec) {
      fs::remove(tmp, ec);
      throw EnvironmentError("cannot write launch file '" + path.string() + "'");
    }
  }
}

// Two encodings; only [0-9,;:.*v-] appear, safe in any environment and any shell word.
// "v2:" (compact, used whenever it reproduces the placement exactly): the placement is
//   place_ranks of nodes described as cpus.gpus, runs written cpus.gpus*count, separated by
//   ';'. 64 nodes of 96 cores and 8 GPUs: "v2:96.8*64".
// "v1:" (any placement): one record per rank, in rank order, separated by ';'; a record is
//   node,worker,local_rank,gpu,threads,first_core (decimal; -1 for the scheduler's worker and
//   for no GPU). The scheduler is the record whose worker is -1.
namespace {

bool same_placement(const std::vector<RankPlacement>& a, const std::vector<RankPlacement>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto& x = a[i];
    const auto& y = b[i];
    if (x.rank != y.rank || x.node != y.node || x.scheduler != y.scheduler ||
        x.worker != y.worker || x.local_rank != y.local_rank || x.gpu != y.gpu ||
        x.threads != y.threads || x.first_core != y.first_core)
      return false;
  }
  return true;
}

/// The nodes whose place_ranks is `placement`, when there are such nodes; else empty.
std::vector<NodeResources> nodes_of(const std::vector<RankPlacement>& placement) {
  int last = -1;
  for (const auto& p : placement) last = std::max(last, p.node);
  if (last < 0) return {};
  std::vector<NodeResources> nodes(static_cast<std::size_t>(last) + 1);
  std::vector<int> workers(nodes.size(), 0), sum(nodes.size(), 0), top(nodes.size(), 0);
  std::vector<bool> gpu(nodes.size(), false);
  for (const auto& p : placement) {
    if (p.scheduler || p.node < 0) continue;
    const auto n = static_cast<std::size_t>(p.node);
    ++workers[n];
    sum[n] += p.threads;
    top[n] = std::max(top[n], p.first_core + 1);
    gpu[n] = gpu[n] || p.gpu >= 0;
  }
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    if (workers[n] == 0) return {};
    nodes[n].gpus = gpu[n] ? workers[n] : 0;
    // Enough cores: they are split exactly; fewer cores than workers: first_core wraps.
    nodes[n].cpus = sum[n] > workers[n] || top[n] == workers[n] ? sum[n] : top[n];
  }
  Allocation a;
  a.nodes = nodes;
  if (!same_placement(place_ranks(a), placement)) return {};
  return nodes;
}

}  // namespace

std::string encode_placement(const std::vector<RankPlacement>& placement) {
  if (const auto nodes = nodes_of(placement); !nodes.empty()) {
    std::string out = "v2:";
    for (std::size_t i = 0; i < nodes.size();) {
      std::size_t j = i;
      while (j < nodes.size() && nodes[j].cpus == nodes[i].cpus && nodes[j].gpus == nodes[i].gpus)
        ++j;
      if (i) out += ';';
      out += std::to_string(nodes[i].cpus) + '.' + std::to_string(nodes[i].gpus);
      if (j - i > 1) out += '*' + std::to_string(j - i);
      i = j;
    }
    return out;
  }
  std::string out = "v1:";
  out.reserve(3 + placement.size() * 14);
  for (std::size_t i = 0; i < placement.size(); ++i) {
    const auto& p = placement[i];
    if (p.rank != static_cast<int>(i))
      throw EnvironmentError("placement is not in rank order at rank " + std::to_string(i));
    if (i) out += ';';
    out += std::to_string(p.node) + ',' + std::to_string(p.scheduler ? -1 : p.worker) + ',' +
           std::to_string(p.local_rank) + ',' + std::to_string(p.gpu) + ',' +
           std::to_string(p.threads) + ',' + std::to_string(p.first_core);
  }
  return out;
}

std::vector<RankPlacement> decode_placement(const std::string& text) {
  const auto bad = [&](const std::string& why) -> EnvironmentError {
    return EnvironmentError("SCALEBENCH_PLACEMENT is malformed (" + why +
                            "): start ranks through `scalebench run`");
  };
  if (text.rfind("v2:", 0) == 0) {
    // cpus.gpus[*count] runs, separated by ';'.
    Allocation a;
    std::size_t pos = 3;
    while (pos <= text.size()) {
      std::size_t end = text.find(';', pos);
      if (end == std::string::npos) end = text.size();
      int f[3] = {0, 0, 1};
      const char* q = text.data() + pos;
      const char* e = text.data() + end;
      for (int k = 0; k < 3 && q < e; ++k) {
        const auto r = std::from_chars(q, e, f[k]);
        if (r.ec != std::errc{}) throw bad("run " + std::to_string(a.nodes.size()));
        q = r.ptr;
        const char sep = k == 0 ? '.' : '*';
        if (q < e && k < 2) {
          if (*q != sep) throw bad("run " + std::to_string(a.nodes.size()));
          ++q;
        }
        if (k == 0 && q >= e) throw bad("run " + std::to_string(a.nodes.size()));
      }
      if (end > pos && (text[end - 1] == '*' || text[end - 1] == '.'))
        throw bad("run " + std::to_string(a.nodes.size()));
      if (q != e || f[0] < 1 || f[1] < 0 || f[1] > 4096 || f[2] < 1 ||
          a.nodes.size() + static_cast<std::size_t>(f[2]) > (1u << 20))
        throw bad("run " + std::to_string(a.nodes.size()));
      a.nodes.insert(a.nodes.end(), static_cast<std::size_t>(f[2]), {"", f[0], f[1]});
      pos = end + 1;
    }
    return place_ranks(a);
  }
  if (text.rfind("v1:", 0) != 0) throw bad("no v1: or v2: prefix");
  std::vector<RankPlacement> out;
  std::size_t pos = 3;
  while (pos <= text.size()) {
    std::size_t end = text.find(';', pos);
    if (end == std::string::npos) end = text.size();
    int f[6];
    std::size_t q = pos;
    for (int k = 0; k < 6; ++k) {
      const char* b = text.data() + q;
      const char* e = text.data() + end;
      const auto r = std::from_chars(b, e, f[k]);
      if (r.ec != std::errc{}) throw bad("record " + std::to_string(out.size()));
      q = static_cast<std::size_t>(r.ptr - text.data());
      if (k < 5) {
        if (q >= end || text[q] != ',') throw bad("record " + std::to_string(out.size()));
        ++q;
      }
    }
    if (q != end) throw bad("record " + std::to_string(out.size()));
    RankPlacement p;
    p.rank = static_cast<int>(out.size());
    p.node = f[0];
    p.worker = f[1];
    p.scheduler = f[1] == -1;
    p.local_rank = f[2];
    p.gpu = f[3];
    p.threads = f[4];
    p.first_core = f[5];
    if (p.node < 0 || p.worker < -1 || p.local_rank < 0 || p.gpu < -1 || p.threads < 1 ||
        p.first_core < 0)
      throw bad("record " + std::to_string(out.size()) + " out of range");
    out.push_back(p);
    pos = end + 1;
  }
  return out;
}

}  // namespace sb::batch
