// compare_ab_report: the two sides of one A/B report (compare.hpp).
#include <map>
#include <string>

#include <fmt/format.h>

#include "compare_detail.hpp"
#include "scalebench/compare.hpp"
#include "scalebench/error.hpp"
#include "scalebench/system_identity.hpp"
#include "summary_util.hpp"

namespace sb::results {
namespace {

using json = nlohmann::json;
using detail::str;
using detail::sub;

/// A case's place in the run (and its device on each-* paths): the two sides' records of one
/// planned case share it whatever their parameters (a side may override some).
std::string slot_of(const json& c) {
  const json& i = sub(c, "index");
  return (i.is_number_integer() ? std::to_string(i.get<long long>()) : str(c, "id")) + '\n' +
         str(c, "device_id");
}

/// "label: program (version, commit) plugins ...; env ...; params ..." of one side row.
std::string describe_side(const json& s) {
  std::string out = str(s, "label", str(s, "side"));
  out += ": " + str(s, "rank_program");
  const std::string sha = str(s, "git_sha");
  if (!str(s, "version").empty() || !sha.empty())
    out += fmt::format(" ({} {})", str(s, "version"), sha.substr(0, 12));
  for (const char* k : {"plugins", "env", "params", "mpiexec"})
    if (!str(s, k).empty()) out += fmt::format("; {} {}", k, str(s, k));
  return out;
}

/// The side's words when its parameters differ from the other side's.
std::string params_text(const json& p) {
  std::string out;
  if (p.is_object())
    for (const auto& [k, v] : p.items())
      out += fmt::format("{}{}={}", out.empty() ? "" : ",", k,
                         v.is_string() ? v.get<std::string>() : v.dump());
  return out;
}

}  // namespace

bool is_ab_report(const json& model) noexcept {
  return model.is_object() && model.contains("ab") && model["ab"].is_object();
}

json ab_baseline_model(const json& model) {
  if (!is_ab_report(model))
    throw UsageError(
        "not an A/B report (it has no /ab: `scalebench run --baseline ...` writes one)");
  const json& ab = model["ab"];
  const json& side = sub(ab, "baseline");
  json attrs = sub(model, "attrs");
  if (!attrs.is_object()) attrs = json::object();
  for (const auto& row : sub(ab, "sides"))
    if (str(row, "side") == "baseline") {
      attrs["scalebench_version"] = str(row, "version");
      attrs["git_sha"] = str(row, "git_sha");
    }
  json out = {{"attrs", attrs},
              {"system", side.value("system", json::object())},
              {"startup", side.value("startup", json::object())},
              {"cases", side.value("cases", json::array())}};
  return out;
}

Comparison compare_ab_report(const json& model, const CompareOptions& o) {
  check_options(o);
  const json baseline = ab_baseline_model(model);
  const json& ab = model["ab"];
  Comparison out;
  out.options = o;
  out.system = system_differences(baseline, model);
  AbSides sides;
  for (const auto& row : sub(ab, "sides"))
    (str(row, "side") == "baseline" ? sides.baseline : sides.current) = describe_side(row);
  sides.turns = sub(ab, "turns").is_array() ? sub(ab, "turns").size() : 0;
  if (const json& seed = sub(ab, "seed"); seed.is_number_integer())
    sides.seed = seed.get<std::uint64_t>();

  TurnRounds rounds;  // the turns of timed rounds: the interval resamples rounds
  for (const auto& t : sub(ab, "turns")) {
    const json& round = sub(t, "round");
    const json& turn = sub(t, "turn");
    if (round.is_number_integer() && round.get<int>() >= 0 && turn.is_number_integer())
      rounds[turn.get<int>()] = round.get<int>();
  }
  std::map<std::string, const json*> base;
  for (const auto& b : baseline["cases"]) base.emplace(slot_of(b), &b);
  std::map<std::string, bool> seen;
  const json& ccases = sub(model, "cases");
  for (const auto& c : ccases.is_array() ? ccases : json::array()) {
    const std::string slot = slot_of(c);
    if (seen.count(slot) != 0) continue;
    seen[slot] = true;
    const auto it = base.find(slot);
    const json* b = it != base.end() ? it->second : nullptr;
    CaseComparison r = compare_case(b, c, o, &rounds);
    sides.timed_repeats += r.baseline_repeats + r.current_repeats;
    if (b != nullptr && sub(*b, "params") != sub(c, "params"))
      r.detail += fmt::format("; baseline ran {}", params_text(sub(*b, "params")));
    const json& stop = sub(c, "repeat_stop");
    const std::string why = str(stop, "reason");
    if (why == "max-time" || why == "max-repeats")
      r.detail +=
          fmt::format("; undecided at {} ({} rounds)", why, stop.value("rounds", json(0)).dump());
    out.cases.push_back(std::move(r));
  }
  for (const auto& b : baseline["cases"]) {
    const std::string slot = slot_of(b);
    if (seen.count(slot) != 0) continue;
    seen[slot] = true;
    out.cases.push_back(baseline_only(b));
  }
  out.ab = sides;
  return out;
}

}  // namespace sb::results
