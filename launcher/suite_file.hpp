#pragma once
/// @file suite_file.hpp
/// Suite files (TOML) describe a run that people keep in version control:
///
///   preset  = "small"                 # tiny | small | seed | large
///   repeats = 5
///   warmup  = 1
///   paths   = ["single-cpu", "multi-cpu", "single-gpu", "multi-gpu"]
///   workloads = ["subset-mean", "svd"]  # used when there is no [[case]]
///   [params]                          # overrides for every case, "workload.key" = value
///   "subset-mean.n" = 40000
///   [[case]]                          # optional explicit groups of cases
///   workload = "svd"
///   preset = "seed"                   # optional
///   paths = ["single-gpu"]            # optional
///   params = { m = 100000 }           # optional, keys of this workload
///
/// Unknown keys are errors (a typo must not silently run the wrong suite).

#include <string>

#include "case_plan.hpp"

namespace sb {

/// Reads `path` into `request` (values present in the file replace those in `request`).
/// Throws sb::UsageError with the file, line and problem on bad input.
void load_suite(const std::string& path, RunRequest& request);

/// Same, from text (for tests and fuzzing); `name` is used in messages.
void load_suite_text(const std::string& text, const std::string& name, RunRequest& request);

}  // namespace sb
