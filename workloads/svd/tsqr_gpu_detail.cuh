#pragma once
/// @file tsqr_gpu_detail.cuh
/// Helpers shared by the files of GpuTsqr (tsqr_gpu.cuh; internal): aligned carving of one
/// allocation, the slots of cuSOLVER's info codes, event times.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "scalebench/gpu_error.cuh"

namespace sb::svd::tsqr_detail {

inline constexpr std::size_t kAlign = 256;
inline std::size_t aligned(std::size_t bytes) {
  return (bytes + kAlign - 1) / kAlign * kAlign;
}

/// Hands out aligned pieces of one allocation.
class Carver {
 public:
  explicit Carver(void* base) : base_(static_cast<char*>(base)) {}
  template <typename T>
  T* take(std::size_t count) {
    T* p = reinterpret_cast<T*>(base_ + offset_);
    offset_ += aligned(count * sizeof(T));
    return p;
  }

 private:
  char* base_;
  std::size_t offset_ = 0;
};

/// Slots of infos_: the main stream's calls, then one per block stream from kMainInfos.
constexpr int kInfoStack = 0, kInfoLevel = 1, kInfoSvd = 2, kInfoDown = 3, kInfoLocal = 4;
constexpr int kInfoChol = 5;  // read by the sketch's checks themselves: not a failure
constexpr int kMainInfos = 6;

inline float elapsed_ms(cudaEvent_t a, cudaEvent_t b) {
  float ms = 0;
  SB_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
  return ms;
}

/// First row of slice p of `slices` over `rows` rows: the even split rounded down to a multiple
/// of kAlign bytes of doubles, so that every slice starts as aligned as the allocation (in every
/// column where lda is a multiple of that too, as at the large preset). cuBLAS's
/// solve and Gram products ran 8% slower on slices that start 32 bytes off (svd large on four
/// GPUs, 62 500-row slices: `run --trace`'s trsm+gram).
inline std::int64_t slice_start(std::int64_t rows, std::int64_t p, std::int64_t slices) {
  constexpr auto kRows = static_cast<std::int64_t>(kAlign / sizeof(double));
  if (p >= slices) return rows;
  return rows * p / slices / kRows * kRows;
}

inline int as_int(std::int64_t v) {
  return static_cast<int>(v);
}

}  // namespace sb::svd::tsqr_detail
