#pragma once
/// @file system_info.hpp
/// Descriptions of the machine for /system and `scalebench info`, and the CPU ceilings of
/// docs/specification.md §11 (STREAM triad bandwidth, DGEMM rate).

#include <string>

#include <nlohmann/json.hpp>

namespace sb {

/// This node: host, cpu_model, sockets, cores, pus, numa_domains, memory_bytes, os, kernel.
[[nodiscard]] nlohmann::json describe_node();

/// Physical cores of this node (hwloc), at least 1.
[[nodiscard]] int physical_cores();

/// Library versions: mpi, hdf5, blas, hwloc, compiler, openmp, sleef.
[[nodiscard]] nlohmann::json library_versions();

/// STREAM triad (a = b + s*c, 24 bytes per element) and DGEMM rates with `threads` threads,
/// in well under a second: {"stream_triad_bytes_per_s", "dgemm_flop_per_s", "threads"}.
[[nodiscard]] nlohmann::json measure_cpu_ceilings(int threads);  // ceiling records (array)

/// Host name of this process.
[[nodiscard]] std::string host_name();

}  // namespace sb
