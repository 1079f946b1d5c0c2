#include "ab_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include <fmt/format.h>

#include "console.hpp"
#include "plugin_options.hpp"
#include "scalebench/ab_protocol.hpp"
#include "scalebench/error.hpp"
#include "scalebench/report.hpp"

namespace sb {
namespace {

using json = nlohmann::json;

std::string key_of(const std::string& kv) {
  return kv.substr(0, kv.find('='));
}

/// The run's request with one side's parameters over everything else that sets them.
RunRequest with_side_params(const RunRequest& req, const std::vector<std::string>& side) {
  RunRequest r = req;
  for (const auto& p : side) {
    const std::string key = key_of(p);  // "workload.key"
    const std::string workload = key.substr(0, key.find('.'));
    const std::string own = key.substr(key.find('.') + 1);
    const std::string value = p.substr(p.find('=') + 1);
    if (sweep_values(value, "param:" + key).size() != 1)
      throw UsageError(fmt::format(
          "param:{}: a side's parameter takes one value (the cases are the run's; a sweep "
          "belongs in --param)",
          p));
    auto drop = [&](std::vector<std::string>& v, const std::string& k) {
      v.erase(
          std::remove_if(v.begin(), v.end(), [&](const std::string& e) { return key_of(e) == k; }),
          v.end());
    };
    drop(r.params, key);
    drop(r.suite_params, key);
    for (auto& c : r.cases)
      if (c.workload == workload) drop(c.params, own);
    r.params.push_back(p);
  }
  return r;
}

std::vector<CaseSpec> side_cases(const RunRequest& req, const std::vector<CaseSpec>& planned,
                                 const AbSide& side) {
  if (side.params.empty()) return planned;
  std::vector<CaseSpec> mine;
  try {
    mine = plan_cases(with_side_params(req, side.params));
  } catch (const UsageError& e) {
    std::string why = e.what();
    if (why.rfind("--param ", 0) == 0) why = "param:" + why.substr(8);
    throw UsageError(fmt::format("--{} {}", side.name, why));
  }
  bool same = mine.size() == planned.size();
  for (std::size_t i = 0; same && i < mine.size(); ++i)
    same = mine[i].workload == planned[i].workload && mine[i].path == planned[i].path &&
           mine[i].index == planned[i].index;
  if (!same)
    throw UsageError(fmt::format(
        "--{} param: ...: the {} side's parameters must not change which cases run ({} cases "
        "against {})",
        side.name, side.name, mine.size(), planned.size()));
  return mine;
}

}  // namespace

AbPlan plan_ab(const RunRequest& req, const std::vector<CaseSpec>& cases,
               const std::string& rank_exe, bool target_spread_given) {
  for (const auto& c : cases)
    if (c.path == ExecPath::each_gpu || c.path == ExecPath::each_node)
      throw UsageError(fmt::format(
          "an A/B run (--baseline, --current) measures code, not devices: {} is an {} case; "
          "leave each-gpu and each-node out of --paths",
          c.id, to_string(c.path)));
  if (target_spread_given)
    throw UsageError(
        "--target-spread does not apply to an A/B run: --repeats auto takes repeats until the "
        "change is decided (docs/ci.md)");
  std::vector<std::string> workloads;
  for (const auto& c : cases)
    if (std::find(workloads.begin(), workloads.end(), c.workload) == workloads.end())
      workloads.push_back(c.workload);
  AbPlan plan;
  plan.sides = resolve_sides(req.ab, rank_exe, plugin_paths(), workloads);
  for (int s = 0; s < 2; ++s) plan.cases[s] = side_cases(req, cases, plan.sides[s]);
  plan.block = req.ab.block;
  plan.seed = req.ab.seed ? *req.ab.seed : std::random_device{}();
  if (req.ab.threshold) plan.compare.threshold = *req.ab.threshold;
  if (req.ab.alpha) plan.compare.alpha = *req.ab.alpha;
  if (!req.ab.on_noisy.empty())
    plan.compare.on_noisy = results::parse_noisy_policy(req.ab.on_noisy);
  return plan;
}

void print_ab_plan(const AbPlan& plan) {
  for (const auto& s : plan.sides) {
    const json row = s.row();
    std::string line =
        fmt::format("{:>8}  {} ({} {})", s.name, row.value("rank_program", ""),
                    row.value("version", ""), row.value("git_sha", "").substr(0, 12));
    for (const char* k : {"plugins", "env", "params", "mpiexec"})
      if (!row.value(k, "").empty()) line += fmt::format("; {} {}", k, row.value(k, ""));
    if (s.label != s.name) line += fmt::format("; label {}", s.label);
    sayf(stdout, "{}\n", line);
  }
  sayf(stdout, "A/B: both sides on the same workers, turns of {} timed repeats in random order\n",
       plan.block > 0 ? std::to_string(plan.block) : std::string("about 0.1 s of"));
}

AbRunResult run_ab(const AbPlan& plan, const RunRequest& req, const JobRunnerOptions& jo,
                   RunReport& report, Progress& progress, const std::function<void()>& write) {
  json ab = {{"protocol", ab::kProtocol},
             {"seed", plan.seed},
             {"block", plan.block > 0 ? json(plan.block) : json("auto")},
             {"order", "random"},
             {"threshold", plan.compare.threshold},
             {"alpha", plan.compare.alpha},
             {"on_noisy", std::string(results::to_string(plan.compare.on_noisy))},
             {"sides", json::array({plan.sides[0].row(), plan.sides[1].row()})},
             {"turns", json::array()},
             {"baseline",
              {{"system", json::object()}, {"startup", json::object()}, {"cases", json::array()}}}};
  std::map<int, json> baseline_cases;
  auto set_ab = [&] {
    json cases = json::array();
    for (const auto& [i, c] : baseline_cases) cases.push_back(c);
    ab["baseline"]["cases"] = std::move(cases);
    report.set_member("ab", ab);
  };
  set_ab();
  write();

  AbRunOptions o;
  o.jobs = jo;
  o.sides = plan.sides;
  o.cases = plan.cases;
  o.block = plan.block;
  o.seed = plan.seed;
  o.compare = plan.compare;
  o.auto_repeats = req.auto_repeats;
  o.repeats = req.repeats;
  o.min_repeats = req.min_repeats_set ? req.min_repeats : std::max(req.min_repeats, kAbMinRepeats);
  // Without --max-repeats only --max-time ends it: a 2 ms GPU case takes thousands of repeats in
  // a minute, and 100 stopped it after two rounds of 0.1 s turns, before the rule's first look.
  o.max_repeats = req.max_repeats_set ? req.max_repeats : kMaxRepeats;
  o.max_time_s = req.max_time_set ? req.max_time_s : kAbMaxTime;
  o.on_record = [&](int side, const json& rec) {
    const std::string type = rec.value("type", "");
    if (side == 1) {
      progress.on_record(rec);
      if (type == "start") {
        report.set_start(rec);
        write();
      } else if (type == "case") {
        report.add_case(rec);
        write();
      }
      return;
    }
    if (type == "start") {
      ab["baseline"]["system"] = rec.at("system");
      ab["baseline"]["startup"] = rec.at("startup");
    } else if (type == "case") {
      json c = rec;
      c.erase("type");
      const int index = c.value("index", 0);
      baseline_cases[index] = std::move(c);
    } else {
      return;
    }
    set_ab();
    write();
  };
  AbRunResult r = run_ab_jobs(o);
  ab["turns"] = r.turns;
  baseline_cases.clear();
  for (const auto& c : r.cases[0]) {
    json rec = c;
    rec.erase("type");
    const int index = rec.value("index", 0);
    baseline_cases[index] = std::move(rec);
  }
  set_ab();
  return r;
}

int print_ab_outcome(const json& model, const AbPlan& plan, bool wide) {
  const results::Comparison c = results::compare_ab_report(model, plan.compare);
  say(stdout, "\n" + results::format_comparison(c, "table",
                                                wide ? 0 : results::output_width(STDOUT_FILENO)));
  return results::comparison_exit_code(c);
}

}  // namespace sb
