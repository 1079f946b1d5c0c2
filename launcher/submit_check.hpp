#pragma once
/// @file submit_check.hpp
/// `scalebench submit`'s check of the `scalebench run` options after `--`, before anything is
/// queued: they are parsed with run's own option definitions (run_options.hpp) and checked as
/// run checks them (settings, suite file, plugins, presets, workloads, paths, parameters and
/// their sweeps, repeats, the report and reference files), with the same one-line errors and
/// exit code 2; then every planned case is forecast on the allocation the job asks for
/// (case_forecast.hpp): cases that would be skipped are said on stderr, and a case whose memory
/// estimate cannot fit the memory the job asks for per node (SLURM --mem, PBS mem=) is refused.

#include <string>
#include <vector>

#include "batch/submit.hpp"

namespace sb {

/// Throws sb::UsageError (exit 2) for what `scalebench run` would refuse, or a case that
/// cannot fit the job. Returns the lines to say on stderr (cases that will be skipped; the
/// largest memory need when the nodes' memory is not known here).
[[nodiscard]] std::vector<std::string> check_submitted_run(const batch::SubmitRequest& request);

/// Bytes of memory per node a batch option asks for: SLURM `--mem=64G` (K, M (default), G, T),
/// PBS `-l select=...:mem=64gb` (a chunk, one per node) or `-l mem=128gb` (the job's, shared by
/// its `nodes`; b (default), kb, mb, gb, tb); -1 when none does.
[[nodiscard]] double requested_memory_per_node(const std::string& scheduler,
                                               const std::vector<std::string>& batch_options,
                                               int nodes);

}  // namespace sb
