// Workload plugins (plugins.hpp): a shared library built against the installed workload API,
// loaded with dlopen and checked before any of its workloads is built.
//
// The library resolves the API's functions (errors, parameters, the GPU context) against the
// program that loads it: `scalebench` and `scalebench-rank` export their symbols and hold the
// whole runtime library (top CMakeLists.txt), as a Python interpreter does for its extension
// modules. RTLD_NOW makes a symbol the program lacks an error here, not a crash in a case.
#include <cxxabi.h>
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "plugin_trial.hpp"
#include "registry.hpp"
#include "scalebench/error.hpp"
#include "scalebench/file_sha256.hpp"
#include "scalebench/plugins.hpp"

namespace sb {
namespace {

namespace fs = std::filesystem;

std::vector<PluginInfo>& plugins() {
  static std::vector<PluginInfo> loaded;
  return loaded;
}

/// One line of dlerror()'s text (it names the file already); an undefined C++ symbol demangled,
/// with what it usually means.
std::string dl_error() {
  const char* e = dlerror();
  std::string s = e != nullptr ? e : "unknown error";
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  static const std::string undefined = "undefined symbol: ";
  const std::size_t at = s.find(undefined);
  if (at == std::string::npos) return s;
  const std::size_t from = at + undefined.size();
  const std::size_t to = s.find_first_of(" \t", from);
  const std::string name = s.substr(from, to == std::string::npos ? std::string::npos : to - from);
  int status = 0;
  const std::unique_ptr<char, void (*)(void*)> plain(
      abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), std::free);
  if (status == 0 && plain) s.replace(from, name.size(), plain.get());
  return s + " (scalebench has no such function: was the plugin built against another scalebench?)";
}

/// The file a --plugin path names: absolute, links resolved. Throws sb::UsageError when there is
/// no regular file.
std::string resolve(const std::string& path) {
  if (path.empty()) throw UsageError("--plugin: empty path");
  std::error_code ec;
  const fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (ec || !fs::exists(p, ec)) throw UsageError(fmt::format("plugin {}: no such file", path));
  if (!fs::is_regular_file(p, ec))
    throw UsageError(fmt::format("plugin {}: not a file (a shared library is expected)", path));
  return p.string();
}

using ApiVersionFn = int (*)();
using WorkloadsFn = const WorkloadRegistration* (*)();

template <typename Fn>
Fn symbol(void* handle, const char* name, const std::string& path) {
  dlerror();
  void* s = dlsym(handle, name);
  if (s == nullptr)
    throw UsageError(fmt::format(
        "plugin {}: not a scalebench plugin: it has no symbol {} (register its workloads with "
        "SB_REGISTER_WORKLOAD from scalebench/workload_registration.hpp)",
        path, name));
  return reinterpret_cast<Fn>(s);
}

/// dlopen, the checks, the registration: the load itself, in this process.
const PluginInfo& load_here(const std::string& file, const std::string& path) {
  dlerror();
  // RTLD_LOCAL: two plugins may define the same helper symbols without seeing each other's.
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr)
    throw UsageError(fmt::format("plugin {}: cannot be loaded: {}", path, dl_error()));
  const auto api_version = symbol<ApiVersionFn>(handle, "scalebench_plugin_api_version", path);
  const auto registrations = symbol<WorkloadsFn>(handle, "scalebench_plugin_workloads", path);
  const int version = api_version();
  if (version != SCALEBENCH_API_VERSION) {
    dlclose(handle);
    throw UsageError(fmt::format(
        "plugin {}: built against workload API version {}, but this scalebench has version {}: "
        "rebuild it against this scalebench's installed package (find_package(scalebench))",
        path, version, SCALEBENCH_API_VERSION));
  }
  const std::string origin = fmt::format("plugin {}", path);
  std::vector<Workload> added;
  try {
    added = detail::make_workloads(registrations());
  } catch (const std::exception& e) {
    throw UsageError(fmt::format("{}: describing its workloads failed: {}", origin, e.what()));
  }
  if (added.empty())
    throw UsageError(fmt::format("{}: registers no workload (SB_REGISTER_WORKLOAD)", origin));
  PluginInfo info;
  info.path = file;
  info.api_version = version;
  info.sha256 = detail::file_sha256(file);
  for (const auto& w : added) info.workloads.push_back(w.name);
  detail::append_workloads(std::move(added), origin);
  // The library stays loaded for the life of the process: its code backs the workloads.
  plugins().push_back(std::move(info));
  return plugins().back();
}

}  // namespace

const PluginInfo& load_plugin(const std::string& path, PluginTrial trial) {
  const std::string file = resolve(path);
  for (const auto& p : plugins())
    if (p.path == file) return p;
  // Constructors that crash, abort or exit must not take scalebench with them (plugin_trial.hpp).
  if (trial == PluginTrial::child_first)
    detail::try_plugin_in_child(path, [&] { (void)load_here(file, path); });
  return load_here(file, path);
}

const std::vector<PluginInfo>& loaded_plugins() {
  return plugins();
}

const PluginInfo* plugin_of(const std::string& workload) {
  for (const auto& p : plugins())
    for (const auto& w : p.workloads)
      if (w == workload) return &p;
  return nullptr;
}

}  // namespace sb
