#pragma once
/// @file suite_file.hpp
/// Suite files (TOML) describe a run that people keep in version control (docs/suite-files.md):
///
///   preset  = "small"                 # tiny | small | seed | large: every case starts from it
///   repeats = 5                       # or "auto", with optional min_repeats, max_repeats,
///                                     # max_time (s) and target_spread (docs/ci.md)
///   warmup  = 1
///   paths   = ["single-cpu", "multi-cpu", "single-gpu", "multi-gpu"]
///   workloads = ["subset-mean", "svd"]  # cases of these workloads with the settings above
///   [params]                          # for every case of that workload, "workload.key" = value
///   "subset-mean.n" = 40000           # (a string value may be a sweep: "10000,20000")
///   [[case]]                          # more cases, each table a workload with its own settings
///   workload = "svd"
///   preset = "seed"                   # optional
///   paths = ["single-gpu"]            # optional
///   params = { m = 100000 }           # optional, keys of this workload
///   plugins = ["build/libexample.so"] # workload plugins to load (top level; relative to the
///                                     # suite file's folder), after those of --plugin
///
/// The cases are those of `workloads` followed by those of each [[case]]; with neither, every
/// workload runs. Unknown keys are errors (a typo must not silently run the wrong suite), and
/// a [params] entry that applies to no case is reported.

#include <string>

#include "case_plan.hpp"

namespace sb {

/// Reads `path` into `request` (values present in the file replace those in `request`).
/// Throws sb::UsageError with the file, line and problem on bad input.
void load_suite(const std::string& path, RunRequest& request);

/// Same, from text (for tests and fuzzing); `name` is used in messages.
void load_suite_text(const std::string& text, const std::string& name, RunRequest& request);

}  // namespace sb
