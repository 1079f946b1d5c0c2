#include "ab_sides.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "batch/run_capture.hpp"
#include "console.hpp"
#include "scalebench/ab_protocol.hpp"
#include "scalebench/error.hpp"
#include "scalebench/file_sha256.hpp"
#include "scalebench/find_program.hpp"
#include "scalebench/plugins.hpp"

namespace fs = std::filesystem;

namespace sb {
namespace {

/// A probe that takes longer has hung (it starts no MPI: a fraction of a second).
constexpr double kProbeTimeoutS = 60;

bool executable_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

std::string first_line(const std::string& text) {
  for (std::size_t start = 0; start < text.size();) {
    const auto nl = text.find('\n', start);
    const std::string line = text.substr(start, nl == std::string::npos ? nl : nl - start);
    if (line.find_first_not_of(" \t\r-") != std::string::npos) return one_line(line);
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return "(nothing)";
}

/// Runs `rank --probe --plugin P...` with the side's environment; its JSON answer.
nlohmann::json probe(const std::string& what, const std::string& rank,
                     const std::vector<std::string>& plugins,
                     const std::map<std::string, std::string>& env) {
  std::vector<std::string> argv{rank, std::string(ab::kProbeFlag)};
  for (const auto& p : plugins) argv.insert(argv.end(), {"--plugin", p});
  const batch::Captured c = batch::run_capture(argv, "", env, kProbeTimeoutS);
  if (c.timed_out)
    throw UsageError(fmt::format("{}: {} did not answer {} within {:g} s", what, rank,
                                 ab::kProbeFlag, kProbeTimeoutS));
  nlohmann::json j;
  if (c.status == 0) {
    try {
      j = nlohmann::json::parse(c.out);
    } catch (const std::exception&) {
      j = nullptr;
    }
  }
  const std::string said = first_line(c.err.empty() ? c.out : c.err);
  if (!j.is_object() || !j.contains("protocol")) {
    if (c.status == 2 && c.err.find("usage: scalebench-rank") == std::string::npos)
      throw UsageError(fmt::format("{}: {}", what, said));
    throw UsageError(fmt::format(
        "{}: {} cannot take part in an A/B run: it does not answer {} (a build older than the A/B "
        "protocol, or not a scalebench-rank; it said: {}); build that side from a commit with A/B "
        "runs (protocol {})",
        what, rank, ab::kProbeFlag, said, ab::kProtocol));
  }
  if (j.value("protocol", 0) != ab::kProtocol)
    throw UsageError(fmt::format(
        "{}: {} speaks A/B protocol {} and this scalebench protocol {}: build both sides from "
        "commits of the same protocol",
        what, rank, j.value("protocol", 0), ab::kProtocol));
  return j;
}

/// The workloads the run's plugin at `path` registered (loaded by the launcher).
std::vector<std::string> run_plugin_workloads(const std::string& path) {
  for (const auto& p : loaded_plugins())
    if (p.path == path) return p.workloads;
  return {};
}

AbSide resolve(const AbSideRequest& req, const std::string& name, const std::string& this_rank,
               const std::vector<std::string>& run_plugins,
               const std::vector<std::string>& workloads) {
  const std::string what = fmt::format("--{}", name);
  AbSide s;
  s.name = name;
  s.label = req.label.empty() ? name : req.label;
  s.rank_program = req.rank.empty() ? this_rank : find_rank_program(req.rank, what + " rank=");
  s.mpiexec = req.mpiexec;
  if (!s.mpiexec.empty() && find_program(s.mpiexec).empty())
    throw UsageError(fmt::format("{} mpiexec={}: no such program", what, s.mpiexec));
  for (const auto& [k, v] : req.env) s.env[k] = v;
  s.params = req.params;
  s.rank_sha256 = detail::file_sha256(s.rank_program);

  // The side's own plugins replace the run's plugins that register the same workloads.
  std::vector<std::string> own;
  for (const auto& p : req.plugins) {
    std::error_code ec;
    if (!fs::is_regular_file(p, ec))
      throw UsageError(fmt::format("{} plugin={}: no such file", what, p));
    own.push_back(fs::canonical(p, ec).string());
  }
  s.plugins = own;
  if (!own.empty()) {
    const nlohmann::json mine = probe(what, s.rank_program, own, s.env);
    std::set<std::string> replaced;
    for (const auto& p : mine.value("plugins", nlohmann::json::array()))
      for (const auto& w : p.value("workloads", nlohmann::json::array()))
        replaced.insert(w.get<std::string>());
    for (const auto& rp : run_plugins) {
      const auto names = run_plugin_workloads(rp);
      if (std::none_of(names.begin(), names.end(),
                       [&](const std::string& w) { return replaced.count(w) != 0; }))
        s.plugins.push_back(rp);
    }
  } else {
    s.plugins = run_plugins;
  }
  s.probe = probe(what, s.rank_program, s.plugins, s.env);
  std::set<std::string> has;
  for (const auto& w : s.probe.value("workloads", nlohmann::json::array()))
    has.insert(w.get<std::string>());
  for (const auto& w : workloads)
    if (has.count(w) == 0) {
      std::string list;
      for (const auto& h : has) list += (list.empty() ? "" : ", ") + h;
      throw UsageError(fmt::format(
          "{}: the {} side has no workload '{}' ({} with its plugins has: {}; plugin=PATH adds "
          "one)",
          what, name, w, s.rank_program, list));
    }
  return s;
}

}  // namespace

std::string find_rank_program(const std::string& given, const std::string& what) {
  const fs::path p(given);
  std::error_code ec;
  if (fs::is_directory(p, ec)) {
    for (const fs::path& c :
         {p / "scalebench-rank", p / "libexec" / "scalebench-rank", p / "bin" / "scalebench-rank"})
      if (executable_file(c)) return fs::canonical(c, ec).string();
    throw UsageError(
        fmt::format("{}{}: no scalebench-rank in that folder (nor in its libexec/)", what, given));
  }
  if (!fs::exists(p, ec)) throw UsageError(fmt::format("{}{}: no such file", what, given));
  if (p.filename() == "scalebench") {
    for (const fs::path& c : {p.parent_path() / "scalebench-rank",
                              p.parent_path() / ".." / "libexec" / "scalebench-rank"})
      if (executable_file(c)) return fs::canonical(c, ec).string();
  }
  if (!executable_file(p))
    throw UsageError(fmt::format("{}{}: not an executable file", what, given));
  return fs::canonical(p, ec).string();
}

nlohmann::json AbSide::row() const {
  std::string plugin_list, plugin_sums, env_text, param_text;
  for (const auto& p : probe.value("plugins", nlohmann::json::array())) {
    plugin_list += (plugin_list.empty() ? "" : ",") + p.value("path", "");
    plugin_sums += (plugin_sums.empty() ? "" : ",") + p.value("sha256", "");
  }
  for (const auto& [k, v] : env) env_text += (env_text.empty() ? "" : " ") + k + "=" + v;
  for (const auto& p : params) param_text += (param_text.empty() ? "" : ",") + p;
  return {{"side", name},
          {"label", label},
          {"rank_program", rank_program},
          {"rank_sha256", rank_sha256},
          {"version", probe.value("version", "")},
          {"git_sha", probe.value("git_sha", "")},
          {"build_type", probe.value("build_type", "")},
          {"plugins", plugin_list},
          {"plugin_sha256", plugin_sums},
          {"env", env_text},
          {"params", param_text},
          {"mpiexec", mpiexec}};
}

std::array<AbSide, 2> resolve_sides(const AbRequest& request, const std::string& this_rank,
                                    const std::vector<std::string>& run_plugins,
                                    const std::vector<std::string>& workloads) {
  return {resolve(request.baseline, std::string(ab::kBaseline), this_rank, run_plugins, workloads),
          resolve(request.current, std::string(ab::kCurrent), this_rank, run_plugins, workloads)};
}

}  // namespace sb
