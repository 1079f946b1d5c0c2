#include "scalebench/compare.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include <fmt/format.h>

#include "compare_detail.hpp"
#include "scalebench/error.hpp"
#include "scalebench/interference.hpp"
#include "scalebench/stats.hpp"
#include "summary_util.hpp"

namespace sb::results {
namespace {

using json = nlohmann::json;
using detail::str;
using detail::sub;

/// Workload, path and parameters; and the device for each-gpu / each-node records, one per device.
std::string match_key(const json& c) {
  return str(c, "workload") + '\n' + detail::canonical_path(str(c, "path")) + '\n' +
         sub(c, "params").dump() + '\n' + str(c, "device_id");
}

bool current_failed(const json& c) {
  const std::string s = str(c, "status", "ok");
  return s == "failed" || s == "timeout" || detail::validation_failed(c);
}

std::string failure_text(const json& c) {
  std::string why = str(c, "status", "ok");
  if (detail::validation_failed(c)) {
    for (const auto& e : sub(c, "validation")) {
      if (e.is_object() && e.contains("pass") && e["pass"].is_boolean() && !e["pass"].get<bool>()) {
        why = fmt::format("validation check {} failed", str(e, "name"));
        break;
      }
    }
  }
  const std::string msg = str(c, "message");
  return msg.empty() ? why : why + ": " + msg;
}

std::string with_message(const std::string& what, const json& c) {
  const std::string msg = str(c, "message");
  return msg.empty() ? what : what + ": " + msg;
}

void describe(CaseComparison& r, const json& c) {
  r.name = detail::case_label(c);
  r.workload = str(c, "workload");
  r.path = detail::canonical_path(str(c, "path"));
  r.params = sub(c, "params");
}

/// The timed repeats' totals, without those the runtime marked throttled or host-stalled (all of
/// them when every repeat was, as the runtime's median does).
struct Timed {
  std::vector<double> totals;
  std::size_t marked = 0;
  [[nodiscard]] double sum() const {
    double s = 0;
    for (double t : totals) s += t;
    return s;
  }
};

Timed timed_repeats(const json& c) {
  Timed t;
  const json& reps = sub(c, "repeats");
  if (!reps.is_array()) return t;
  for (const auto& r : reps) {
    const double v = detail::num(r, "total");
    if (!std::isfinite(v)) continue;
    if (detail::marked_repeat(r)) {  // throttled or host-stalled
      ++t.marked;
      continue;
    }
    t.totals.push_back(v);
  }
  if (t.totals.empty() && t.marked > 0) {
    for (const auto& r : reps)
      if (std::isfinite(detail::num(r, "total"))) t.totals.push_back(detail::num(r, "total"));
    t.marked = 0;
  }
  return t;
}

/// Turns a slower / faster / noisy verdict into `inconclusive` when the run that looks slower
/// measured on a busier machine and that explains the change (interference.hpp).
void apply_interference(CaseComparison& r, const json& b, const json& c, const Timed& bt,
                        const Timed& ct, double threshold) {
  if (!is_compared(r.verdict) || !std::isfinite(r.change)) return;
  const Interference ib = read_interference(b, bt.sum());
  const Interference ic = read_interference(c, ct.sum());
  if (r.verdict == Verdict::same) {
    // A baseline measured on a busier (slowed) machine makes a slower current look the same.
    const Busier base = busier_than(ib, ic);
    const double hidden = (1.0 + r.change) * (1.0 + base.explains) - 1.0;
    if (base.busy && hidden > threshold) {
      r.verdict = Verdict::inconclusive;
      r.detail = fmt::format(
          "the machine was busy ({}) in the baseline run, which could hide a slowdown of up to "
          "{:+.0f}%; {}",
          base.reason, hidden * 100.0, r.detail);
    }
    return;
  }
  const bool current_slower = r.change > 0;
  const Busier busy = current_slower ? busier_than(ic, ib) : busier_than(ib, ic);
  if (!busy.busy) return;
  const double size = current_slower ? r.change : 1.0 / (1.0 + r.change) - 1.0;
  const char* run = current_slower ? "current" : "baseline";
  if (size <= busy.explains) {
    r.verdict = Verdict::inconclusive;
    r.detail =
        fmt::format("the machine was busy ({}) in the {} run, which explains up to {:+.0f}%; {}",
                    busy.reason, run, busy.explains * 100.0, r.detail);
  } else {
    r.detail += fmt::format("; the {} run's machine was busy ({}), which explains only {:+.0f}%",
                            run, busy.reason, busy.explains * 100.0);
  }
}

/// Both sides of an A/B case on a machine so busy that either side's fastest repeats are luck
/// (interference.hpp, busy_in_either): a change within what that load explains is `inconclusive`.
void apply_shared_load(CaseComparison& r, const json& b, const json& c, const Timed& bt,
                       const Timed& ct) {
  if (!is_compared(r.verdict) || r.verdict == Verdict::same || !std::isfinite(r.change)) return;
  const Busier busy =
      busy_in_either(read_interference(b, bt.sum()), read_interference(c, ct.sum()));
  if (!busy.busy) return;
  const double size = r.change > 0 ? r.change : 1.0 / (1.0 + r.change) - 1.0;
  if (size > busy.explains) return;
  r.verdict = Verdict::inconclusive;
  r.detail = fmt::format(
      "the machine was busy ({}), which explains up to {:+.0f}% on either side by chance; {}",
      busy.reason, busy.explains * 100.0, r.detail);
}

/// An A/B record's repeats by round (`rounds` maps their turns to rounds); those marked
/// throttled or host-stalled left out unless `keep_marked` (as timed_repeats does when every
/// repeat was). Empty when a repeat names no turn of a round.
std::vector<std::vector<double>> by_round(const json& c, const TurnRounds& rounds,
                                          bool keep_marked) {
  std::vector<std::vector<double>> out;
  const json& reps = sub(c, "repeats");
  if (!reps.is_array()) return {};
  for (const auto& r : reps) {
    const double v = detail::num(r, "total");
    if (!std::isfinite(v) || (!keep_marked && detail::marked_repeat(r))) continue;
    const json& t = sub(r, "turn");
    const auto it = t.is_number_integer() ? rounds.find(t.get<int>()) : rounds.end();
    if (it == rounds.end()) return {};
    if (out.size() <= static_cast<std::size_t>(it->second))
      out.resize(static_cast<std::size_t>(it->second) + 1);
    out[static_cast<std::size_t>(it->second)].push_back(v);
  }
  return out;
}

CaseComparison compare_pair(const json& b, const json& c, const CompareOptions& o,
                            const TurnRounds* rounds) {
  const Timed bt = timed_repeats(b);
  const Timed ct = timed_repeats(c);
  if (rounds != nullptr) {
    // Side by side in one job: the interval resamples rounds (bootstrap.hpp).
    auto br = by_round(b, *rounds, bt.marked == 0);
    auto cr = by_round(c, *rounds, ct.marked == 0);
    if (!br.empty() && !cr.empty()) {
      // A side's last rounds may have lost every repeat to the left-out ones: empty rounds,
      // which the paired rounds skip (signed_rank.hpp), not a reason to stop pairing.
      br.resize(std::max(br.size(), cr.size()));
      cr.resize(br.size());
      CaseComparison r = compare_rounds(br, cr, o);
      r.marked_left_out = bt.marked + ct.marked;
      apply_shared_load(r, b, c, bt, ct);
      if (r.marked_left_out > 0)
        r.detail += fmt::format(
            "; {} throttled or host-stalled repeat(s) left out ({} baseline, {} current)",
            r.marked_left_out, bt.marked, ct.marked);
      return r;
    }
  }
  CaseComparison r = compare_samples(bt.totals, ct.totals, o);
  r.marked_left_out = bt.marked + ct.marked;
  if (rounds == nullptr) {
    apply_interference(r, b, c, bt, ct, o.threshold);
  } else {
    apply_shared_load(r, b, c, bt, ct);
  }
  if (r.marked_left_out > 0)
    r.detail +=
        fmt::format("; {} throttled or host-stalled repeat(s) left out ({} baseline, {} current)",
                    r.marked_left_out, bt.marked, ct.marked);
  return r;
}

/// The verdict of a case present in CURRENT; `b` is the baseline case or null.
void judge_current(CaseComparison& r, const json& c, const json* b) {
  const std::string status = str(c, "status", "ok");
  const std::string base_status = b != nullptr ? str(*b, "status", "ok") : "";
  if (status == "skipped") {
    if (base_status == "ok") {
      r.verdict = Verdict::missing;
      r.detail = with_message("ok in baseline, skipped in current", c);
    } else {
      r.verdict = Verdict::skipped;
      r.detail = with_message(b == nullptr ? "skipped in current, not in baseline"
                              : base_status == "skipped"
                                  ? "skipped in both"
                                  : "skipped in current, " + base_status + " in baseline",
                              c);
    }
  } else if (current_failed(c)) {
    r.verdict = Verdict::failed;
    r.detail = failure_text(c);
  } else if (b == nullptr) {
    r.verdict = Verdict::new_case;
    r.detail = "not in baseline";
  } else if (base_status != "ok") {
    r.verdict = Verdict::new_case;
    r.detail = fmt::format("baseline case did not finish ok ({})", base_status);
  }
}

}  // namespace

CaseComparison compare_case(const json* b, const json& c, const CompareOptions& o,
                            const TurnRounds* rounds) {
  CaseComparison r;
  if (b != nullptr) {
    r = compare_pair(*b, c, o, rounds);
  } else {
    const Timed ct = timed_repeats(c);
    r.current_repeats = ct.totals.size();
    r.current_median_s = median(ct.totals);
    r.current_fast_s = fastest_third_mean(ct.totals);
  }
  describe(r, c);
  judge_current(r, c, b);
  return r;
}

CaseComparison baseline_only(const json& b) {
  CaseComparison r;
  describe(r, b);
  const Timed bt = timed_repeats(b);
  r.baseline_repeats = bt.totals.size();
  r.baseline_median_s = median(bt.totals);
  r.baseline_fast_s = fastest_third_mean(bt.totals);
  if (str(b, "status", "ok") == "skipped") {
    r.verdict = Verdict::skipped;
    r.detail = with_message("skipped in baseline, not in current", b);
  } else {
    r.verdict = Verdict::missing;
    r.detail = "not in current";
  }
  return r;
}

std::string_view to_string(Verdict v) noexcept {
  switch (v) {
    case Verdict::faster:
      return "faster";
    case Verdict::same:
      return "same";
    case Verdict::slower:
      return "slower";
    case Verdict::noisy:
      return "noisy";
    case Verdict::inconclusive:
      return "inconclusive";
    case Verdict::new_case:
      return "new";
    case Verdict::missing:
      return "missing";
    case Verdict::skipped:
      return "skipped";
    case Verdict::too_few_repeats:
      return "too-few-repeats";
    case Verdict::failed:
      return "failed";
  }
  return "unknown";
}

std::string_view to_string(NoisyPolicy p) noexcept {
  switch (p) {
    case NoisyPolicy::pass:
      return "pass";
    case NoisyPolicy::warn:
      return "warn";
    case NoisyPolicy::fail:
      return "fail";
  }
  return "unknown";
}

NoisyPolicy parse_noisy_policy(const std::string& text) {
  if (text == "pass") return NoisyPolicy::pass;
  if (text == "warn") return NoisyPolicy::warn;
  if (text == "fail") return NoisyPolicy::fail;
  throw UsageError(fmt::format("--on-noisy '{}': use pass, warn or fail", text));
}

std::size_t Comparison::count(Verdict v) const noexcept {
  std::size_t n = 0;
  for (const auto& c : cases) n += c.verdict == v ? 1 : 0;
  return n;
}

std::size_t Comparison::compared() const noexcept {
  std::size_t n = 0;
  for (const auto& c : cases) n += is_compared(c.verdict) ? 1 : 0;
  return n;
}

bool Comparison::regressed() const noexcept {
  for (const auto& c : cases)
    if (is_regression(c.verdict) ||
        (options.on_noisy == NoisyPolicy::fail && is_undecided(c.verdict)))
      return true;
  return false;
}

bool Comparison::incomplete() const noexcept {
  return !options.allow_missing && (count(Verdict::missing) > 0 || compared() == 0);
}

bool Comparison::undecided() const noexcept {
  for (const auto& c : cases)
    if (is_undecided(c.verdict)) return true;
  return false;
}

int comparison_exit_code(const Comparison& c) noexcept {
  if (c.regressed()) return kExitFailed;
  if (c.incomplete()) return kExitIncomplete;
  if (c.undecided() && c.options.on_noisy == NoisyPolicy::warn) return kExitInconclusive;
  return kExitOk;
}

void check_options(const CompareOptions& o) {
  SB_EXPECTS(std::isfinite(o.threshold) && o.threshold >= 0 && o.threshold < 1,
             "compare: --threshold must lie in [0%, 100%)");
  SB_EXPECTS(o.alpha > 0 && o.alpha < 1, "compare: --alpha must lie in (0, 1)");
}

Comparison compare_reports(const json& baseline, const json& current, const CompareOptions& o) {
  check_options(o);
  Comparison out;
  out.options = o;
  out.system = system_differences(baseline, current);
  if (o.strict) {
    std::string hw;
    for (const auto& d : out.system)
      if (d.hardware)
        hw +=
            fmt::format("{}{} '{}' vs '{}'", hw.empty() ? "" : "; ", d.what, d.baseline, d.current);
    if (!hw.empty())
      throw UsageError("compare --strict: the reports ran on different hardware: " + hw);
  }
  const json& bcases = sub(baseline, "cases");
  const json& ccases = sub(current, "cases");
  std::map<std::string, const json*> base;
  if (bcases.is_array())
    for (const auto& c : bcases) base.emplace(match_key(c), &c);
  std::map<std::string, bool> seen;

  for (const auto& c : ccases.is_array() ? ccases : json::array()) {
    const std::string key = match_key(c);
    if (seen.count(key) != 0) continue;  // a repeated case: the first one counts
    seen[key] = true;
    const auto it = base.find(key);
    const json* b = it != base.end() ? it->second : nullptr;
    out.cases.push_back(compare_case(b, c, o, nullptr));
  }
  if (bcases.is_array()) {
    for (const auto& b : bcases) {
      const std::string key = match_key(b);
      if (seen.count(key) != 0) continue;
      seen[key] = true;
      out.cases.push_back(baseline_only(b));
    }
  }
  return out;
}

double parse_threshold(const std::string& text) {
  std::string t = text;
  bool percent = false;
  if (!t.empty() && t.back() == '%') {
    percent = true;
    t.pop_back();
  }
  double v = 0;
  std::size_t used = 0;
  try {
    v = std::stod(t, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (t.empty() || used != t.size() || !std::isfinite(v) || v < 0)
    throw UsageError(
        fmt::format("--threshold '{}' is not a percentage; write e.g. 5% or 0.05", text));
  if (percent) v /= 100.0;
  if (v >= 1.0)
    throw UsageError(fmt::format(
        "--threshold '{}' is 100% or more; write a percentage such as 5% (or 0.05)", text));
  return v;
}

}  // namespace sb::results
