/// @file gpu_context.cu
/// The GPU side of the runtime (gpu_runtime.hpp, gpu_context.cuh): device discovery, a worker's
/// context (device, non-blocking stream, NCCL communicator over the GPU workers, lazily made
/// cuBLAS / cuSOLVER handles) and the descriptions that go to the report's /system group.

#include <curand.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>

#include "gpu_math_library.hpp"
#include "nccl_setup.hpp"
#include "scalebench/clock.hpp"
#include "scalebench/gpu_context.cuh"
#include "scalebench/gpu_runtime.hpp"
#include "scalebench/nvml_probe.hpp"
#include "scalebench/settings.hpp"

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

/// NVML's view of this worker's GPU alone: every worker describing every GPU of the node (and
/// each GPU's NVLinks) grows with the GPU count squared (/system/startup describe_gpu_s).
nlohmann::json nvml_gpu(const std::string& bus_id) {
  return bus_id.empty() ? nlohmann::json::object() : probe_gpu_nvml(bus_id);
}

/// The EnvironmentError for a device that this process cannot use, or nothing.
void check_device_visible(int device) {
  std::string why;
  const int visible = visible_gpu_count(&why);
  if (device >= 0 && device < visible) return;
  const auto cvd = settings::environment_variable("CUDA_VISIBLE_DEVICES");
  throw EnvironmentError(visible == 0
                             ? why
                             : strf("GPU %d requested but %d visible (CUDA_VISIBLE_DEVICES=%s)",
                                    device, visible, cvd ? cvd->c_str() : "unset"));
}

}  // namespace

/// What start_gpu_context_early's thread leaves for create_gpu_device_context.
struct GpuEarlyContext {
  int device = -1;
  std::thread thread;
  // Written by the thread, read after join.
  bool ok = false;
  cudaDeviceProp prop{};
  double t0 = 0;  ///< when start_gpu_context_early was called (steady clock)
  double t1 = 0;  ///< when the thread finished
  bool adopted = false;
  /// Loads cuBLAS and cuSOLVER (gpu_math_library.hpp) while the context comes up; started by
  /// `thread` once the driver library is in, so that the two loads do not queue on the
  /// loader's lock.
  std::thread libraries;
  double libraries_s = 0;  ///< the load's time, written by `libraries`, read after join
};

/// A NCCL communicator coming up on its own thread. The state is shared with the thread, so a
/// detached thread (see the deleter) never touches freed memory.
struct GpuCommStart {
  struct State {
    int device = -1;
    int rank = 0;
    int size = 1;
    ncclUniqueId id{};
    ncclComm_t comm = nullptr;
    std::exception_ptr error;
    std::atomic<bool> done{false};
    double t0 = 0;
    double t1 = 0;
  };
  std::shared_ptr<State> state;
  std::thread thread;
};

