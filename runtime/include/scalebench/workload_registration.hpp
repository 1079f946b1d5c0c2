#pragma once
/// @file workload_registration.hpp
/// How a workload makes itself known: one line next to its code,
/// @code
///   sb::Workload triad_workload() { ... }   // name, parameters, presets, factories
///   SB_REGISTER_WORKLOAD(triad_workload);
/// @endcode
/// The built-in workloads (workloads/<name>/) register this way inside scalebench; a plugin (a
/// shared library built against the installed package, `scalebench run --plugin LIB.so`)
/// registers its workloads the same way, in as many files as it likes.
///
/// Each shared object (the `scalebench` and `scalebench-rank` executables, each plugin) keeps
/// its own list of registrations, in the order its static initialisers run (link order). The
/// registration stores only the function: nothing of the workload is built until the runtime
/// calls it, after it has checked the plugin's API version. A plugin exports two C symbols
/// that this header defines: `scalebench_plugin_api_version` (SCALEBENCH_API_VERSION of the
/// headers it was compiled with) and `scalebench_plugin_workloads` (its list). `scalebench`
/// refuses a plugin without them, of another API version, or registering a workload whose name
/// is taken (docs/writing-a-workload.md).

#include "scalebench/api_version.hpp"
#include "scalebench/workload.hpp"

namespace sb {

/// One registered workload: the function that describes it and where it was registered.
struct WorkloadRegistration {
  Workload (*make)() = nullptr;  ///< returns the workload's description (workload.hpp)
  const char* file = "";         ///< source file of the SB_REGISTER_WORKLOAD line
  int line = 0;
  const WorkloadRegistration* next = nullptr;  ///< the next registration of this shared object
};

namespace detail {

/// The registrations of this shared object, in registration order. Hidden visibility: the
/// executable and every plugin hold their own list, even when loaded into one process.
struct __attribute__((visibility("hidden"))) RegistrationList {
  static inline const WorkloadRegistration* head = nullptr;
  static inline WorkloadRegistration* tail = nullptr;
};

/// A static object of this type is what SB_REGISTER_WORKLOAD defines: its constructor appends
/// the registration to this shared object's list (constant-initialised, so safe at any point
/// of static initialisation).
class __attribute__((visibility("hidden"))) WorkloadRegistrar {
 public:
  WorkloadRegistrar(Workload (*make)(), const char* file, int line) noexcept {
    entry_.make = make;
    entry_.file = file;
    entry_.line = line;
    if (RegistrationList::tail != nullptr) {
      RegistrationList::tail->next = &entry_;
    } else {
      RegistrationList::head = &entry_;
    }
    RegistrationList::tail = &entry_;
  }
  WorkloadRegistrar(const WorkloadRegistrar&) = delete;
  WorkloadRegistrar& operator=(const WorkloadRegistrar&) = delete;

 private:
  WorkloadRegistration entry_;
};

}  // namespace detail
}  // namespace sb

extern "C" {
/// The workload API version this shared object was compiled against (api_version.hpp).
/// Emitted (`used`) in every file that includes this header and merged by the linker; default
/// visibility so that a plugin built with -fvisibility=hidden still exports it.
__attribute__((visibility("default"), used)) inline int scalebench_plugin_api_version() noexcept {
  return SCALEBENCH_API_VERSION;
}

/// The first of this shared object's registrations (null when it registers none); read only
/// after scalebench_plugin_api_version matched.
__attribute__((visibility("default"), used)) inline const sb::WorkloadRegistration*
scalebench_plugin_workloads() noexcept {
  return sb::detail::RegistrationList::head;
}
}

#define SB_DETAIL_CONCAT_(a, b) a##b
#define SB_DETAIL_CONCAT(a, b) SB_DETAIL_CONCAT_(a, b)

/// Registers a workload: `make_fn` is a function (or a captureless lambda) returning the
/// sb::Workload that describes it. Write it at namespace scope of a source file of the
/// workload, once per workload; the name it gives must be unique among the built-in workloads
/// and the loaded plugins.
#define SB_REGISTER_WORKLOAD(make_fn)                                                            \
  static const ::sb::detail::WorkloadRegistrar SB_DETAIL_CONCAT(                                 \
      sb_workload_registrar_, __COUNTER__)(static_cast<::sb::Workload (*)()>(make_fn), __FILE__, \
                                           __LINE__)
