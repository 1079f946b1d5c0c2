#include "case_plan.hpp"

#include <algorithm>
#include <cmath>
#include <map>
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
                      "multi-gpu|gpuN, each-gpu, each-node)",
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

constexpr std::size_t kMaxSweep = 1000;

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::stringstream ss(s);
  while (std::getline(ss, cur, sep)) out.push_back(cur);
  if (!s.empty() && s.back() == sep) out.emplace_back();
  return out;
}

/// "lo:hi[:step]" as numbers; integers stay integers (10^7 or 1e6 spellings allowed).
std::vector<std::string> range_values(const std::vector<std::string>& parts,
                                      const std::string& what) {
  const std::string& step_text = parts.size() == 3 ? parts[2] : std::string("1");
  const bool geometric = !step_text.empty() && (step_text[0] == '*' || step_text[0] == 'x');
  const std::string step_number =
      (!step_text.empty() && (geometric || step_text[0] == '+')) ? step_text.substr(1) : step_text;
  bool integral = true;
  std::int64_t ilo = 0, ihi = 0, istep = 0;
  try {
    ilo = parse_int(parts[0], what);
    ihi = parse_int(parts[1], what);
    istep = parse_int(step_number, what);
  } catch (const UsageError&) {
    integral = false;
  }
  const double lo = integral ? static_cast<double>(ilo) : parse_double(parts[0], what);
  const double hi = integral ? static_cast<double>(ihi) : parse_double(parts[1], what);
  const double step = integral ? static_cast<double>(istep) : parse_double(step_number, what);
  if (!(hi >= lo))
    throw UsageError(
        fmt::format("{}: range {}:{} ends before it starts", what, parts[0], parts[1]));
  if (geometric ? !(step > 1.0 && lo > 0) : !(step > 0))
    throw UsageError(
        fmt::format("{}: range step '{}' must be {} ", what, step_text,
                    geometric ? "a factor above 1 (and the start above 0)" : "above 0"));
  std::vector<std::string> out;
  for (double v = lo; v <= hi * (1 + 1e-12); v = geometric ? v * step : v + step) {
    if (out.size() >= kMaxSweep)
      throw UsageError(fmt::format("{}: the range has more than {} values", what, kMaxSweep));
    out.push_back(integral ? std::to_string(static_cast<std::int64_t>(std::llround(v)))
                           : fmt::format("{:g}", v));
  }
  return out;
}

/// One --param: the workload (empty when unprefixed), key and swept values.
struct ParamSpec {
  std::string text;  ///< as given, for messages
  std::string workload;
  std::string key;
  std::vector<std::string> values;
};

ParamSpec parse_param(const std::string& text, bool prefixed) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw UsageError(fmt::format("--param '{}': expected workload.key=value", text));
  ParamSpec p;
  p.text = text;
  p.key = text.substr(0, eq);
  if (prefixed) {
    const auto dot = p.key.find('.');
    if (dot == std::string::npos || dot == 0)
      throw UsageError(fmt::format("--param '{}': expected workload.key=value", text));
    p.workload = p.key.substr(0, dot);
    p.key = p.key.substr(dot + 1);
    (void)find_workload(p.workload);  // the name must be known even if it is not run
  }
  p.values = sweep_values(text.substr(eq + 1), "--param '" + text + "'");
  return p;
}

void check_key(const ParamSpec& p, const Workload& w) {
  const bool known =
      std::any_of(w.keys.begin(), w.keys.end(), [&](const auto& kv) { return kv.first == p.key; });
  if (known) return;
  std::string keys;
  for (const auto& kv : w.keys) keys += (keys.empty() ? "" : ", ") + kv.first;
  throw UsageError(fmt::format("--param '{}': {} has no parameter '{}' (known: {})", p.text, w.name,
                               p.key, keys));
}

void check_preset(const std::string& preset) {
  const auto& names = preset_names();
  if (std::find(names.begin(), names.end(), preset) == names.end())
    throw UsageError(fmt::format("unknown preset '{}' (use tiny, small, seed or large)", preset));
}

