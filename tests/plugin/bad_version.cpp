// A plugin built against another workload API version: the two symbols the loader reads,
// written by hand (workload_registration.hpp would give this build's version).
#include "scalebench/api_version.hpp"

namespace sb {
struct WorkloadRegistration;
}

extern "C" {
__attribute__((visibility("default"))) int scalebench_plugin_api_version() noexcept {
  return SCALEBENCH_API_VERSION + 1;
}
__attribute__((visibility("default"))) const sb::WorkloadRegistration*
scalebench_plugin_workloads() noexcept {
  return nullptr;
}
}
