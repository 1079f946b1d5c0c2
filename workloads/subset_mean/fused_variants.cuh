#pragma once
/// @file fused_variants.cuh
/// Every variant of the fused subset-mean kernel (GpuMath x 1, 2 or 6 pairs per step), for the
/// benchmarks and tests only: the library compiles the one the worker runs
/// (workload_variant()), and a translation unit that includes this header compiles the rest
/// (bench_subset_mean_gpu compares them; test_subset_mean_gpu checks each against the CPU).

#include <string>

#include "scalebench/error.hpp"
#include "subset_mean/fused_kernel.cuh"
#include "subset_mean/subset_mean_kernel.cuh"

namespace sb::subset_mean {

/// The variant with Box-Muller `math` and `unroll` pairs per step (1, 2 or 6).
inline const FusedVariant& fused_variant(GpuMath math, int unroll) {
  using detail::make_variant;
  static const FusedVariant all[] = {
      make_variant<GpuMath::fast, 1>(),        make_variant<GpuMath::fast, 2>(),
      make_variant<GpuMath::fast, 6>(),        make_variant<GpuMath::cuda, 1>(),
      make_variant<GpuMath::cuda, 2>(),        make_variant<GpuMath::cuda, 6>(),
      make_variant<GpuMath::philox_only, 1>(), make_variant<GpuMath::philox_only, 2>(),
      make_variant<GpuMath::philox_only, 6>(), make_variant<GpuMath::math_only, 1>(),
      make_variant<GpuMath::math_only, 2>(),   make_variant<GpuMath::math_only, 6>(),
      make_variant<GpuMath::table, 1>(),       make_variant<GpuMath::table, 2>(),
      make_variant<GpuMath::table, 6>(),
  };
  for (const FusedVariant& v : all)
    if (v.math == math && v.unroll == unroll) return v;
  throw UsageError("subset-mean: the fused kernel has no variant with unroll " +
                   std::to_string(unroll) + " (1, 2 or 6)");
}

}  // namespace sb::subset_mean
