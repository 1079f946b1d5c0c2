#pragma once
/// @file plugin_options.hpp
/// Workload plugins on the command line: `--plugin LIB.so` (repeatable) on run, info and
/// datagen, and what the launcher tells about them (help texts, the report, the job plan).
/// Loading and checking is plugins.hpp's; a suite file's `plugins` are loaded by run.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace CLI {
class App;
}

namespace sb {

/// Loads the plugins that the command line `args` (argv, program name first) names with
/// `--plugin PATH` or `--plugin=PATH`: those of run, info and datagen (up to a `--`), and those
/// of the `scalebench run` options after submit's `--` (checked before the job is queued).
/// Called before the subcommands are built, so that their help texts and lists name the plugins'
/// workloads. Throws sb::UsageError (one line, exit code 2) for a plugin that cannot be loaded.
void preload_plugins(const std::vector<std::string>& args);

/// Adds the repeatable --plugin option to `cmd`; each value is loaded (again: a no-op after
/// preload_plugins).
void add_plugin_option(CLI::App& cmd);

/// The registered workloads' names, comma-separated in suite order ("subset-mean, svd, groupby,
/// tiled-dgemm"); with `exporters_only`, those `datagen` can export.
[[nodiscard]] std::string workload_names(bool exporters_only = false);

/// The loaded plugins, one object each {path, workloads (comma-separated), api_version, sha256}:
/// the report's /plugins table. An empty array when none is loaded.
[[nodiscard]] nlohmann::json plugins_record();

/// The loaded plugins' paths, in load order (the job plan's `plugins`).
[[nodiscard]] std::vector<std::string> plugin_paths();

}  // namespace sb
