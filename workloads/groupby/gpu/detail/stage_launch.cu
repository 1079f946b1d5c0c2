// Launches of the staging kernels (stage_launch.cuh): the one translation unit that
// instantiates stage_kernels.cuh.
#include "groupby/gpu/detail/stage_launch.cuh"

#include "groupby/gpu/detail/launch_config.cuh"
#include "groupby/gpu/detail/stage_kernels.cuh"
#include "scalebench/gpu_error.cuh"

namespace sb::groupby::gpu::detail {

std::size_t stage_shared() {
  constexpr std::size_t bytes = sizeof(StageShared);
  thread_local int ready = -1;  // the device this thread last opted in on
  const int dev = current_device();
  if (dev == ready) return bytes;
  for (const void* k :
       {reinterpret_cast<const void*>(stage_rows_kernel<ColumnRows<std::int64_t>, std::int64_t>),
        reinterpret_cast<const void*>(stage_rows_kernel<ColumnRows<std::int64_t>, std::uint32_t>),
        reinterpret_cast<const void*>(stage_rows_kernel<GeneratedRows, std::int64_t>),
        reinterpret_cast<const void*>(stage_rows_kernel<GeneratedRows, std::uint32_t>),
        reinterpret_cast<const void*>(restage_kernel<std::int64_t>),
        reinterpret_cast<const void*>(restage_kernel<std::uint32_t>)})
    opt_in_shared(k, bytes);
  ready = dev;
  return bytes;
}

namespace {

template <class Src>
void launch_rows(const TileTarget& tt, const Src& src, std::int64_t n, std::int64_t* okey,
                 double* ox, double* oy, std::int64_t cap, unsigned long long* cursor,
                 int* overflow, bool narrow, int per_sm, cudaStream_t stream) {
  auto* kernel = narrow ? reinterpret_cast<const void*>(stage_rows_kernel<Src, std::uint32_t>)
                        : reinterpret_cast<const void*>(stage_rows_kernel<Src, std::int64_t>);
  const int grid =
      grid_for(n, kStageThreads * kStageRows,
               per_sm > 0 ? per_sm : resident_blocks(kernel, kStageThreads, stage_shared()));
  if (narrow) {
    stage_rows_kernel<Src, std::uint32_t><<<grid, kStageThreads, stage_shared(), stream>>>(
        tt, src, n, reinterpret_cast<std::uint32_t*>(okey), ox, oy, cap, cursor, overflow);
  } else {
    stage_rows_kernel<Src, std::int64_t><<<grid, kStageThreads, stage_shared(), stream>>>(
        tt, src, n, okey, ox, oy, cap, cursor, overflow);
  }
  SB_CUDA_CHECK_LAUNCH();
}

}  // namespace

void launch_stage_rows(const TileTarget& tt, const RowSource& src, std::int64_t n,
                       std::int64_t* okey, double* ox, double* oy, std::int64_t cap,
                       unsigned long long* cursor, int* overflow, bool narrow, int per_sm,
                       cudaStream_t stream) {
  if (n <= 0) return;
  if (src.is_generated()) {
    launch_rows(tt, GeneratedRows{src.spec, src.row0}, n, okey, ox, oy, cap, cursor, overflow,
                narrow, per_sm, stream);
  } else {
    launch_rows(tt, ColumnRows<std::int64_t>{src.key, src.x, src.y}, n, okey, ox, oy, cap, cursor,
                overflow, narrow, per_sm, stream);
  }
}

void launch_restage(const HashTable& t, const HashStage& s, cudaStream_t stream) {
  const int regions = 1 << s.region_bits;
  auto* slots = reinterpret_cast<unsigned long long*>(t.slots);
  const auto mask = static_cast<std::uint64_t>(t.capacity - 1);
  const auto per = static_cast<std::int64_t>(s.slices_per_region);
  auto* kernel = s.narrow_keys ? reinterpret_cast<const void*>(restage_kernel<std::uint32_t>)
                               : reinterpret_cast<const void*>(restage_kernel<std::int64_t>);
  const int grid =
      grid_for(static_cast<std::int64_t>(regions) * s.region_capacity, kStageThreads * kStageRows,
               resident_blocks(kernel, kStageThreads, stage_shared()));
  if (s.narrow_keys) {
    restage_kernel<std::uint32_t><<<grid, kStageThreads, stage_shared(), stream>>>(
        slots, mask, t.width, t.fields, s.slice_bits, static_cast<int>(per), regions,
        reinterpret_cast<const std::uint32_t*>(s.key), s.x, s.y, s.region_capacity, s.cursor,
        reinterpret_cast<std::uint32_t*>(s.slice_key), s.slice_x, s.slice_y, s.slice_capacity,
        s.slice_cursor, t.overflow);
  } else {
    restage_kernel<std::int64_t><<<grid, kStageThreads, stage_shared(), stream>>>(
        slots, mask, t.width, t.fields, s.slice_bits, static_cast<int>(per), regions, s.key, s.x,
        s.y, s.region_capacity, s.cursor, s.slice_key, s.slice_x, s.slice_y, s.slice_capacity,
        s.slice_cursor, t.overflow);
  }
  SB_CUDA_CHECK_LAUNCH();
}

}  // namespace sb::groupby::gpu::detail
