#pragma once
/// @file allocation.hpp
/// Where scalebench runs (a laptop; a SLURM, PBS, LSF or Grid Engine allocation) and how its MPI
/// job is laid out and started. Functions of their inputs (environment, node files, node
/// descriptions), so placement and command lines are tested for 1-64 nodes without a cluster.
/// Detection is in allocation.cpp, placement and its encoding in placement.cpp, launch plans in
/// launch_plan.cpp.

#include <map>
#include <string>
#include <vector>

#include "scalebench/placement.hpp"

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
  std::string scheduler = "local";   ///< "local", "slurm", "pbs", "lsf" or "sge"
  std::string job_id;                ///< empty when local; in arrays SLURM `ID_TASK`, LSF
                                     ///< `ID[INDEX]`, SGE `ID.TASK` (PBS: its PBS_JOBID)
  std::vector<NodeResources> nodes;  ///< at least one
  std::string nodefile;              ///< the node file read: PBS_NODEFILE, LSB_DJOB_HOSTFILE or
                                     ///< PE_HOSTFILE; empty when none was
  std::string remote_agent;          ///< LSF: LSF_BINDIR/blaunch where it is executable; mpiexec
                                     ///< starts its remote daemons through it
};

/// Detects, in this order, from `env`:
/// - SLURM: SLURM_JOB_ID, SLURM_JOB_NODELIST, SLURM_JOB_NUM_NODES, SLURM_JOB_CPUS_PER_NODE /
///   SLURM_CPUS_ON_NODE, SLURM_GPUS_ON_NODE / SLURM_GPUS_PER_NODE / SLURM_JOB_GPUS /
///   CUDA_VISIBLE_DEVICES;
/// - PBS: PBS_JOBID, PBS_NODEFILE (one line per slot), NCPUS, PBS_NGPUS / CUDA_VISIBLE_DEVICES;
/// - LSF: LSB_JOBID (and LSB_JOBINDEX), LSB_DJOB_HOSTFILE (one line per slot) or else
///   LSB_MCPU_HOSTS, checked against LSB_DJOB_NUMPROC; GPUs from SCALEBENCH_GPUS_PER_NODE (the
///   request, exported by slurm/lsf.tmpl) / CUDA_VISIBLE_DEVICES;
/// - Grid Engine (SGE, UGE): JOB_ID with PE_HOSTFILE or SGE_ROOT (and SGE_TASK_ID),
///   PE_HOSTFILE, checked against NSLOTS; GPUs as for LSF (exported by slurm/sge.tmpl);
/// otherwise local with `local_cpus` cores and `local_gpus` GPUs on this host. A node's cores
/// are its slots (PBS: at least NCPUS). Where a batch system names no GPUs, `local_gpus` is used
/// for every node. Throws sb::EnvironmentError, one line with the values' control characters
/// escaped, on an inconsistent allocation (unreadable node file, counts that disagree).
[[nodiscard]] Allocation detect_allocation(const Environment& env, int local_cpus, int local_gpus,
                                           const std::string& local_host);

// The placement of ranks is the launcher-to-rank protocol's (scalebench/placement.hpp).
using sb::decode_placement;
using sb::encode_placement;
using sb::RankPlacement;

/// place_ranks (scalebench/placement.hpp) of the allocation's nodes: rank 0 the scheduler, one
/// worker per GPU on every node, one per node without GPUs, cores shared evenly.
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
  /// An A/B run's side (ab_protocol.hpp): srun --overlap (the other side's step shares the
  /// allocation's CPUs and GPUs, and waits while this one measures) and --input=0 (the
  /// launcher's commands reach the scheduler, rank 0, alone). mpiexec forwards its standard
  /// input to rank 0 by itself.
  bool ab_side = false;
  std::string work_dir;  ///< the run's work folder, which the launcher creates and
                         ///< removes: host files too long for a command line go
                         ///< there. Required when a plan needs such a file.
};

/// Local, PBS, LSF, SGE: mpiexec (-n, --hostfile / --host, --bind-to none, per-rank env through
/// SCALEBENCH_PLACEMENT); SLURM: srun --mpi=pmix -n ... . Each rank learns its role from
/// SCALEBENCH_PLACEMENT (a compact encoding of `placement`, see encode_placement) and its rank.
/// Local: `mpiexec -n N --bind-to none [--oversubscribe] [--allow-run-as-root] [extra] exe args`.
/// PBS, LSF, SGE: `mpiexec --host h0:k0,h1:k1,... -n N --map-by slot --bind-to none -x
/// SCALEBENCH_PLACEMENT [--mca plm_rsh_agent BLAUNCH] [--oversubscribe] [--allow-run-as-root]
/// [extra] exe args` (the agent for LSF where Allocation::remote_agent names it; Grid Engine:
/// OpenMPI starts its daemons through `qrsh -inherit` by itself).
/// SLURM: `srun --mpi=pmix -n N --nodes=K --distribution=arbitrary --nodelist=<host of each rank,
/// in rank order> --cpus-per-task=1 --cpu-bind=none --kill-on-bad-exit=1 [--gpu-bind=none]
/// [--overcommit] [extra] exe args`. Placement must be in rank order with each node's ranks
/// contiguous (as place_ranks makes it); otherwise sb::EnvironmentError. A host list longer than
/// 64 KiB goes to a file in options.work_dir (LaunchPlan::files); without a work_dir that is an
/// sb::EnvironmentError, never a file elsewhere.
[[nodiscard]] LaunchPlan plan_launch(const Allocation& alloc,
                                     const std::vector<RankPlacement>& placement,
                                     const std::string& rank_executable,
                                     const std::vector<std::string>& rank_args,
                                     const LaunchOptions& options);

/// Writes plan.files, atomically (through a rename), into folders that must exist (the run's work
/// folder: nothing is created that the launcher would not remove). Throws sb::EnvironmentError
/// when a file cannot be written. Call it before starting plan.argv.
void write_launch_files(const LaunchPlan& plan);

}  // namespace sb::batch
