#include "case_plan.hpp"

#include <algorithm>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "scalebench/error.hpp"

namespace sb {

const std::vector<std::string>& preset_names() {
  static const std::vector<std::string> names = {"tiny", "small", "seed", "large"};
  return names;
}

std::vector<ExecPath> parse_paths(const std::string& list) {
  std::vector<ExecPath> out;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    const auto p = parse_exec_path(item);
    if (!p)
      throw UsageError(
          fmt::format("unknown path '{}' (use single-cpu|cpu1, multi-cpu|cpuN, single-gpu|gpu1, "
                      "multi-gpu|gpuN)",
                      item));
    if (std::find(out.begin(), out.end(), *p) == out.end()) out.push_back(*p);
  }
  if (out.empty()) throw UsageError("--paths: no path given");
  return out;
}

std::string case_id(const std::string& workload, ExecPath path, const Params& p) {
  return fmt::format("{}/{}/{}", workload, to_string(path), p.canonical());
}

namespace {

/// Splits "workload.key=value" (or "key=value" when `workload` is given) and checks the key.
void apply_param(const std::string& text, const Workload& w, bool prefixed, Params& params,
                 bool& matched) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw UsageError(fmt::format("--param '{}': expected workload.key=value", text));
  std::string key = text.substr(0, eq);
  const std::string value = text.substr(eq + 1);
  if (prefixed) {
    const auto dot = key.find('.');
    if (dot == std::string::npos)
      throw UsageError(fmt::format("--param '{}': expected workload.key=value", text));
    const std::string wname = key.substr(0, dot);
    key = key.substr(dot + 1);
    // Validate the workload name even when it is not the one being planned.
    (void)find_workload(wname);
    if (wname != w.name) return;
  }
  const bool known =
      std::any_of(w.keys.begin(), w.keys.end(), [&](const auto& kv) { return kv.first == key; });
  if (!known) {
    std::string keys;
    for (const auto& kv : w.keys) keys += (keys.empty() ? "" : ", ") + kv.first;
    throw UsageError(
        fmt::format("--param '{}': {} has no parameter '{}' (known: {})", text, w.name, key, keys));
  }
  if (value.empty()) throw UsageError(fmt::format("--param '{}': empty value", text));
  params.set(key, value);
  matched = true;
}

void check_preset(const std::string& preset) {
  const auto& names = preset_names();
  if (std::find(names.begin(), names.end(), preset) == names.end())
    throw UsageError(fmt::format("unknown preset '{}' (use tiny, small, seed or large)", preset));
}

}  // namespace

std::vector<CaseSpec> plan_cases(const RunRequest& req) {
  SB_EXPECTS(req.repeats >= 1, fmt::format("--repeats must be at least 1 (got {})", req.repeats));
  SB_EXPECTS(req.repeats <= 100000, fmt::format("--repeats {} is too many", req.repeats));
  SB_EXPECTS(req.warmup >= 0, fmt::format("--warmup must be 0 or more (got {})", req.warmup));
  check_preset(req.preset);

  std::vector<CaseRequest> groups = req.cases;
  if (groups.empty()) {
    std::vector<std::string> names = req.workloads;
    if (names.empty())
      for (const auto& w : workloads()) names.push_back(w.name);
    for (const auto& n : names) groups.push_back({n, "", {}, {}});
  }
  // Every --param must name a known workload and key, even if that workload is not run.
  for (const auto& text : req.params) {
    const auto dot = text.find('.');
    const auto eq = text.find('=');
    if (dot == std::string::npos || eq == std::string::npos || dot > eq)
      throw UsageError(fmt::format("--param '{}': expected workload.key=value", text));
    Params scratch;
    bool matched = false;
    apply_param(text, find_workload(text.substr(0, dot)), true, scratch, matched);
  }

  const std::vector<ExecPath> default_paths = req.paths.empty() ? all_exec_paths() : req.paths;
  std::vector<CaseSpec> out;
  std::set<std::string> seen;
  for (const auto& g : groups) {
    const Workload& w = find_workload(g.workload);
    const std::string preset = g.preset.empty() ? req.preset : g.preset;
    check_preset(preset);
    Params params = w.preset(preset);
    bool matched = false;
    for (const auto& text : req.params) apply_param(text, w, true, params, matched);
    for (const auto& text : g.params) apply_param(text, w, false, params, matched);
    std::vector<ExecPath> paths = g.paths.empty() ? default_paths : g.paths;
    std::sort(paths.begin(), paths.end());
    for (const Params& variant : w.expand(params)) {
      for (const ExecPath path : paths) {
        CaseSpec s;
        s.index = static_cast<int>(out.size());
        s.workload = w.name;
        s.path = path;
        s.params = variant;
        s.repeats = req.repeats;
        s.warmup = req.warmup;
        s.id = case_id(w.name, path, variant);
        if (!seen.insert(s.id).second) continue;  // the same case listed twice runs once
        out.push_back(std::move(s));
      }
    }
  }
  SB_EXPECTS(!out.empty(), "nothing to run: no workload selected");
  for (std::size_t i = 0; i < out.size(); ++i) out[i].index = static_cast<int>(i);
  return out;
}

}  // namespace sb
