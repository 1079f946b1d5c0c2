/// @file gpu_context.cu
/// The GPU side of the runtime (gpu_runtime.hpp, gpu_context.cuh): device discovery, a worker's
/// context (device, non-blocking stream, NCCL communicator over the GPU workers, lazily made
/// cuBLAS / cuSOLVER handles) and the descriptions that go to the report's /system group.

#include <curand.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "scalebench/clock.hpp"
#include "scalebench/gpu_context.cuh"
#include "scalebench/nvml_probe.hpp"

namespace sb {
namespace {

/// printf-style formatting (fmt 9's headers do not compile under nvcc in C++20 mode).
template <typename... Args>
std::string strf(const char* f, const Args&... args) {
  std::array<char, 512> buf{};
  const int n = std::snprintf(buf.data(), buf.size(), f, args...);
  return n < 0 ? std::string() : std::string(buf.data(), std::min<std::size_t>(n, buf.size() - 1));
}

/// "CUDA 13000" style version integers -> "13.0".
std::string cuda_version_string(int v) {
  return strf("%d.%d", v / 1000, (v % 1000) / 10);
}

/// PCI bus ids from CUDA ("0000:19:00.0") and NVML ("00000000:19:00.0") in one form.
std::string canonical_bus_id(const std::string& text) {
  unsigned domain = 0, bus = 0, dev = 0, fn = 0;
  if (std::sscanf(text.c_str(), "%x:%x:%x.%x", &domain, &bus, &dev, &fn) != 4) return text;
  return strf("%04x:%02x:%02x.%x", domain, bus, dev, fn);
}

std::string uuid_string(const cudaUUID_t& u) {
  const auto* b = reinterpret_cast<const unsigned char*>(u.bytes);
  std::string s = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    s += strf("%02x", static_cast<unsigned>(b[i]));
  }
  return s;
}

int device_attribute(cudaDeviceAttr attr, int device) {
  int v = 0;
  if (cudaDeviceGetAttribute(&v, attr, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;
  }
  return v;
}

}  // namespace

bool cuda_built() noexcept {
  return true;
}

int visible_gpu_count(std::string* why) noexcept {
  try {
    int n = 0;
    const cudaError_t rc = cudaGetDeviceCount(&n);
    if (rc != cudaSuccess) {
      (void)cudaGetLastError();
      if (why != nullptr) *why = std::string("no usable GPU: ") + cudaGetErrorString(rc);
      return 0;
    }
    if (n == 0 && why != nullptr) {
      const char* cvd = std::getenv("CUDA_VISIBLE_DEVICES");
      *why = cvd != nullptr ? strf("no GPU visible (CUDA_VISIBLE_DEVICES=\"%s\")", cvd)
                            : std::string("no GPU visible");
    }
    return n;
  } catch (...) {
    return 0;
  }
}

void GpuContextDeleter::operator()(GpuContext* ctx) const noexcept {
  if (ctx == nullptr) return;
  if (ctx->device >= 0) (void)cudaSetDevice(ctx->device);
  if (ctx->stream != nullptr) (void)cudaStreamSynchronize(ctx->stream);
  if (ctx->cublas_ != nullptr) (void)cublasDestroy(ctx->cublas_);
  if (ctx->cusolver_ != nullptr) (void)cusolverDnDestroy(ctx->cusolver_);
  if (ctx->nccl != nullptr) (void)ncclCommDestroy(ctx->nccl);
  if (ctx->stream != nullptr) (void)cudaStreamDestroy(ctx->stream);
  (void)cudaGetLastError();
  delete ctx;
}

cublasHandle_t GpuContext::cublas() {
  if (cublas_ == nullptr) {
    SB_CUDA_CHECK(cudaSetDevice(device));
    SB_CUBLAS_CHECK(cublasCreate(&cublas_));
    SB_CUBLAS_CHECK(cublasSetStream(cublas_, stream));
  }
  return cublas_;
}

cusolverDnHandle_t GpuContext::cusolver() {
  if (cusolver_ == nullptr) {
    SB_CUDA_CHECK(cudaSetDevice(device));
    SB_CUSOLVER_CHECK(cusolverDnCreate(&cusolver_));
    SB_CUSOLVER_CHECK(cusolverDnSetStream(cusolver_, stream));
  }
  return cusolver_;
}

GpuContextPtr create_gpu_context(int device, MPI_Comm gpu_workers, GpuStartup* timing) {
  const double t0 = now();
  std::string why;
  const int visible = visible_gpu_count(&why);
  if (device < 0 || device >= visible) {
    throw EnvironmentError(visible == 0
                               ? why
                               : strf("GPU %d requested but %d visible (CUDA_VISIBLE_DEVICES=%s)",
                                      device, visible,
                                      std::getenv("CUDA_VISIBLE_DEVICES") != nullptr
                                          ? std::getenv("CUDA_VISIBLE_DEVICES")
                                          : "unset"));
  }
  GpuContextPtr ctx(new GpuContext);
  ctx->device = device;
  SB_CUDA_CHECK(cudaSetDevice(device));
  SB_CUDA_CHECK(cudaFree(nullptr));  // creates the primary context now, outside any timed case
  SB_CUDA_CHECK(cudaGetDeviceProperties(&ctx->prop, device));
  SB_CUDA_CHECK(cudaStreamCreateWithFlags(&ctx->stream, cudaStreamNonBlocking));
  SB_CUDA_CHECK(cudaStreamSynchronize(ctx->stream));
  const double t1 = now();

  int size = 1;
  int rank = 0;
  if (gpu_workers != MPI_COMM_NULL) {
    SB_MPI_CHECK(MPI_Comm_size(gpu_workers, &size));
    SB_MPI_CHECK(MPI_Comm_rank(gpu_workers, &rank));
  }
  if (size > 1) {
    // Rank 0 makes the unique id; its status travels with it so that a failure there makes
    // every rank throw instead of hanging in ncclCommInitRank.
    struct {
      int rc;
      ncclUniqueId id;
    } msg{};
    if (rank == 0) msg.rc = static_cast<int>(ncclGetUniqueId(&msg.id));
    SB_MPI_CHECK(MPI_Bcast(&msg, static_cast<int>(sizeof msg), MPI_BYTE, 0, gpu_workers));
    if (msg.rc != ncclSuccess)
      detail::throw_library_error("NCCL", "ncclGetUniqueId (on GPU worker 0)",
                                  ncclGetErrorString(static_cast<ncclResult_t>(msg.rc)), __FILE__,
                                  __LINE__);
    SB_NCCL_CHECK(ncclCommInitRank(&ctx->nccl, size, msg.id, rank));
    ctx->nccl_rank = rank;
    ctx->nccl_size = size;
    // One tiny all-reduce so that NCCL's lazily made connections are up before the first case.
    double* one = nullptr;
    SB_CUDA_CHECK(cudaMalloc(&one, sizeof(double)));
    SB_CUDA_CHECK(cudaMemsetAsync(one, 0, sizeof(double), ctx->stream));
    const ncclResult_t rc = ncclAllReduce(one, one, 1, ncclDouble, ncclSum, ctx->nccl, ctx->stream);
    const cudaError_t sync = cudaStreamSynchronize(ctx->stream);
    (void)cudaFree(one);
    SB_NCCL_CHECK(rc);
    SB_CUDA_CHECK(sync);
  }
  const double t2 = now();
  if (timing != nullptr) {
    timing->cuda_init_s = t1 - t0;
    timing->nccl_init_s = t2 - t1;
  }
  return ctx;
}

nlohmann::json describe_gpu(const GpuContext& ctx) {
  const cudaDeviceProp& p = ctx.prop;
  const int dev = ctx.device;
  nlohmann::json g;
  g["device"] = dev;
  g["name"] = std::string(p.name);
  g["uuid"] = uuid_string(p.uuid);
  g["memory_bytes"] = static_cast<std::uint64_t>(p.totalGlobalMem);
  g["sm_count"] = p.multiProcessorCount;
  g["compute_capability"] = strf("%d.%d", p.major, p.minor);
  const int sm_khz = device_attribute(cudaDevAttrClockRate, dev);
  const int mem_khz = device_attribute(cudaDevAttrMemoryClockRate, dev);
  const int bus_bits = device_attribute(cudaDevAttrGlobalMemoryBusWidth, dev);
  if (sm_khz > 0) g["sm_clock_max_mhz"] = sm_khz / 1000;
  if (mem_khz > 0) g["mem_clock_max_mhz"] = mem_khz / 1000;
  if (bus_bits > 0) g["memory_bus_width_bits"] = bus_bits;
  if (mem_khz > 0 && bus_bits > 0)  // double data rate
    g["memory_bandwidth_peak_gbs"] = 2.0 * mem_khz * 1e3 * (bus_bits / 8.0) / 1e9;
  g["l2_bytes"] = p.l2CacheSize;
  g["shared_memory_per_sm_bytes"] = static_cast<std::uint64_t>(p.sharedMemPerMultiprocessor);
  g["registers_per_sm"] = p.regsPerMultiprocessor;
  g["max_threads_per_sm"] = p.maxThreadsPerMultiProcessor;
  g["ecc"] = p.ECCEnabled != 0;
  g["integrated"] = p.integrated != 0;
  g["multi_gpu_board_group"] = p.multiGpuBoardGroupID;
  std::array<char, 32> bus{};
  std::string bus_id;
  if (cudaDeviceGetPCIBusId(bus.data(), static_cast<int>(bus.size()), dev) == cudaSuccess)
    bus_id = canonical_bus_id(bus.data());
  (void)cudaGetLastError();
  if (!bus_id.empty()) g["pci_bus_id"] = bus_id;
  int driver = 0;
  if (cudaDriverGetVersion(&driver) == cudaSuccess) g["cuda_driver"] = cuda_version_string(driver);
  // What only NVML knows: driver version string, power limit, NVLinks.
  for (const auto& n : probe_gpus_nvml()) {
    if (!n.contains("pci_bus_id") || canonical_bus_id(n["pci_bus_id"].get<std::string>()) != bus_id)
      continue;
    for (const char* key : {"driver", "power_limit_w", "sm_clock_max_mhz", "mem_clock_max_mhz"})
      if (n.contains(key)) g[key] = n[key];
    auto links = nlohmann::json::array();
    for (const auto& l : n.value("nvlink", nlohmann::json::array())) {
      auto link = l;
      if (link.contains("remote_pci_bus_id"))
        link["remote_pci_bus_id"] = canonical_bus_id(link["remote_pci_bus_id"].get<std::string>());
      links.push_back(std::move(link));
    }
    g["nvlink"] = std::move(links);
    g["nvml_index"] = n["index"];
  }
  return g;
}

nlohmann::json gpu_library_versions() {
  nlohmann::json v;
  int x = 0;
  if (cudaRuntimeGetVersion(&x) == cudaSuccess) v["cuda_runtime"] = cuda_version_string(x);
  if (cudaDriverGetVersion(&x) == cudaSuccess && x > 0) v["cuda_driver"] = cuda_version_string(x);
  (void)cudaGetLastError();
  if (ncclGetVersion(&x) == ncclSuccess)  // NCCL >= 2.9 encodes major*10000 + minor*100 + patch
    v["nccl"] = strf("%d.%d.%d", x / 10000, (x % 10000) / 100, x % 100);
  auto prop3 = [](auto get) -> std::string {
    int a = 0, b = 0, c = 0;
    if (get(MAJOR_VERSION, &a) != 0 || get(MINOR_VERSION, &b) != 0 || get(PATCH_LEVEL, &c) != 0)
      return {};
    return strf("%d.%d.%d", a, b, c);
  };
  if (auto s = prop3([](libraryPropertyType t, int* o) { return int(cublasGetProperty(t, o)); });
      !s.empty())
    v["cublas"] = s;
  if (auto s = prop3([](libraryPropertyType t, int* o) { return int(cusolverGetProperty(t, o)); });
      !s.empty())
    v["cusolver"] = s;
  if (auto s = prop3([](libraryPropertyType t, int* o) { return int(curandGetProperty(t, o)); });
      !s.empty())
    v["curand"] = s;
  const auto nvml = probe_gpus_nvml();
  if (!nvml.empty() && nvml[0].contains("driver")) v["nvidia_driver"] = nvml[0]["driver"];
  return v;
}

}  // namespace sb
