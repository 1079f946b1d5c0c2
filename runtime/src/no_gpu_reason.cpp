// Why there is no GPU, in words a user can act on (gpu_runtime.hpp).
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "scalebench/gpu_runtime.hpp"

namespace sb {

std::string explain_no_gpu(NoGpu kind, const std::string& cuda_text,
                           const std::string& driver_version_file) {
  std::ifstream in(driver_version_file);
  std::string first_line;
  const bool driver_loaded = in && std::getline(in, first_line);
  switch (kind) {
    case NoGpu::no_driver:
      if (!driver_loaded)
        return "no NVIDIA GPU driver on this machine (no " + driver_version_file + ")";
      return fmt::format(
          "the NVIDIA driver is too old for this CUDA runtime ({}; {}): update the driver",
          cuda_text, first_line.substr(0, 120));
    case NoGpu::no_device:
      return driver_loaded ? "the NVIDIA driver is loaded but sees no GPU (" + cuda_text + ")"
                           : "no NVIDIA GPU on this machine";
    case NoGpu::other:
      break;
  }
  return "no usable GPU: " + cuda_text;
}

}  // namespace sb
