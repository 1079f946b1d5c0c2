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
#include "scalebench/cpu_allowance.hpp"
#include "scalebench/error.hpp"
#include "scalebench/gpu_runtime.hpp"
#include "scalebench/nvml_probe.hpp"
#include "scalebench/plugins.hpp"
#include "scalebench/report.hpp"
#include "scalebench/system_info.hpp"
#include "scalebench/workload.hpp"

namespace sb {
namespace {

nlohmann::json collect_info() {
  std::string why;
  const int gpus = visible_gpu_count(&why);
  // Threads are planned from the cores this process may use (cpu_allowance.hpp).
  const auto alloc = batch::detect_allocation(batch::current_environment(),
                                              cpu_allowance().usable_cores, gpus, host_name());
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
      {"cpus", cpu_allowance().to_json()},
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

/// Prints "LABEL       VALUE" with VALUE word-wrapped to `width` (0: one line), its further
/// lines indented as far as its first.
void row(const std::string& label, const std::string& value, std::size_t width,
         std::size_t column = 12) {
  std::string head = label;
  if (head.size() < column) head.resize(column, ' ');
  if (width == 0 || head.size() + value.size() <= width) {
    fmt::print("{}{}\n", head, value);
    return;
  }
  const std::size_t room = width > head.size() + 20 ? width - head.size() : 20;
  std::string line;
  bool first = true;
  std::size_t start = 0;
  const auto flush = [&] {
    fmt::print("{}{}\n", first ? head : std::string(head.size(), ' '), line);
    first = false;
    line.clear();
  };
  while (start < value.size()) {
    std::size_t end = value.find(' ', start);
    if (end == std::string::npos) end = value.size();
    const std::string word = value.substr(start, end - start);
    if (!line.empty() && line.size() + 1 + word.size() > room) flush();
    line += (line.empty() ? "" : " ") + word;
    start = end + 1;
  }
  if (!line.empty() || first) flush();
}

void print_table(const nlohmann::json& j, std::size_t width) {
  const auto& n = j.at("node");
  row("Host", n.value("host", ""), width);
  row("CPU",
      fmt::format("{} ({} socket(s), {} cores, {} hardware threads, {} NUMA domain(s))",
                  n.value("cpu_model", ""), n.value("sockets", 0), n.value("cores", 0),
                  n.value("pus", 0), n.value("numa_domains", 0)),
      width);
  const auto& c = j.at("cpus");
  const int usable = c.value("usable_cores", 0);
  const int cores = c.value("node_cores", 0);
  std::string cpus = fmt::format("{} of {} cores", usable, cores);
  if (c.value("limited_by", "").empty()) {
    cpus += fmt::format(" (CPUs {})", c.value("cpu_list", ""));
  } else {
    for (const auto& l : c.at("limits"))
      cpus += fmt::format("; {}: {} core(s) ({})", l.value("source", ""), l.value("cores", 0),
                          l.value("detail", ""));
    cpus += "; a run plans its threads from these";
  }
  row("CPUs usable", cpus, width);
  row("Memory", human_bytes(n.value("memory_bytes", 0.0)), width);
  row("OS", fmt::format("{} ({})", n.value("os", ""), n.value("arch", "")), width);
  const auto& g = j.at("gpus");
  row("GPUs",
      fmt::format("{} visible{}{}", g.value("visible", 0),
                  g.value("cuda_built", false) ? "" : " (built without CUDA)",
                  g.value("note", "").empty() ? "" : " - " + g.value("note", "")),
      width);
  for (const auto& d : g.at("devices"))
    row(fmt::format("  [{}]", d.value("index", 0)),
        fmt::format("{}  {}  {}  {}", d.value("name", ""),
                    human_bytes(d.value("memory_bytes", 0.0)), d.value("uuid", ""),
                    d.value("pci_bus_id", "")),
        width, 6);
  if (!g.value("topology", "").empty()) fmt::print("Topology\n{}\n", g.value("topology", ""));
  fmt::print("Versions\n");
  for (const auto& [k, v] : j.at("versions").items())
    row("  " + k, v.is_string() ? v.get<std::string>() : v.dump(), width, 16);
  const auto& a = j.at("allocation");
  row("Allocation",
      fmt::format("{}{} on {} node(s)", a.value("scheduler", ""),
                  a.value("job_id", "").empty() ? "" : " job " + a.value("job_id", ""),
                  a.value("nodes", 0)),
      width);
  fmt::print("Ranks (what `scalebench run` starts here)\n");
  for (const auto& r : j.at("ranks"))
    fmt::print("  rank {:<3} {:<9} on {}  gpu {}  threads {}\n", r.value("rank", 0),
               r.value("role", ""), r.value("node", ""), r.value("gpu", -1), r.value("threads", 0));
  fmt::print("Workloads\n");
  for (const auto& w : j.at("workloads")) {
    row("  " + w.value("name", ""), w.value("description", ""), width, 15);
    if (!w.value("plugin", "").empty()) row("", "(plugin " + w.value("plugin", "") + ")", width, 6);
    for (const auto& [k, help] : w.at("keys").items())
      row(fmt::format("      {}.{}", w.value("name", ""), k), help.get<std::string>(), width, 28);
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
      // A terminal's width, else 100 columns (a log or a pipe).
      const std::size_t width = results::output_width(STDOUT_FILENO);
      print_table(j, width == 0 ? 100 : width);
    }
    exit_code = kExitOk;
  });
}

}  // namespace sb
