// Node acceptance's NVML readers on a real GPU (issue #50, label gpu): the energy counter grows
// across a kernel by a plausible amount, the compute process list holds this process once it has
// a context (and it is not "another process"), every health field is present (a value, or
// unavailable with NVML's reason), and both host copies measure a plausible bandwidth with the
// PCIe link read while they ran.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <string>

#include "gpu_acceptance_probe.hpp"
#include "scalebench/gpu_context.cuh"
#include "scalebench/gpu_runtime.hpp"
#include "scalebench/telemetry_source.hpp"

namespace {

using nlohmann::json;

__global__ void spin(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

/// Device 0's PCI bus id ("0000:19:00.0"), with a context on it; empty without a GPU.
std::string device0(std::string* why) {
  if (sb::visible_gpu_count(why) == 0) return {};
  SB_CUDA_CHECK(cudaSetDevice(0));
  SB_CUDA_CHECK(cudaFree(nullptr));  // the context
  char bus[32] = {};
  SB_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, 0));
  return bus;
}

/// Keeps every SM of device 0 busy for about `seconds`.
void burn(double seconds) {
  int sms = 0, khz = 0;
  SB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  SB_CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    spin<<<sms * 4, 256>>>(static_cast<long long>(khz) * 20);  // ~20 ms at the base clock
    SB_CUDA_CHECK(cudaGetLastError());
    SB_CUDA_CHECK(cudaDeviceSynchronize());
  }
}

TEST(NvmlAcceptance, TheEnergyCounterGrowsAcrossAKernel) {
  std::string why;
  const std::string bus = device0(&why);
  if (bus.empty()) GTEST_SKIP() << why;
  auto src = sb::make_gpu_energy_telemetry(bus);
  ASSERT_TRUE(src) << "NVML does not see the GPU at " << bus;
  const json d = src->describe();
  if (d.contains("gpu_energy_unavailable")) GTEST_SKIP() << d.dump();
  EXPECT_EQ(d.value("gpu_energy", std::string()), "nvml");
  sb::TelemetrySample a, b;
  src->read(a);
  const auto t0 = std::chrono::steady_clock::now();
  burn(1.0);
  src->read(b);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(std::isfinite(a.gpu_energy_j) && std::isfinite(b.gpu_energy_j));
  const double watts = (b.gpu_energy_j - a.gpu_energy_j) / s;
  EXPECT_GT(watts, 20) << "a busy GPU draws more than 20 W";
  EXPECT_LT(watts, 2000);
}

TEST(NvmlAcceptance, TheProcessListHoldsThisProcessAndItIsNotAnOther) {
  std::string why;
  const std::string bus = device0(&why);
  if (bus.empty()) GTEST_SKIP() << why;
  const unsigned me = static_cast<unsigned>(getpid());
  // Our own pid among the job's: not another process.
  auto own = sb::make_gpu_process_telemetry(bus, {me}, 0);
  ASSERT_TRUE(own);
  own->begin_case(true);
  sb::TelemetrySample s;
  own->read(s);
  const json sum = own->case_summary();
  ASSERT_TRUE(sum.is_object()) << "a GPU case keeps a census";
  if (!sum.value("listed", false)) GTEST_SKIP() << "NVML lists no process here: " << sum.dump();
  if (sum.contains("note")) GTEST_SKIP() << sum["note"] << " (a container's pid namespace)";
  EXPECT_TRUE(sum["own_seen"].get<bool>()) << sum.dump();
  for (const auto& p : sum["others"]) EXPECT_NE(p["pid"], me) << sum.dump();
  EXPECT_TRUE(std::isfinite(s.gpu_others));
  // Without the job's pids this process is another, named from /proc.
  auto stranger = sb::make_gpu_process_telemetry(bus, {}, 0);
  ASSERT_TRUE(stranger);
  stranger->begin_case(true);
  sb::TelemetrySample s2;
  stranger->read(s2);
  bool found = false;
  const json strangers = stranger->case_summary();  // kept: the loop reads into it
  for (const auto& p : strangers["others"])
    if (p["pid"] == me) {
      found = true;
      EXPECT_FALSE(p["name"].get<std::string>().empty()) << p.dump();
      EXPECT_EQ(p["readings"], 1) << p.dump();
    }
  EXPECT_TRUE(found) << stranger->case_summary().dump();
  EXPECT_GE(s2.gpu_others, 1);
}

TEST(NvmlAcceptance, EveryHealthFieldIsPresentAndBothHostCopiesMeasure) {
  std::string why;
  if (sb::visible_gpu_count(&why) == 0) GTEST_SKIP() << why;
  sb::GpuStartup t;
  auto ctx = sb::create_gpu_context(0, MPI_COMM_NULL, &t);
  ASSERT_NE(ctx, nullptr);
  json desc = sb::describe_gpu(*ctx);
  desc["node_gpu"] = 0;
  ASSERT_FALSE(desc.value("pci_bus_id", std::string()).empty()) << desc.dump();
  const auto probe =
      sb::detail::probe_gpu_acceptance(*ctx, desc, {static_cast<unsigned>(getpid())}, true);
  ASSERT_EQ(probe.health.size(), 17u) << probe.health.dump();
  int available = 0;
  for (const auto& r : probe.health) {
    const std::string v = r["value"];
    EXPECT_FALSE(v.empty()) << r.dump();
    if (v == "unavailable") {
      EXPECT_FALSE(r["detail"].get<std::string>().empty()) << r.dump();
    } else {
      ++available;
    }
    std::printf("%-18s %s  %s\n", r["field"].get<std::string>().c_str(), v.c_str(),
                r["detail"].get<std::string>().c_str());
  }
  EXPECT_GE(available, 3) << "a real GPU gives its driver, VBIOS and compute mode at least";
  ASSERT_EQ(probe.links.size(), 2u);
  for (const auto& l : probe.links) {
    std::printf("%s: %s\n", l["direction"].get<std::string>().c_str(), l.dump().c_str());
    ASSERT_TRUE(l["bytes_per_s"].is_number()) << l.dump();
    EXPECT_GT(l["bytes_per_s"].get<double>(), 1e9) << "any PCIe link since Gen2 x8";
    EXPECT_LT(l["bytes_per_s"].get<double>(), 1e12);
    EXPECT_EQ(l["error"], "");
  }
}

}  // namespace