/// The cartesian product of the swept keys over `base`, in the order the keys were given.
std::vector<Params> sweep(const Params& base, const std::vector<ParamSpec>& specs) {
  std::vector<Params> out{base};
  for (const auto& s : specs) {
    std::vector<Params> next;
    for (const auto& p : out)
      for (const auto& v : s.values) {
        Params q = p;
        q.set(s.key, v);
        next.push_back(std::move(q));
      }
    out = std::move(next);
    if (out.size() > kMaxCases)
      throw UsageError(fmt::format("the sweeps make more than {} cases", kMaxCases));
  }
  return out;
}

}  // namespace

std::vector<std::string> sweep_values(const std::string& value, const std::string& what) {
  if (value.empty()) throw UsageError(fmt::format("{}: empty value", what));
  if (value.find(',') != std::string::npos) {
    std::vector<std::string> out;
    for (const auto& v : split(value, ',')) {
      if (v.empty()) throw UsageError(fmt::format("{}: empty value in the list", what));
      if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
    }
    if (out.size() > kMaxSweep)
      throw UsageError(fmt::format("{}: the list has more than {} values", what, kMaxSweep));
    return out;
  }
  const auto parts = split(value, ':');
  if (parts.size() == 2 || parts.size() == 3) return range_values(parts, what);
  if (parts.size() > 3) throw UsageError(fmt::format("{}: a range is lo:hi or lo:hi:step", what));
  return {value};
}

