#pragma once
/// @file stage_launch.cuh
/// Launches of the staging kernels (internal; stage_kernels.cuh, instantiated in
/// stage_launch.cu): the first level of HashStage and the row shuffle's send buckets
/// (launch_stage_rows), and HashStage's second level (launch_restage).

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "groupby/gpu/detail/device_helpers.cuh"
#include "groupby/gpu/hash_stage.cuh"
#include "groupby/gpu/row_source.cuh"

namespace sb::groupby::gpu::detail {

/// Dynamic shared memory of the staging kernels (StageShared), opted in on the current device
/// for every kernel of stage_kernels.cuh (once per thread and device, as it is asked before
/// every staging launch).
std::size_t stage_shared();

/// stage_rows_kernel over rows [0, n) of `src` (stored or generated) into the buckets of `tt`
/// (`cap` rows each; okey holds 32-bit keys when `narrow`). per_sm <= 0: exactly the blocks
/// resident at once; each loops over its tiles, and blocks beyond them would start only when the
/// first ones end and run their share on partly empty SMs (bench_groupby_gpu BM_AggregateByKey,
/// stage + flush).
void launch_stage_rows(const TileTarget& tt, const RowSource& src, std::int64_t n,
                       std::int64_t* okey, double* ox, double* oy, std::int64_t cap,
                       unsigned long long* cursor, int* overflow, bool narrow, int per_sm,
                       cudaStream_t stream);

/// restage_kernel: every region's first-level bucket of `s` into its slices' buckets (`s` has
/// its own slice buckets: s.slice_key != s.key; keys of both levels 32-bit when s.narrow_keys).
void launch_restage(const HashTable& t, const HashStage& s, cudaStream_t stream);

}  // namespace sb::groupby::gpu::detail
