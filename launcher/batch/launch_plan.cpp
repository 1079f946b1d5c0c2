/// @file launch_plan.cpp
/// How the MPI job is started: srun inside SLURM, mpiexec with a host list inside PBS, LSF and
/// Grid Engine, plain mpiexec on a laptop (see allocation.hpp).

#include "batch/allocation.hpp"

#include "scalebench/printable.hpp"

#include <scalebench/error.hpp>

#include <unistd.h>
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace sb::batch {
namespace {

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

/// Path of a launch file in the run's work folder: WORK_DIR/scalebench-SCHEDULER-JOB.SUFFIX.
std::string launch_file(const Allocation& alloc, const LaunchOptions& options,
                        const std::string& suffix) {
  if (options.work_dir.empty())
    throw EnvironmentError("a host list of " + std::to_string(alloc.nodes.size()) +
                           " nodes is too long for one argument and no work folder was given "
                           "for its file (LaunchOptions::work_dir)");
  std::string id;
  for (const char c : alloc.job_id)
    id +=
        (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_') ? c : '_';
  if (id.empty()) id = "nojob";
  return options.work_dir + "/scalebench-" + alloc.scheduler + "-" + id + "." + suffix;
}

/// srun inside the allocation. Ranks go where placement says through the arbitrary
/// distribution: --nodelist names one host per rank, in rank order (for lists too long for one
/// argument, SLURM_HOSTFILE names a file holding them, one per line). No CPU binding (workers
/// pin their own thread pools from first_core/threads when they want to) and no GPU binding:
/// every rank sees all the node's GPUs and a worker selects placement.gpu. Without --exact the
/// step gets all the job's CPUs on each node, so thread pools are not squeezed into one CPU per
/// task; --cpus-per-task=1 keeps a job's --cpus-per-task (newer srun reads SLURM_CPUS_PER_TASK)
/// from multiplying the CPUs the step asks for.
void plan_srun(const Allocation& alloc, const std::vector<RankPlacement>& placement,
               const std::vector<int>& per_node, const LaunchOptions& options, LaunchPlan& plan) {
  std::string hosts;
  for (const auto& p : placement) {
    if (!hosts.empty()) hosts += ',';
    hosts += alloc.nodes[static_cast<std::size_t>(p.node)].host;
  }
  std::size_t used_nodes = 0;
  for (const int c : per_node) used_nodes += c > 0 ? 1 : 0;
  auto& argv = plan.argv;
  argv = {options.srun.empty() ? std::string("srun") : options.srun,
          "--mpi=" + (options.slurm_mpi.empty() ? std::string("pmix") : options.slurm_mpi),
          "-n",
          std::to_string(placement.size()),
          "--nodes=" + std::to_string(used_nodes),
          "--distribution=arbitrary"};
  if (hosts.size() <= kInlineHostsMax) {
    argv.push_back("--nodelist=" + hosts);
  } else {
    std::replace(hosts.begin(), hosts.end(), ',', '\n');
    const std::string hostfile = launch_file(alloc, options, "hosts");
    plan.files.push_back({hostfile, hosts + "\n"});
    plan.env["SLURM_HOSTFILE"] = hostfile;
  }
  argv.insert(argv.end(), {"--cpus-per-task=1", "--cpu-bind=none", "--kill-on-bad-exit=1"});
  bool any_gpu = false;
  for (const auto& node : alloc.nodes) any_gpu = any_gpu || node.gpus > 0;
  if (any_gpu) argv.emplace_back("--gpu-bind=none");
  if (oversubscribed(alloc, per_node)) argv.emplace_back("--overcommit");
  if (options.ab_side) argv.insert(argv.end(), {"--overlap", "--input=0"});
}

/// mpiexec with our own host list (PBS, LSF, Grid Engine): each node once with slots = its rank
/// count, mapped by slot, so ranks fill node 0, then node 1, ... exactly as placement says
/// (--host h:5,h2:4; a host file with `h slots=5` lines for lists too long for one argument).
/// -x forwards the placement to remote ranks (OpenMPI syntax; other MPIs:
/// SCALEBENCH_MPIEXEC_ARGS). LSF: remote daemons start through blaunch where it exists (LSF's
/// drop-in for rsh); Grid Engine: OpenMPI uses `qrsh -inherit` by itself when it sees SGE_ROOT,
/// ARC, PE_HOSTFILE and JOB_ID.
void plan_mpiexec_hosts(const Allocation& alloc, const std::vector<RankPlacement>& placement,
                        const std::vector<int>& per_node, const LaunchOptions& options,
                        LaunchPlan& plan) {
  std::string hosts;
  std::string lines;
  for (std::size_t i = 0; i < per_node.size(); ++i) {
    if (per_node[i] == 0) continue;
    const std::string& host = alloc.nodes[i].host;
    const std::string k = std::to_string(per_node[i]);
    if (!hosts.empty()) hosts += ',';
    hosts.append(host).append(":").append(k);
    lines.append(host).append(" slots=").append(k).append("\n");
  }
  auto& argv = plan.argv;
  argv = {options.mpiexec.empty() ? std::string("mpiexec") : options.mpiexec};
  if (hosts.size() <= kInlineHostsMax) {
    argv.insert(argv.end(), {"--host", hosts});
  } else {
    const std::string hostfile = launch_file(alloc, options, "hostfile");
    plan.files.push_back({hostfile, lines});
    argv.insert(argv.end(), {"--hostfile", hostfile});
  }
  argv.insert(argv.end(), {"-n", std::to_string(placement.size()), "--map-by", "slot", "--bind-to",
                           "none", "-x", "SCALEBENCH_PLACEMENT"});
  if (alloc.scheduler == "lsf" && !alloc.remote_agent.empty())
    argv.insert(argv.end(), {"--mca", "plm_rsh_agent", alloc.remote_agent});
  // Batch systems count slots from their own request; the scheduler rank may exceed them.
  if (options.oversubscribe || oversubscribed(alloc, per_node))
    argv.emplace_back("--oversubscribe");
  if (options.allow_run_as_root) argv.emplace_back("--allow-run-as-root");
}

}  // namespace

LaunchPlan plan_launch(const Allocation& alloc, const std::vector<RankPlacement>& placement,
                       const std::string& rank_executable,
                       const std::vector<std::string>& rank_args, const LaunchOptions& options) {
  if (placement.empty()) throw EnvironmentError("no rank to launch");
  check_contiguous(placement);
  const std::vector<int> per_node = ranks_per_node(alloc, placement);
  LaunchPlan plan;
  plan.env["SCALEBENCH_PLACEMENT"] = encode_placement(placement);
  auto& argv = plan.argv;
  if (alloc.scheduler == "slurm") {
    plan_srun(alloc, placement, per_node, options, plan);
  } else if (alloc.scheduler == "pbs" || alloc.scheduler == "lsf" || alloc.scheduler == "sge") {
    plan_mpiexec_hosts(alloc, placement, per_node, options, plan);
  } else {
    argv = {options.mpiexec.empty() ? std::string("mpiexec") : options.mpiexec, "-n",
            std::to_string(placement.size()), "--bind-to", "none"};
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
    const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
    if (!fs::is_directory(dir, ec))
      throw EnvironmentError("cannot write launch file '" + printable(f.path) + "': folder '" +
                             printable(dir.string()) + "' does not exist");
    const fs::path tmp = path.string() + ".tmp" + std::to_string(::getpid());
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out << f.content;
      if (!out.flush()) {
        out.close();
        fs::remove(tmp, ec);
        throw EnvironmentError("cannot write launch file '" + printable(tmp.string()) + "'");
      }
    }
    fs::rename(tmp, path, ec);
    if (ec) {
      fs::remove(tmp, ec);
      throw EnvironmentError("cannot write launch file '" + printable(path.string()) + "'");
    }
  }
}

}  // namespace sb::batch
