#pragma once
/// @file launch_config.cuh
/// Host helpers of the groupby GPU steps (internal): the current device and its SMs, the opt-in
/// to more than 48 KB of dynamic shared memory, grid sizes, and the arrays of staged rows.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "groupby/gpu/hash_table.cuh"

namespace sb::groupby::gpu::detail {

int current_device();
int device_sms();

/// Opts `kernel` in to `bytes` of dynamic shared memory above the default 48 KB on the current
/// device. The attribute belongs to the device, so a process that drives several GPUs (the
/// benchmarks) sets it on each: once per device, kernel and size.
void opt_in_shared(const void* kernel, std::size_t bytes);

/// Blocks for n items of `threads` threads each, at most per_sm blocks per SM of the device
/// first asked (at least one).
int grid_for(std::int64_t n, int threads, int per_sm);

/// Blocks of `kernel` (`threads` threads, `smem` bytes of dynamic shared memory, already opted
/// in) resident on one SM at once: the occupancy calculator, cached per device and kernel.
int resident_blocks(const void* kernel, int threads, std::size_t smem);

/// log2 of the table's capacity (a power of two).
int log2_capacity(const HashTable& t);

/// Staged-row arrays of `n` rows: keys, x, and y when the table keeps sum y.
void alloc_rows(std::size_t n, bool with_y, std::int64_t*& key, double*& x, double*& y);

}  // namespace sb::groupby::gpu::detail
