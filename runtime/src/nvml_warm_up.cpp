// NVML initialized ahead of the GPU description (nvml_warm_up.hpp).
#include "nvml_warm_up.hpp"

namespace sb::detail {

NvmlWarmUp::NvmlWarmUp() noexcept {
  try {
    thread_ = std::thread([this] {
      try {
        lib_ = std::make_unique<NvmlLibrary>();
      } catch (...) {
        lib_.reset();  // no memory: nothing warmed up
      }
    });
  } catch (...) {
    // no thread: the GPU description initializes NVML itself, as without a warm-up
  }
}

NvmlWarmUp::~NvmlWarmUp() {
  if (thread_.joinable()) thread_.join();
}

}  // namespace sb::detail
