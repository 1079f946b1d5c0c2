#pragma once
/// @file allocation.hpp
/// Where scalebench runs (a laptop, a SLURM or PBS allocation) and how its MPI job is laid out
/// and started. Pure functions of their inputs (environment, node descriptions), so placement and
/// command lines are tested for 1-64 nodes without a cluster.

#include <map>
#include <string>
#include <vector>

namespace sb::batch {

using Environment = std::map<std::string, std::string>;

/// The current process environment as a map.
[[nodiscard]] Environment current_environment();

/// One node of the allocation.
struct NodeResources {
  std::string host;
  int cpus = 1;  ///< cores scalebench may use on the node
  int gpus = 0;  ///< GPUs scalebench may use on the node
};

/// What the batch system (or the laptop) gives us.
struct Allocation {
  std::string scheduler = "local";   ///< "local", "slurm" or "pbs"
  std::string job_id;                ///< empty when local
  std::vector<NodeResources> nodes;  ///< at least one
  std::string nodefile;              ///< PBS_NODEFILE, when PBS
};

/// Detects SLURM (SLURM_JOB_ID, SLURM_JOB_NODELIST, SLURM_GPUS_ON_NODE / SLURM_GPUS_PER_NODE /
/// SLURM_JOB_GPUS, SLURM_CPUS_ON_NODE, ...) or PBS (PBS_JOBID, PBS_NODEFILE, ncpus/ngpus) from
/// `env`; otherwise local with `local_cpus` cores and `local_gpus` GPUs on this host.
/// Throws sb::EnvironmentError on an inconsistent allocation (e.g. unreadable PBS_NODEFILE).
[[nodiscard]] Allocation detect_allocation(const Environment& env, int local_cpus, int local_gpus,
                                           const std::string& local_host);

/// Role and resources of one MPI rank.
struct RankPlacement {
  int rank = 0;
  int node = 0;  ///< index into Allocation::nodes
  bool scheduler = false;
  int worker = -1;     ///< 0..W-1 for workers, -1 for the scheduler
  int local_rank = 0;  ///< rank among the ranks on its node
  int gpu = -1;        ///< GPU ordinal on its node, -1 for none
  int threads = 1;     ///< CPU threads the worker may use
  int first_core = 0;  ///< first of `threads` consecutive cores on the node (for binding)
};

/// Rank 0 is the scheduler, on node 0, holding no GPU. Workers: one per GPU on every node; on a
/// node without GPUs, one worker per node. Cores of a node are shared evenly among its workers.
[[nodiscard]] std::vector<RankPlacement> place_ranks(const Allocation& alloc);

/// A file the launcher must write before it starts the job (host files; see write_launch_files).
struct LaunchFile {
  std::string path;
  std::string content;
};

/// How to start the MPI job.
struct LaunchPlan {
  std::vector<std::string> argv;           ///< e.g. {"mpiexec", "-n", "3", ..., rank_exe, args...}
  std::map<std::string, std::string> env;  ///< variables to add to the child's environment
  std::vector<LaunchFile> files;           ///< to write before exec: host files, only for host
                                           ///< lists too long for one argument (> 64 KiB)
};

/// Options of the launch that do not come from the allocation.
struct LaunchOptions {
  std::string mpiexec = "mpiexec";  ///< or SCALEBENCH_MPIEXEC
  bool oversubscribe = true;        ///< local runs: allow more ranks than cores
  bool allow_run_as_root = false;   ///< OpenMPI refuses root without it
  std::vector<std::string> extra;   ///< SCALEBENCH_MPIEXEC_ARGS, split on spaces
  std::string srun = "srun";        ///< the SLURM launcher
  std::string slurm_mpi = "pmix";   ///< srun --mpi=<this>
  std::string work_dir;             ///< where host files go; empty: "/tmp"
};

/// Local and PBS: mpiexec (-n, --hostfile / --host, --bind-to none, per-rank env through
/// SCALEBENCH_PLACEMENT); SLURM: srun --mpi=pmix -n ... . Each rank learns its role from
/// SCALEBENCH_PLACEMENT (a compact encoding of `placement`, see encode_placement) and its rank.
/// Local: `mpiexec -n N --bind-to none [--oversubscribe] [--allow-run-as-root] [extra] exe args`.
/// PBS: `mpiexec --host h0:k0,h1:k1,... -n N --map-by slot --bind-to none -x
/// SCALEBENCH_PLACEMENT [--oversubscribe] [--allow-run-as-root] [extra] exe args`.
/// SLURM: `srun --mpi=pmix -n N --nodes=K --distribution=arbitrary --nodelist=<host of each rank,
/// in rank order> --cpus-per-task=1 --cpu-bind=none --kill-on-bad-exit=1 [--gpu-bind=none]
/// [--overcommit] [extra] exe args`. Placement must be in rank order with each node's ranks
/// contiguous (as place_ranks makes it); otherwise sb::EnvironmentError.
[[nodiscard]] LaunchPlan plan_launch(const Allocation& alloc,
                                     const std::vector<RankPlacement>& placement,
                                     const std::string& rank_executable,
                                     const std::vector<std::string>& rank_args,
                                     const LaunchOptions& options);

/// Writes plan.files (creating their directories; atomically, through a rename). Throws
/// sb::EnvironmentError when a file cannot be written. Call it before starting plan.argv.
void write_launch_files(const LaunchPlan& plan);

/// Placement as one environment-variable-safe string, and back: "v2:96.8*64" (node shapes
/// cpus.gpus, when place_ranks of them gives exactly `placement`) or "v1:" with one record per
/// rank. decode_placement throws sb::EnvironmentError on malformed text.
[[nodiscard]] std::string encode_placement(const std::vector<RankPlacement>& placement);
[[nodiscard]] std::vector<RankPlacement> decode_placement(const std::string& text);

}  // namespace sb::batch
