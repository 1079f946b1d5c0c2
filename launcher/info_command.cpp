// `scalebench info`: what this machine (or allocation) offers and how a run would use it.
#include <unistd.h>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "batch/allocation.hpp"
#include "case_plan.hpp"
#include "info_command.hpp"
#include "plugin_options.hpp"
#include "scalebench/byte_size.hpp"
#include "scalebench/error.hpp"
#include "scalebench/gpu_runtime.hpp"
#include "scalebench/nvml_probe.hpp"
#include "scalebench/plugins.hpp"
#include "scalebench/system_info.hpp"
#include "scalebench/workload.hpp"

namespace sb {
namespace {

nlohmann::json collect_info() {
  std::string why;
  const int gpus = visible_gpu_count(&why);
  const auto alloc =
      batch::detect_allocation(batch::current_environment(), physical_cores(), gpus, host_name());
  const auto placement = batch::place_ranks(alloc);
  nlohmann::json ranks = nlohmann::json::array();
  for (const auto& p : placement)
    ranks.push_back({{"rank", p.rank},
                     {"node", alloc.nodes[static_cast<std::size_t>(p.node)].host},
                     {"role", p.scheduler ? "scheduler" : "worker"},
                     {"gpu", p.gpu},
                     {"threads", p.threads}});
  nlohmann::json wl = nlohmann::json::array();
  for (const auto& w : workloads()) {
    nlohmann::json keys = nlohmann::json::object();
    for (const auto& [k, help] : w.keys) keys[k] = help;
    nlohmann::json presets = nlohmann::json::object();
    for (const auto& p : preset_names()) presets[p] = w.preset(p).to_json();
    const PluginInfo* plugin = plugin_of(w.name);
    wl.push_back({{"name", w.name},
                  {"description", w.description},
                  {"plugin", plugin != nullptr ? plugin->path : ""},
                  {"keys", keys},
                  {"presets", presets}});
  }
  nlohmann::json versions = library_versions();
  const nlohmann::json gpu_versions = gpu_library_versions();  // items() must not outlive it
  for (const auto& [k, v] : gpu_versions.items()) versions[k] = v;
  return {
      {"node", describe_node()},
      {"gpus",
       {{"visible", gpus},
        {"cuda_built", cuda_built()},
        {"note", why},
        {"devices", probe_gpus_nvml()},
        {"topology", nvml_topology_matrix()}}},
      {"versions", versions},
      {"allocation",
       {{"scheduler", alloc.scheduler}, {"job_id", alloc.job_id}, {"nodes", alloc.nodes.size()}}},
      {"ranks", ranks},
      {"workloads", wl},
      {"plugins", plugins_record()}};
}

void print_table(const nlohmann::json& j) {
  const auto& n = j.at("node");
  fmt::print("Host        {}\n", n.value("host", ""));
  fmt::print("CPU         {} ({} socket(s), {} cores, {} hardware threads, {} NUMA domain(s))\n",
             n.value("cpu_model", ""), n.value("sockets", 0), n.value("cores", 0),
             n.value("pus", 0), n.value("numa_domains", 0));
  fmt::print("Memory      {}\n", human_bytes(n.value("memory_bytes", 0.0)));
  fmt::print("OS          {} ({})\n", n.value("os", ""), n.value("arch", ""));
  const auto& g = j.at("gpus");
  fmt::print("GPUs        {} visible{}{}\n", g.value("visible", 0),
             g.value("cuda_built", false) ? "" : " (built without CUDA)",
             g.value("note", "").empty() ? "" : " - " + g.value("note", ""));
  for (const auto& d : g.at("devices"))
    fmt::print("  [{}] {}  {}  {}  {}\n", d.value("index", 0), d.value("name", ""),
               human_bytes(d.value("memory_bytes", 0.0)), d.value("uuid", ""),
               d.value("pci_bus_id", ""));
  if (!g.value("topology", "").empty()) fmt::print("Topology\n{}\n", g.value("topology", ""));
  fmt::print("Versions\n");
  for (const auto& [k, v] : j.at("versions").items())
    fmt::print("  {:<14}{}\n", k, v.is_string() ? v.get<std::string>() : v.dump());
  const auto& a = j.at("allocation");
  fmt::print("Allocation  {}{} on {} node(s)\n", a.value("scheduler", ""),
             a.value("job_id", "").empty() ? "" : " job " + a.value("job_id", ""),
             a.value("nodes", 0));
  fmt::print("Ranks (what `scalebench run` starts here)\n");
  for (const auto& r : j.at("ranks"))
    fmt::print("  rank {:<3} {:<9} on {}  gpu {}  threads {}\n", r.value("rank", 0),
               r.value("role", ""), r.value("node", ""), r.value("gpu", -1), r.value("threads", 0));
  fmt::print("Workloads\n");
  for (const auto& w : j.at("workloads")) {
    fmt::print("  {:<12} {}\n", w.value("name", ""), w.value("description", ""));
    if (!w.value("plugin", "").empty()) fmt::print("      (plugin {})\n", w.value("plugin", ""));
    for (const auto& [k, help] : w.at("keys").items())
      fmt::print("      {}.{:<12} {}\n", w.value("name", ""), k, help.get<std::string>());
  }
}

}  // namespace

void add_info_command(CLI::App& app, int& exit_code) {
  auto format = std::make_shared<std::string>("table");
  CLI::App* info =
      app.add_subcommand("info", "Describe this machine, its GPUs, libraries and workloads");
  info->add_option("--format", *format, "table (default) or json");
  add_plugin_option(*info);
  info->callback([format, &exit_code] {
    SB_EXPECTS(*format == "table" || *format == "json",
               fmt::format("--format '{}': use table or json", *format));
    const auto j = collect_info();
    if (*format == "json") {
      fmt::print("{}\n", j.dump(2));
    } else {
      print_table(j);
    }
    exit_code = kExitOk;
  });
}

}  // namespace sb
