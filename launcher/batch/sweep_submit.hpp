#pragma once
/// @file sweep_submit.hpp
/// `scalebench submit` of many jobs at once (docs/batch.md, "Fleet sweeps" and "Scaling
/// studies"):
///  - a fleet sweep (fleet_submit.cpp): node acceptance as one one-node job per node, either a job
///    array of --fleet COUNT elements (SLURM --array, PBS -J, LSF "name[1-N]", Grid Engine -t) or
///    one job pinned to each node of --fleet-nodes (SLURM --nodelist, PBS host=, LSF -m, Grid
///    Engine -l hostname=); each element writes its report ELEMENT.h5 and log ELEMENT.out into
///    the fleet folder, whose fleet.json (fleet_folder.hpp) `scalebench report merge` reads;
///  - a scaling study (scaling_submit.cpp): `scalebench scale` of the run at every node count of
///    --nodes, in one allocation of the largest count (job steps on the first K nodes) or, with
///    --chain, one job per node count, each starting after the previous one.

#include <string>
#include <vector>

#include "batch/submit.hpp"

namespace CLI {
class App;
}

namespace sb::batch {

struct SweepRequest {
  std::string fleet;           ///< --fleet COUNT: a job array of COUNT one-node elements
  std::string fleet_nodes;     ///< --fleet-nodes LIST: one job per node (host list syntax, @FILE)
  std::string fleet_elements;  ///< --fleet-elements LIST: these array elements (again)
  std::string fleet_dir;       ///< --fleet-dir DIR: the sweep's folder
  std::string scaling;         ///< --scaling strong|weak: a scaling study over --nodes
  bool chain = false;          ///< --chain: one job per node count
  std::string scaling_dir;     ///< --scaling-dir DIR: the study's folder

  [[nodiscard]] bool fleet_requested() const {
    return !fleet.empty() || !fleet_nodes.empty() || !fleet_elements.empty();
  }
  [[nodiscard]] bool scaling_requested() const { return !scaling.empty(); }
};

/// Registers the sweep options on the `submit` subcommand.
void add_sweep_options(CLI::App& submit, SweepRequest& sweep);

/// Submits a fleet sweep (or prints its scripts with `dry_run`): the job ids on stdout, one per
/// line, and what went where on stderr; updates DIR/fleet.json after every submission. Returns
/// the exit code. Throws sb::UsageError (bad values, checked before anything is submitted) and
/// sb::EnvironmentError (the batch system refused a job: those submitted before stay in the
/// manifest).
int submit_fleet(const SubmitRequest& request, const SweepRequest& sweep, bool dry_run);

/// Submits a scaling study (or prints its script(s)). Same contract as submit_fleet.
int submit_scaling(const SubmitRequest& request, const SweepRequest& sweep, bool dry_run);

/// The node counts of a study: "1,2,4,8", a range "1-8" (every count), "1:8" (the same),
/// "1:16:*2" (doubling) or "2:8:+2"; sorted, each once. Throws sb::UsageError naming `what`.
[[nodiscard]] std::vector<int> parse_node_counts(const std::string& text, const std::string& what);

/// Expands --fleet-nodes: a SLURM host list (`node[01-04],gpu7`) or @FILE (one name per line,
/// '#' comments); each name checked ([A-Za-z0-9_.-], at most 253 characters), each once, in
/// order. Throws sb::UsageError.
[[nodiscard]] std::vector<std::string> parse_fleet_nodes(const std::string& text);

/// The submit options of `request` as words, those left at their defaults out: without
/// --nodes, --after and --output (the fleet manifest and the commands that re-submit a part of
/// a sweep), or with them (`with_job`: the job script's own submit command).
[[nodiscard]] std::vector<std::string> submit_words(const SubmitRequest& request,
                                                    bool with_job = false);

}  // namespace sb::batch
