// comms' GPU code against its CPU twins on the same data (label gpu): the payload fill, the
// value check (every collective's true output, then corrupted), and, with two GPUs or more in
// this process, every NCCL collective and a peer copy whose outputs the CPU check accepts.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <nccl.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "comms/collective.hpp"
#include "comms/gpu/device_buffer.cuh"
#include "comms/gpu/payload.cuh"
#include "comms/payload.hpp"
#include "scalebench/gpu_error.cuh"

namespace sb::comms {
namespace {

std::vector<float> download(const gpu::DeviceBuffer& b, std::int64_t n) {
  std::vector<float> h(static_cast<std::size_t>(n));
  SB_CUDA_CHECK(cudaMemcpy(h.data(), b.get(), h.size() * sizeof(float), cudaMemcpyDeviceToHost));
  return h;
}

gpu::DeviceBuffer upload(const std::vector<float>& h) {
  gpu::DeviceBuffer b(static_cast<std::int64_t>(h.size()));
  SB_CUDA_CHECK(cudaMemcpy(b.get(), h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
  return b;
}

int gpu_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

TEST(CommsGpu, FillIsBitIdenticalToTheCpuPayload) {
  if (gpu_count() < 1) GTEST_SKIP() << "no GPU";
  const std::int64_t n = 1000003;  // not a multiple of 4: the last Philox block is partial
  gpu::DeviceBuffer d(n);
  gpu::fill_payload(42, 5, d.get(), n, nullptr);
  SB_CUDA_CHECK(cudaDeviceSynchronize());
  const auto got = download(d, n);
  std::vector<float> want(static_cast<std::size_t>(n));
  fill_payload(42, 5, want.data(), n);
  ASSERT_EQ(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)), 0);
}

/// The output every collective must produce on rank `me` of `ranks` (CPU, from the payloads).
std::vector<float> reference_output(const Collective& op, int me, int ranks, const Layout& l) {
  std::vector<float> o(static_cast<std::size_t>(l.recv), 0.f);
  const auto c = static_cast<std::size_t>(l.count);
  for (int r = 0; r < ranks; ++r) {
    std::vector<float> x(static_cast<std::size_t>(l.send));
    fill_payload(11, r, x.data(), l.send);
    for (std::size_t k = 0; k < c; ++k) {
      if (op.name == "all-reduce") o[k] += x[k];
      if (op.name == "all-gather") o[r * c + k] = x[k];
      if (op.name == "reduce-scatter") o[k] += x[me * c + k];
      if (op.name == "all-to-all") o[r * c + k] = x[me * c + k];
      if (op.name == "broadcast" && r == kRoot) o[k] = x[k];
    }
  }
  return o;
}

TEST(CommsGpu, TheCheckKernelCountsWhatTheCpuCheckCounts) {
  if (gpu_count() < 1) GTEST_SKIP() << "no GPU";
  const int ranks = 6;
  gpu::WrongCounter counter;
  for (const Collective* c : collectives()) {
    const Layout l = c->layout(4 * ranks * 4099, ranks);
    for (const int me : {0, 4}) {
      auto o = reference_output(*c, me, ranks, l);
      for (const int damage : {0, 1}) {
        if (damage) {
          o[3] += 2.0f;
          o[static_cast<std::size_t>(l.recv - 1)] = std::numeric_limits<float>::quiet_NaN();
        }
        const gpu::DeviceBuffer d = upload(o);
        const Wrong g =
            counter.count(c->expected, 11, me, ranks, l.count, kRoot, d.get(), l.recv, nullptr);
        const Wrong h = count_wrong(c->expected, 11, me, ranks, l.count, kRoot, o.data(), l.recv);
        EXPECT_EQ(g.count, h.count) << c->name << " rank " << me;
        EXPECT_EQ(g.first, h.first) << c->name << " rank " << me;
        EXPECT_EQ(h.count, damage ? 2 : 0) << c->name;
      }
    }
  }
}

TEST(CommsGpu, NcclCollectivesAndPeerCopiesPassTheCpuCheck) {
  const int n = gpu_count();
  if (n < 2) GTEST_SKIP() << "fewer than two GPUs in this process";
  std::vector<int> devs(static_cast<std::size_t>(n));
  for (int d = 0; d < n; ++d) devs[static_cast<std::size_t>(d)] = d;
  std::vector<ncclComm_t> comms(static_cast<std::size_t>(n));
  SB_NCCL_CHECK(ncclCommInitAll(comms.data(), n, devs.data()));
  std::vector<cudaStream_t> streams(static_cast<std::size_t>(n));
  for (int d = 0; d < n; ++d) {
    SB_CUDA_CHECK(cudaSetDevice(d));
    SB_CUDA_CHECK(cudaStreamCreate(&streams[static_cast<std::size_t>(d)]));
  }
  for (const Collective* c : collectives()) {
    for (const std::int64_t bytes : {std::int64_t{8} * n, std::int64_t{1} << 22}) {
      const Layout l = c->layout(bytes, n);
      std::vector<gpu::DeviceBuffer> send, recv;
      for (int d = 0; d < n; ++d) {
        SB_CUDA_CHECK(cudaSetDevice(d));
        send.emplace_back(l.send);
        recv.emplace_back(l.recv);
        gpu::fill_payload(11, d, send.back().get(), l.send, streams[static_cast<std::size_t>(d)]);
        SB_CUDA_CHECK(cudaMemsetAsync(recv.back().get(), 0xFF, static_cast<std::size_t>(l.recv) * 4,
                                      streams[static_cast<std::size_t>(d)]));
      }
      SB_NCCL_CHECK(ncclGroupStart());
      for (int d = 0; d < n; ++d)
        c->run_nccl(send[static_cast<std::size_t>(d)].get(),
                    recv[static_cast<std::size_t>(d)].get(), l, comms[static_cast<std::size_t>(d)],
                    streams[static_cast<std::size_t>(d)]);
      SB_NCCL_CHECK(ncclGroupEnd());
      for (int d = 0; d < n; ++d) {
        SB_CUDA_CHECK(cudaSetDevice(d));
        SB_CUDA_CHECK(cudaStreamSynchronize(streams[static_cast<std::size_t>(d)]));
        const auto out = download(recv[static_cast<std::size_t>(d)], l.recv);
        const Wrong h = count_wrong(c->expected, 11, d, n, l.count, kRoot, out.data(), l.recv);
        EXPECT_EQ(h.count, 0) << c->name << " " << bytes << " B on GPU " << d;
      }
    }
  }
  // A peer copy GPU 0 -> GPU 1 lands the sender's payload.
  const std::int64_t count = 1 << 20;
  SB_CUDA_CHECK(cudaSetDevice(0));
  gpu::DeviceBuffer src(count);
  gpu::fill_payload(11, 0, src.get(), count, nullptr);
  SB_CUDA_CHECK(cudaDeviceSynchronize());
  SB_CUDA_CHECK(cudaSetDevice(1));
  gpu::DeviceBuffer dst(count);
  SB_CUDA_CHECK(cudaMemcpyPeer(dst.get(), 1, src.get(), 0, static_cast<std::size_t>(count) * 4));
  const auto landed = download(dst, count);
  EXPECT_EQ(count_wrong(kExpectCopy, 11, 1, n, count, 0, landed.data(), count).count, 0);
  for (int d = 0; d < n; ++d) {
    SB_CUDA_CHECK(cudaSetDevice(d));
    SB_CUDA_CHECK(cudaStreamDestroy(streams[static_cast<std::size_t>(d)]));
    (void)ncclCommDestroy(comms[static_cast<std::size_t>(d)]);
  }
}

}  // namespace
}  // namespace sb::comms
