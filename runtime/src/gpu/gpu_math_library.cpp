// cuBLAS and cuSOLVER loaded when first needed (gpu_math_library.hpp).
#include "gpu_math_library.hpp"

#include <dlfcn.h>

#include <mutex>
#include <string>

#include "scalebench/clock.hpp"
#include "scalebench/error.hpp"

namespace sb::detail {
namespace {

struct LoadedLibrary {
  LoadedLibrary(const char* n, const char* s, const char* p) : name(n), soname(s), path(p) {}
  const char* name;    ///< for messages: "cuBLAS"
  const char* soname;  ///< found through the loader's search path
  const char* path;    ///< the same file where the build found it
  std::once_flag once;
  void* handle = nullptr;
  std::string error;  ///< the loader's message when both attempts failed
};

LoadedLibrary& library(GpuMathLibrary lib) {
  static LoadedLibrary cublas{"cuBLAS", SB_CUBLAS_SONAME, SB_CUBLAS_PATH};
  static LoadedLibrary cusolver{"cuSOLVER", SB_CUSOLVER_SONAME, SB_CUSOLVER_PATH};
  return lib == GpuMathLibrary::cublas ? cublas : cusolver;
}

void load(LoadedLibrary& l) {
  l.handle = dlopen(l.soname, RTLD_NOW | RTLD_LOCAL);
  if (l.handle != nullptr) return;
  const char* first = dlerror();
  l.error = first != nullptr ? first : l.soname;
  l.handle = dlopen(l.path, RTLD_NOW | RTLD_LOCAL);
  if (l.handle == nullptr) {
    const char* second = dlerror();
    if (second != nullptr) l.error += std::string("; ") + second;
  }
}

}  // namespace

void* gpu_math_library(GpuMathLibrary lib) {
  LoadedLibrary& l = library(lib);
  std::call_once(l.once, [&l] { load(l); });
  if (l.handle == nullptr) throw_library_error(l.name, "dlopen", l.error, __FILE__, __LINE__);
  return l.handle;
}

void* gpu_math_symbol(GpuMathLibrary lib, const char* symbol) {
  void* handle = gpu_math_library(lib);
  dlerror();
  void* address = dlsym(handle, symbol);
  if (address == nullptr) {
    const char* why = dlerror();
    throw_library_error(library(lib).name, "dlsym", why != nullptr ? why : symbol, __FILE__,
                        __LINE__);
  }
  return address;
}

double load_gpu_math_libraries() noexcept {
  const double t0 = now();
  for (const GpuMathLibrary lib : {GpuMathLibrary::cublas, GpuMathLibrary::cusolver}) {
    try {
      (void)gpu_math_library(lib);
    } catch (...) {  // kept in the library's state; its first caller gets the error
    }
  }
  return now() - t0;
}

}  // namespace sb::detail
