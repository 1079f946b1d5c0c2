#pragma once
/// @file ceiling_cache.hpp
/// Ceilings (docs/specification.md §11) measured once per machine and kept, so that every
/// run's efficiency is judged against the same figures: measured anew in every run, a STREAM
/// triad or DGEMM taken while the other ranks start up moved by 2x between runs on a busy
/// 2-core machine, and efficiency with it.
///
/// The cache is one JSON file, `ceilings.json` in settings::cache_dir() (default
/// $XDG_CACHE_HOME/scalebench; SCALEBENCH_CACHE_DIR=none turns it off), keyed by what the
/// figures depend on: for CPUs the host, CPU model, BLAS build and thread count; for GPUs the
/// GPU's UUID, driver and CUDA runtime. An entry is used for kMaxAgeDays; `run
/// --fresh-ceilings` measures anew and replaces it. Every ceiling record says where it came
/// from: "source" = "measured" or "cached", and "measured_utc". A cache that cannot be read or
/// written is ignored (the ceilings are then measured), never an error. Figures the caller finds
/// implausible are used for their run and not kept: CPU ceilings measured while other processes
/// took a tenth or more of the worker's CPUs (others_cpu_share.hpp), or with more threads
/// measuring less than one.

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

namespace sb {

inline constexpr double kCeilingMaxAgeDays = 7.0;

/// The ceiling records (an array) of `key`: from the cache when an entry younger than
/// kCeilingMaxAgeDays exists and `fresh` is false, else `measure()`'s, stored when `plausible`
/// (if given) accepts them. `cache_file` is the cache's path (empty: no cache).
[[nodiscard]] nlohmann::json cached_ceilings(
    const std::string& cache_file, const std::string& key, bool fresh,
    const std::function<nlohmann::json()>& measure,
    const std::function<bool(const nlohmann::json&)>& plausible = nullptr);

/// settings::cache_dir()/ceilings.json, or "" when the cache is off.
[[nodiscard]] std::string ceiling_cache_file();

}  // namespace sb
