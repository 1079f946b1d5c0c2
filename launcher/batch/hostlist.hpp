#pragma once
/// @file hostlist.hpp
/// Parsers for the compressed lists batch systems put in the environment: SLURM host lists
/// (`node[01-03,07],gpu-a[1-2]-b[0-1]`), SLURM per-node counts (`16(x2),8`) and device lists
/// (`0,1,4-5`, CUDA_VISIBLE_DEVICES). Pure functions, linear in their input; malformed text
/// throws sb::EnvironmentError, one line with the text's control characters escaped.

#include <string>
#include <vector>

namespace sb::batch {

/// Expands a SLURM host list as `scontrol show hostnames` does: comma-separated items, each a
/// sequence of literal text and bracket groups of numbers and ranges; several groups in one item
/// expand as a cartesian product (left-most slowest). Zero padding follows the range's start
/// (`[01-10]` gives 01..10, `[8-10]` gives 8,9,10). Order and duplicates are kept.
[[nodiscard]] std::vector<std::string> expand_hostlist(const std::string& list);

/// Expands SLURM's per-node counts, e.g. SLURM_JOB_CPUS_PER_NODE `16(x2),8` -> {16, 16, 8}.
[[nodiscard]] std::vector<int> expand_counts(const std::string& list);

/// Number of devices in a device list: `0,1,2` -> 3, `0-3` -> 4, `GPU-uuid1,GPU-uuid2` -> 2;
/// empty, `NoDevFiles`, `none` or `-1` -> 0.
[[nodiscard]] int count_devices(const std::string& list);

/// GPUs in a SLURM GPU count such as SLURM_GPUS_PER_NODE: `4` -> 4, `a100:4` -> 4,
/// `gpu:a100:2,gpu:v100:1` -> 3.
[[nodiscard]] int count_gpu_spec(const std::string& spec);

}  // namespace sb::batch
