#pragma once
/// @file api_version.hpp
/// The version of scalebench's workload API: the public headers a workload is compiled
/// against (workload.hpp and what it includes, workload_registration.hpp, input_export.hpp,
/// philox.hpp, box_muller_tables.hpp, clock.hpp, error.hpp and, in CUDA builds,
/// gpu_context.cuh, gpu_error.cuh, philox.cuh, box_muller_tables.cuh).
///
/// A plugin records the version it was built against (workload_registration.hpp:
/// scalebench_plugin_api_version); `scalebench` loads only plugins of its own version and names
/// both numbers otherwise. The number goes up with every change that breaks a built plugin: the
/// layout of a public struct, a virtual function of WorkerCase or SchedulerCase, a member of
/// Workload, the signature of a function a plugin calls. Additions that keep built plugins
/// working (a new header, a new free function) keep it.
///
/// The installed CMake package carries it as `scalebench_API_VERSION`.

/// The workload API version of these headers.
#define SCALEBENCH_API_VERSION 3
