// GPU entry points of a build without CUDA: no GPUs, GPU paths are skipped with this reason.
#include "scalebench/error.hpp"
#include "scalebench/gpu_runtime.hpp"

namespace sb {

struct GpuContext {};

bool cuda_built() noexcept {
  return false;
}

int visible_gpu_count(std::string* why) noexcept {
  if (why != nullptr) *why = "scalebench was built without CUDA";
  return 0;
}

void GpuContextDeleter::operator()(GpuContext* ctx) const noexcept {
  delete ctx;
}

void select_gpu_communicator(GpuContext&, MPI_Comm, int) {}

void set_gpu_workers(GpuContext&, int, int) {}

void wait_for_gpu_setup(GpuContext&) {}

GpuContextPtr create_gpu_context(int, MPI_Comm, GpuStartup*) {
  throw EnvironmentError("scalebench was built without CUDA: GPU paths are not available");
}

struct GpuEarlyContext {};
struct GpuCommStart {};

void GpuEarlyContextDeleter::operator()(GpuEarlyContext* early) const noexcept {
  delete early;
}

GpuEarlyContextPtr start_gpu_context_early(int) noexcept {
  return nullptr;
}

GpuContextPtr create_gpu_device_context(int, GpuEarlyContextPtr, GpuStartup*) {
  throw EnvironmentError("scalebench was built without CUDA: GPU paths are not available");
}

void GpuCommStartDeleter::operator()(GpuCommStart* start) const noexcept {
  delete start;
}

GpuCommStartPtr start_gpu_communicator(const GpuContext&, MPI_Comm) {
  return nullptr;
}

void finish_gpu_communicator(GpuContext&, GpuCommStartPtr, GpuStartup*) {}

nlohmann::json describe_gpu(const GpuContext&) {
  return nlohmann::json::object();
}

nlohmann::json gpu_library_versions() {
  return nlohmann::json::object();
}

}  // namespace sb

namespace sb {
nlohmann::json measure_gpu_ceilings(GpuContext&) {
  return nlohmann::json::array();
}
HostCopyBandwidth measure_host_copy_bandwidth(GpuContext&, std::size_t,
                                              const std::function<void()>&) {
  HostCopyBandwidth out;
  out.error = "scalebench was built without CUDA";
  return out;
}
}  // namespace sb

namespace sb {
GpuMemoryInfo gpu_memory_info(const GpuContext&) {
  return {};
}
}  // namespace sb
