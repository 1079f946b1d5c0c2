#include "plugin_options.hpp"

#include <algorithm>
#include <array>

#include <CLI/CLI.hpp>

#include "scalebench/plugins.hpp"
#include "scalebench/workload.hpp"

namespace sb {

void preload_plugins(const std::vector<std::string>& args) {
  std::size_t i = 1;
  while (i < args.size() && !args[i].empty() && args[i].front() == '-') ++i;  // --version, ...
  if (i >= args.size()) return;
  static const std::array<std::string, 3> takes = {"run", "info", "datagen"};
  std::size_t end = args.size();
  if (args[i] == "submit") {
    // The options of the `scalebench run` that the batch job will start follow `--`: a plugin
    // that would fail there is refused before the job is queued.
    const auto dashes = std::find(args.begin() + static_cast<std::ptrdiff_t>(i), args.end(), "--");
    if (dashes == args.end()) return;
    i = static_cast<std::size_t>(dashes - args.begin());
  } else if (std::find(takes.begin(), takes.end(), args[i]) != takes.end()) {
    end = static_cast<std::size_t>(
        std::find(args.begin() + static_cast<std::ptrdiff_t>(i), args.end(), "--") - args.begin());
  } else {
    return;
  }
  static const std::string flag = "--plugin";
  for (++i; i < end; ++i) {
    if (args[i] == flag && i + 1 < end) {
      (void)load_plugin(args[++i]);
    } else if (args[i].rfind(flag + "=", 0) == 0) {
      (void)load_plugin(args[i].substr(flag.size() + 1));
    }
  }
}

void add_plugin_option(CLI::App& cmd) {
  cmd.add_option_function<std::vector<std::string>>(
         "--plugin",
         [](const std::vector<std::string>& paths) {
           for (const auto& p : paths) (void)load_plugin(p);
         },
         "Shared library of workloads to load (repeatable; docs/writing-a-workload.md)")
      ->type_name("LIB.so")
      ->allow_extra_args(false);  // one path per --plugin: a positional after it stays one
}

std::string workload_names(bool exporters_only) {
  std::string s;
  for (const auto& w : workloads())
    if (!exporters_only || w.export_inputs) s += (s.empty() ? "" : ", ") + w.name;
  return s;
}

nlohmann::json plugins_record() {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& p : loaded_plugins()) {
    std::string names;
    for (const auto& w : p.workloads) names += (names.empty() ? "" : ",") + w;
    out.push_back({{"path", p.path},
                   {"workloads", names},
                   {"api_version", p.api_version},
                   {"sha256", p.sha256}});
  }
  return out;
}

std::vector<std::string> plugin_paths() {
  std::vector<std::string> out;
  for (const auto& p : loaded_plugins()) out.push_back(p.path);
  return out;
}

}  // namespace sb
