// Host <-> device copy bandwidth from pinned memory (gpu_runtime.hpp,
// measure_host_copy_bandwidth): the link between a GPU and its host, as nvbandwidth measures it.
#include <linux/mempolicy.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <exception>

#include "scalebench/gpu_context.cuh"
#include "scalebench/gpu_runtime.hpp"

namespace sb {
namespace {

/// The NUMA node holding the page at `p` (-1 when the kernel does not say).
int numa_node_of(const void* p) {
  int node = -1;
  if (syscall(SYS_get_mempolicy, &node, nullptr, 0UL, const_cast<void*>(p),
              MPOL_F_NODE | MPOL_F_ADDR) != 0)
    return -1;
  return node;
}

/// Frees what it holds however the measurement ends.
struct Buffers {
  void* host = nullptr;
  void* dev = nullptr;
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  ~Buffers() {
    if (e0 != nullptr) cudaEventDestroy(e0);
    if (e1 != nullptr) cudaEventDestroy(e1);
    if (dev != nullptr) cudaFree(dev);
    if (host != nullptr) cudaFreeHost(host);
  }
};

}  // namespace

HostCopyBandwidth measure_host_copy_bandwidth(GpuContext& ctx, std::size_t bytes,
                                              const std::function<void()>& while_copying) {
  HostCopyBandwidth out;
  try {
    SB_CUDA_CHECK(cudaSetDevice(ctx.device));
    Buffers b;
    SB_CUDA_CHECK(cudaMallocHost(&b.host, bytes));
    SB_CUDA_CHECK(cudaMalloc(&b.dev, bytes));
    // Pinned pages are resident from here on: where they lie is where the copies read.
    out.host_numa_node = numa_node_of(b.host);
    SB_CUDA_CHECK(cudaEventCreate(&b.e0));
    SB_CUDA_CHECK(cudaEventCreate(&b.e1));
    auto best_of = [&](cudaMemcpyKind kind) {
      void* dst = kind == cudaMemcpyHostToDevice ? b.dev : b.host;
      const void* src = kind == cudaMemcpyHostToDevice ? b.host : b.dev;
      float best = 1e30f;
      for (int rep = 0; rep < 6; ++rep) {  // the first one warms up
        SB_CUDA_CHECK(cudaEventRecord(b.e0, ctx.stream));
        SB_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, ctx.stream));
        SB_CUDA_CHECK(cudaEventRecord(b.e1, ctx.stream));
        SB_CUDA_CHECK(cudaEventSynchronize(b.e1));
        float ms = 0;
        SB_CUDA_CHECK(cudaEventElapsedTime(&ms, b.e0, b.e1));
        if (rep > 0) best = std::min(best, ms);
      }
      return static_cast<double>(bytes) / (static_cast<double>(best) * 1e-3);
    };
    out.h2d_bytes_per_s = best_of(cudaMemcpyHostToDevice);
    out.d2h_bytes_per_s = best_of(cudaMemcpyDeviceToHost);
    if (while_copying) {
      // A train of copies keeps the link busy (and out of its idle power state) while the
      // caller reads it.
      for (int i = 0; i < 8; ++i)
        SB_CUDA_CHECK(cudaMemcpyAsync(b.dev, b.host, bytes, cudaMemcpyHostToDevice, ctx.stream));
      while_copying();
    }
    SB_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
    out.bytes = static_cast<double>(bytes);
  } catch (const std::exception& e) {
    out = HostCopyBandwidth{};
    out.error = e.what();
    cudaGetLastError();  // a failed allocation leaves no sticky error behind
  }
  return out;
}

}  // namespace sb
