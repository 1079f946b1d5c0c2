#pragma once
/// @file device_buffer.cuh
/// GPU memory of float32 elements, freed with its owner (a worker whose constructor throws
/// after an allocation leaves nothing behind).

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <utility>

#include "scalebench/gpu_error.cuh"

namespace sb::comms::gpu {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::int64_t elements) {
    SB_CUDA_CHECK(
        cudaMalloc(&data_, static_cast<std::size_t>(std::max<std::int64_t>(elements, 1)) * 4));
  }
  ~DeviceBuffer() {
    if (data_ != nullptr) (void)cudaFree(data_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : data_(std::exchange(o.data_, nullptr)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(data_, o.data_);
    return *this;
  }
  [[nodiscard]] float* get() const { return data_; }

 private:
  float* data_ = nullptr;
};

}  // namespace sb::comms::gpu
