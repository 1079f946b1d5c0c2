#pragma once
/// @file plugins.hpp
/// Loading workload plugins (runtime side, not installed): `scalebench run --plugin LIB.so`
/// loads each library in the launcher, which checks it before anything starts, and the job
/// plan carries the paths so that every rank loads them before it plans (rank_main.cpp).
/// Defined in runtime/src/plugin_loader.cpp; the registry (registry.cpp beside it) holds what
/// they register.

#include <string>
#include <vector>

namespace sb {

/// A loaded plugin, as the report records it (/plugins).
struct PluginInfo {
  std::string path;                    ///< absolute, symbolic links resolved
  std::vector<std::string> workloads;  ///< the names it registered, in registration order
  int api_version = 0;                 ///< what it was built against (= SCALEBENCH_API_VERSION)
  std::string sha256;                  ///< of the file, hex (as sha256sum prints it)
};

/// Loads the shared library at `path` (dlopen, RTLD_NOW) and registers its workloads after the
/// built-in ones and those of earlier plugins. Loading the same file again does nothing.
/// Throws sb::UsageError (exit code 2) with one line naming the file when it is missing, is not
/// a loadable library (dlerror's words: not ELF, an undefined symbol), has no
/// scalebench_plugin_api_version / scalebench_plugin_workloads (not built with
/// workload_registration.hpp), was built against another API version, registers no workload,
/// a workload without a required member or with a bad name, or a name already taken (by a
/// built-in workload or an earlier plugin), and - when `trial` is child_first (the launcher) -
/// when loading it in a forked child first crashes, aborts or exits (plugin_trial.hpp). The
/// ranks load what their launcher checked: `none`.
enum class PluginTrial { child_first, none };
const PluginInfo& load_plugin(const std::string& path,
                              PluginTrial trial = PluginTrial::child_first);

/// The plugins loaded so far, in load order.
[[nodiscard]] const std::vector<PluginInfo>& loaded_plugins();

/// The plugin that registered `workload`, or null for a built-in one (or an unknown name).
[[nodiscard]] const PluginInfo* plugin_of(const std::string& workload);

}  // namespace sb
