#pragma once
/// @file gpu_device.cuh
/// What a CUDA device has, for sizing kernel launches (read once per device and process).

namespace sb::gpu {

/// The streaming multiprocessors of CUDA device `device` (at least 1).
[[nodiscard]] int sm_count(int device);
/// The same for the calling thread's current device.
[[nodiscard]] int sm_count();

}  // namespace sb::gpu
