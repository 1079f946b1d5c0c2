#pragma once
/// @file gpu_math_library.hpp
/// (runtime internals) cuBLAS and cuSOLVER, loaded with dlopen when first needed instead of at
/// program start. Linked the usual way, their initializers (cuBLASLt's alone tens of
/// milliseconds) run before main() and so before the CUDA context can start (docs/performance.md,
/// "Start-up"); loaded here, they load on a thread beside the context (start_gpu_context_early).
/// cublas_entry_points.cpp and cusolver_entry_points.cpp define the library functions scalebench
/// calls, each forwarding to the loaded library; programs that call more of the libraries (the
/// GPU benchmarks, plugins) link them as well, and the forwarders reach the same loaded copy.

namespace sb::detail {

enum class GpuMathLibrary { cublas, cusolver };

/// The library's handle, loaded by the first call (by its soname, then by the path found when
/// scalebench was built). Thread-safe; a failed load is remembered and throws LibraryError with
/// the loader's message on every call.
[[nodiscard]] void* gpu_math_library(GpuMathLibrary lib);

/// `symbol`'s address in the library; throws LibraryError when the library or the symbol is
/// missing.
[[nodiscard]] void* gpu_math_symbol(GpuMathLibrary lib, const char* symbol);

/// Loads both libraries now (a start-up thread calls it). Never throws: a failure is reported by
/// the first call that needs the library. Returns the seconds it took.
double load_gpu_math_libraries() noexcept;

}  // namespace sb::detail