namespace {

/// The body of the NCCL thread: the communicator, and with SCALEBENCH_NCCL_WARMUP=1 one tiny
/// all-reduce on a stream of its own (so NCCL's lazily made connections are up before the first
/// case, and nothing is queued on the worker's stream where the ceilings are being timed).
void bring_up_communicator(GpuCommStart::State& st) noexcept {
  try {
    SB_CUDA_CHECK(cudaSetDevice(st.device));
    SB_NCCL_CHECK(ncclCommInitRank(&st.comm, st.size, st.id, st.rank));
    // NCCL connects peers lazily, in the first case's untimed warm-up repeat; an all-reduce here
    // would add that to the start-up (/system/startup nccl_init_s). SCALEBENCH_NCCL_WARMUP=1
    // still does it (for runs with --warmup 0).
    if (!settings::nccl_warmup()) {
      st.t1 = now();
      st.done.store(true);
      return;
    }
    detail::nccl_warm_up(st.comm);
  } catch (...) {
    st.error = std::current_exception();
  }
  st.t1 = now();
  st.done.store(true);
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
      if (why != nullptr) {
        const NoGpu kind = rc == cudaErrorInsufficientDriver || rc == cudaErrorNoDevice
                               ? (rc == cudaErrorNoDevice ? NoGpu::no_device : NoGpu::no_driver)
                               : NoGpu::other;
        *why = explain_no_gpu(kind, cudaGetErrorString(rc));
      }
      return 0;
    }
    if (n == 0 && why != nullptr) {
      const auto cvd = settings::environment_variable("CUDA_VISIBLE_DEVICES");
      *why = cvd ? strf("no GPU visible (CUDA_VISIBLE_DEVICES=\"%s\")", cvd->c_str())
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
  for (auto& [size, comm] : ctx->nccl_first_) (void)ncclCommDestroy(comm);
  if (ctx->nccl_all_ != nullptr) (void)ncclCommDestroy(ctx->nccl_all_);
  if (ctx->stream != nullptr) (void)cudaStreamDestroy(ctx->stream);
  (void)cudaGetLastError();
  delete ctx;
}

void wait_for_gpu_setup(GpuContext& ctx) {
  SB_CUDA_CHECK(cudaSetDevice(ctx.device));
  SB_CUDA_CHECK(cudaDeviceSynchronize());
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

void GpuEarlyContextDeleter::operator()(GpuEarlyContext* early) const noexcept {
  if (early == nullptr) return;
  if (early->thread.joinable()) early->thread.join();
  if (early->libraries.joinable()) early->libraries.join();
  if (early->ok && !early->adopted) {
    // A context nobody will use (the worker got another GPU, or none): give its memory back.
    if (cudaSetDevice(early->device) == cudaSuccess) (void)cudaDeviceReset();
    (void)cudaGetLastError();
  }
  delete early;
}

namespace {

/// CUDA's device schedule flag for SCALEBENCH_GPU_WAIT. Yield by default: a thread that spins
/// without yielding keeps its core for a whole time slice when the kernel puts another rank's
/// thread there, and that rank's messages then wait about 4 ms (run --trace of groupby seed on
/// four GPUs: one forced context switch in the late worker, none in the scheduler).
unsigned schedule_flag() {
  const std::string wait = settings::gpu_wait();
  if (wait == "spin") return cudaDeviceScheduleSpin;
  if (wait == "block") return cudaDeviceScheduleBlockingSync;
  return cudaDeviceScheduleYield;
}

}  // namespace

GpuEarlyContextPtr start_gpu_context_early(int device) noexcept {
  if (device < 0) return nullptr;
  try {
    const unsigned flag = schedule_flag();
    GpuEarlyContextPtr early(new GpuEarlyContext);
    early->device = device;
    early->t0 = now();
    GpuEarlyContext* e = early.get();  // outlives the thread: the deleter joins first
    early->thread = std::thread([e, flag] {
      int n = 0;
      int driver = 0;
      (void)cudaDriverGetVersion(&driver);  // loads the driver library, nothing more
      try {
        e->libraries = std::thread([e] { e->libraries_s = detail::load_gpu_math_libraries(); });
      } catch (const std::system_error&) {  // no thread: the first call that needs them loads them
      }
      e->ok = cudaGetDeviceCount(&n) == cudaSuccess && e->device < n &&
              cudaSetDevice(e->device) == cudaSuccess && cudaSetDeviceFlags(flag) == cudaSuccess &&
              cudaFree(nullptr) == cudaSuccess &&
              cudaGetDeviceProperties(&e->prop, e->device) == cudaSuccess;
      if (!e->ok) (void)cudaGetLastError();
      e->t1 = now();
    });
    return early;
  } catch (...) {
    return nullptr;
  }
}

GpuContextPtr create_gpu_device_context(int device, GpuEarlyContextPtr early, GpuStartup* timing) {
  const double t0 = now();
  GpuContextPtr ctx(new GpuContext);
  ctx->device = device;
  bool adopted = false;
  double early_work = 0;
  double libraries_s = 0;
  if (early) {
    if (early->thread.joinable()) early->thread.join();
    if (early->libraries.joinable()) early->libraries.join();
    libraries_s = early->libraries_s;
    if (early->ok && early->device == device) {
      ctx->prop = early->prop;
      early->adopted = adopted = true;
      early_work = early->t1 - early->t0;
    }
    early.reset();  // releases a context made for another device
  }
  const double t_joined = now();
  if (adopted) {
    SB_CUDA_CHECK(cudaSetDevice(device));  // this thread's current device; the context exists
  } else {
    // Today's path, on this thread; errors throw here with their type.
    check_device_visible(device);
    SB_CUDA_CHECK(cudaSetDevice(device));
    SB_CUDA_CHECK(cudaSetDeviceFlags(schedule_flag()));
    SB_CUDA_CHECK(cudaFree(nullptr));  // creates the primary context now, outside any timed case
    SB_CUDA_CHECK(cudaGetDeviceProperties(&ctx->prop, device));
  }
  SB_CUDA_CHECK(cudaStreamCreateWithFlags(&ctx->stream, cudaStreamNonBlocking));
  SB_CUDA_CHECK(cudaStreamSynchronize(ctx->stream));
  const double t1 = now();
  // Without an early thread they load here, so that no case's set-up waits for them.
  if (libraries_s == 0) libraries_s = detail::load_gpu_math_libraries();
  if (timing != nullptr) {
    timing->cuda_init_s = early_work + (t1 - t_joined);
    timing->cuda_wait_s = now() - t0;
    timing->cuda_early = adopted;
    timing->gpu_libraries_s = libraries_s;
  }
  return ctx;
}

void GpuCommStartDeleter::operator()(GpuCommStart* start) const noexcept {
  if (start == nullptr) return;
  if (start->thread.joinable()) {
    if (start->state->done.load()) {
      start->thread.join();
    } else {
      start->thread.detach();  // it holds its own reference to the state
    }
  }
  delete start;
}

GpuCommStartPtr start_gpu_communicator(const GpuContext& ctx, MPI_Comm gpu_workers) {
  if (gpu_workers == MPI_COMM_NULL) return nullptr;
  int size = 1;
  int rank = 0;
  SB_MPI_CHECK(MPI_Comm_size(gpu_workers, &size));
  SB_MPI_CHECK(MPI_Comm_rank(gpu_workers, &rank));
  if (size <= 1) return nullptr;
  auto st = std::make_shared<GpuCommStart::State>();
  st->device = ctx.device;
  st->rank = rank;
  st->size = size;
  st->id = detail::nccl_unique_id(gpu_workers, rank);
  st->t0 = now();
  GpuCommStartPtr start(new GpuCommStart);
  start->state = st;
  try {
    start->thread = std::thread([st] { bring_up_communicator(*st); });
  } catch (const std::system_error&) {
    bring_up_communicator(*st);  // no thread to be had: the same work, here and now
  }
  return start;
}

void finish_gpu_communicator(GpuContext& ctx, GpuCommStartPtr start, GpuStartup* timing) {
  if (!start) return;
  const double t0 = now();
  if (start->thread.joinable()) start->thread.join();
  const double t1 = now();
  GpuCommStart::State& st = *start->state;
  if (timing != nullptr) {
    timing->nccl_init_s = st.t1 - st.t0;
    timing->nccl_wait_s = t1 - t0;
  }
  // A communicator made before a failed warm-up goes with the context (its deleter frees it).
  ctx.nccl = ctx.nccl_all_ = st.comm;
  st.comm = nullptr;
  if (st.error) std::rethrow_exception(st.error);
  ctx.nccl_rank = ctx.nccl_all_rank_ = st.rank;
  ctx.nccl_size = ctx.nccl_all_size_ = st.size;
}

GpuContextPtr create_gpu_context(int device, MPI_Comm gpu_workers, GpuStartup* timing) {
  GpuContextPtr ctx = create_gpu_device_context(device, nullptr, timing);
  finish_gpu_communicator(*ctx, start_gpu_communicator(*ctx, gpu_workers), timing);
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
  if (const nlohmann::json n = nvml_gpu(bus_id);
      n.contains("pci_bus_id") && canonical_bus_id(n["pci_bus_id"].get<std::string>()) == bus_id) {
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
    try {
      if (get(MAJOR_VERSION, &a) != 0 || get(MINOR_VERSION, &b) != 0 || get(PATCH_LEVEL, &c) != 0)
        return {};
    } catch (const Error&) {  // cuBLAS or cuSOLVER did not load: the cases that call it say why
      return {};
    }
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
  if (const std::string driver = nvml_driver_version(); !driver.empty())
    v["nvidia_driver"] = driver;
  return v;
}

}  // namespace sb
