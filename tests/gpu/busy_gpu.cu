// Another process keeping one GPU busy (tests/gpu/test_each_gpu_check.sh): kernels that spin on
// the SM clock for about 50 ms each on every SM, launched back to back until the time is up, so
// that a benchmark on the same GPU gets only time slices of it.
//   busy_gpu SECONDS   (the GPU: device 0 of CUDA_VISIBLE_DEVICES)
//   busy_gpu --count   prints the number of visible GPUs
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

#include "scalebench/gpu_error.cuh"

namespace {

__global__ void spin(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc > 1 && std::strcmp(argv[1], "--count") == 0) {
      int n = 0;
      if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
      std::printf("%d\n", n);
      return 0;
    }
    const double seconds = argc > 1 ? std::atof(argv[1]) : 60.0;
    SB_CUDA_CHECK(cudaSetDevice(0));
    int sms = 0, khz = 0;
    SB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    SB_CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
    const long long cycles = static_cast<long long>(khz) * 50;  // ~50 ms at the base clock
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    std::printf("busy\n");
    std::fflush(stdout);
    while (std::chrono::steady_clock::now() < end) {
      spin<<<sms * 4, 256>>>(cycles);
      SB_CUDA_CHECK_LAUNCH();
      SB_CUDA_CHECK(cudaDeviceSynchronize());
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "busy_gpu: %s\n", e.what());
    return 1;
  }
}