std::vector<CaseSpec> plan_cases(const RunRequest& req, std::vector<std::string>* notes,
                                 std::map<std::string, std::string>* scaling_ids) {
  SB_EXPECTS(req.repeats >= 1 && req.repeats <= kMaxRepeats,
             fmt::format("--repeats must lie between 1 and {} (got {})", kMaxRepeats, req.repeats));
  if (req.auto_repeats) {
    SB_EXPECTS(req.max_repeats >= 2 && req.max_repeats <= kMaxRepeats,
               fmt::format("--max-repeats must lie between 2 and {} (got {})", kMaxRepeats,
                           req.max_repeats));
    SB_EXPECTS(req.min_repeats >= 2 && req.min_repeats <= req.max_repeats,
               fmt::format("--min-repeats must lie between 2 and --max-repeats ({}) (got {})",
                           req.max_repeats, req.min_repeats));
    SB_EXPECTS(std::isfinite(req.max_time_s) && req.max_time_s > 0 && req.max_time_s <= 1e7,
               "--max-time must be a positive number of seconds, at most 1e7");
    SB_EXPECTS(std::isfinite(req.target_spread) && req.target_spread > 0 && req.target_spread < 1,
               fmt::format("--target-spread must lie between 0 and 1 (a fraction: 0.01 is 1%; "
                           "got {})",
                           req.target_spread));
  }
  SB_EXPECTS(std::isfinite(req.scale_factor) && req.scale_factor >= 1 && req.scale_factor <= 1e6,
             fmt::format("--scale-factor must lie between 1 and 1e6 (got {})", req.scale_factor));
  SB_EXPECTS(req.warmup >= 0 && req.warmup <= kMaxWarmup,
             fmt::format("--warmup must lie between 0 and {} (got {})", kMaxWarmup, req.warmup));
  check_preset(req.preset);

  std::vector<CaseRequest> groups;
  std::vector<std::string> names = req.workloads;
  if (names.empty() && req.cases.empty())
    for (const auto& w : workloads()) names.push_back(w.name);
  for (const auto& n : names) groups.push_back({n, "", {}, {}});
  groups.insert(groups.end(), req.cases.begin(), req.cases.end());

  // Run-wide parameters: a suite file's, then the command line's over them (the command line
  // may not give a key twice: a comma list sweeps it).
  std::vector<ParamSpec> run_params;
  std::map<std::string, std::string> given;
  for (const auto& text : req.params) {
    ParamSpec p = parse_param(text, true);
    check_key(p, find_workload(p.workload));
    const std::string full = p.workload + "." + p.key;
    if (const auto it = given.find(full); it != given.end())
      throw UsageError(fmt::format(
          "--param {} is given twice ('{}' and '{}'): give it once, with a comma list to run "
          "several values",
          full, it->second, text));
    given[full] = text;
    run_params.push_back(std::move(p));
  }
  for (const auto& text : req.suite_params) {
    ParamSpec p = parse_param(text, true);
    check_key(p, find_workload(p.workload));
    if (given.count(p.workload + "." + p.key) == 0) run_params.push_back(std::move(p));
  }
  std::vector<bool> used(run_params.size(), false);

  const std::vector<ExecPath> default_paths = req.paths.empty() ? all_exec_paths() : req.paths;
  std::vector<CaseSpec> out;
  std::set<std::string> seen;
  std::string last_path_note;  ///< a group that runs on none of the paths asked for
  for (const auto& g : groups) {
    const Workload& w = find_workload(g.workload);
    const std::string preset = g.preset.empty() ? req.preset : g.preset;
    check_preset(preset);
    std::vector<ParamSpec> specs;
    for (std::size_t i = 0; i < run_params.size(); ++i) {
      if (run_params[i].workload != w.name) continue;
      used[i] = true;
      specs.push_back(run_params[i]);
    }
    for (const auto& text : g.params) {  // the group's own keys replace run-wide ones
      ParamSpec p = parse_param(text, false);
      check_key(p, w);
      std::erase_if(specs, [&](const ParamSpec& s) { return s.key == p.key; });
      specs.push_back(std::move(p));
    }
    std::vector<ExecPath> paths = g.paths.empty() ? default_paths : g.paths;
    std::sort(paths.begin(), paths.end());
    const bool asked = !g.paths.empty() || !req.paths.empty();
    std::string left_out;
    for (const ExecPath path : paths)
      if (!runs_on(w, path))
        left_out += (left_out.empty() ? "" : ", ") + std::string(to_string(path));
    std::erase_if(paths, [&](ExecPath path) { return !runs_on(w, path); });
    // Said when the user named the workload; a workload that only came with "all of them"
    // leaves out the paths it does not run on without a word.
    const bool named = !req.workloads.empty() || !req.cases.empty();
    if (!left_out.empty() && (asked || paths.empty())) {
      std::string on;
      for (const ExecPath path : w.paths)
        on += (on.empty() ? "" : ", ") + std::string(to_string(path));
      const std::string line =
          fmt::format("{} runs on {} only: no {} case planned", w.name, on, left_out);
      if (named && notes != nullptr &&
          std::find(notes->begin(), notes->end(), line) == notes->end())
        notes->push_back(line);
      if (paths.empty()) last_path_note = line;
    }
    const bool grow = req.scale_factor != 1.0;
    if (grow && !w.weak_scale)
      throw UsageError(fmt::format(
          "{} has no weak scaling rule (Workload::weak_scale): run it in a strong scaling study",
          w.name));
    for (const Params& point : sweep(w.preset(preset), specs)) {
      // Weak scaling: each variant grown by the rule, paired with itself at factor 1. The rule
      // sees one case's parameters (groupby's query=all is three cases, of one query each).
      const std::vector<Params> base = w.expand(point);
      std::vector<Params> variants = base;
      if (grow)
        for (Params& v : variants) v = w.weak_scale(v, req.scale_factor);
      for (std::size_t vi = 0; vi < variants.size(); ++vi) {
        const Params& variant = variants[vi];
        for (const ExecPath path : paths) {
          CaseSpec s;
          s.workload = w.name;
          s.path = path;
          s.params = variant;
          s.preset = preset;
          s.repeats = req.auto_repeats ? req.max_repeats : req.repeats;
          s.warmup = req.warmup;
          if (req.auto_repeats && req.min_repeats < req.max_repeats) {
            s.min_repeats = req.min_repeats;
            s.max_time_s = req.max_time_s;
            s.target_spread = req.target_spread;
          }
          s.id = case_id(w.name, path, variant);
          if (!seen.insert(s.id).second) continue;  // the same case listed twice runs once
          if (grow && scaling_ids != nullptr)
            (*scaling_ids)[s.id] = case_id(w.name, path, base[vi]);
          out.push_back(std::move(s));
          SB_EXPECTS(out.size() <= kMaxCases,
                     fmt::format("the run has more than {} cases", kMaxCases));
        }
      }
    }
  }
  SB_EXPECTS(!out.empty(), last_path_note.empty()
                               ? std::string("nothing to run: no workload selected")
                               : "nothing to run: " + last_path_note);
  for (std::size_t i = 0; i < out.size(); ++i) out[i].index = static_cast<int>(i);
  if (notes != nullptr)
    for (std::size_t i = 0; i < run_params.size(); ++i)
      if (!used[i])
        notes->push_back(fmt::format("parameter {} applies to no planned case (no {} case runs)",
                                     run_params[i].text, run_params[i].workload));
  return out;
}

}  // namespace sb
