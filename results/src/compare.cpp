#include "scalebench/compare.hpp"

#include <cmath>
#include <map>
#include <string>

#include <fmt/format.h>

#include "scalebench/error.hpp"
#include "scalebench/mann_whitney.hpp"
#include "scalebench/stats.hpp"
#include "summary_util.hpp"

namespace sb::results {
namespace {

using json = nlohmann::json;
using detail::str;
using detail::sub;

std::string match_key(const json& c) {
  return str(c, "workload") + '\n' + detail::canonical_path(str(c, "path")) + '\n' +
         sub(c, "params").dump();
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

void describe(CaseComparison& r, const json& c) {
  r.name = detail::case_label(c);
  r.workload = str(c, "workload");
  r.path = detail::canonical_path(str(c, "path"));
  r.params = sub(c, "params");
}

}  // namespace

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
    case Verdict::new_case:
      return "new";
    case Verdict::missing:
      return "missing";
    case Verdict::too_few_repeats:
      return "too-few-repeats";
    case Verdict::failed:
      return "failed";
  }
  return "unknown";
}

bool Comparison::regressed() const noexcept {
  for (const auto& c : cases)
    if (is_regression(c.verdict)) return true;
  return false;
}

int comparison_exit_code(const Comparison& c) noexcept {
  return c.regressed() ? kExitFailed : kExitOk;
}

CaseComparison compare_samples(std::span<const double> baseline, std::span<const double> current,
                               const CompareOptions& o) {
  CaseComparison r;
  r.baseline_repeats = baseline.size();
  r.current_repeats = current.size();
  r.baseline_median_s = median(baseline);
  r.current_median_s = median(current);
  if (r.baseline_median_s > 0) r.change = r.current_median_s / r.baseline_median_s - 1.0;
  if (baseline.size() < o.min_repeats || current.size() < o.min_repeats) {
    r.verdict = Verdict::too_few_repeats;
    r.detail = fmt::format("{} vs {} repeats; the gate needs {} on each side (--repeats)",
                           baseline.size(), current.size(), o.min_repeats);
    return r;
  }
  r.p_value = mann_whitney_u(baseline, current).p_value;
  const bool significant = r.p_value < o.alpha;
  const bool big = std::isfinite(r.change) && std::abs(r.change) > o.threshold;
  if (significant && big) {
    r.verdict = r.change > 0 ? Verdict::slower : Verdict::faster;
  } else if (big) {
    r.verdict = Verdict::noisy;
  } else {
    r.verdict = Verdict::same;
  }
  r.detail = fmt::format("median {:+.1f}% (threshold {:.1f}%), p = {:.3g} (alpha {:g})",
                         r.change * 100.0, o.threshold * 100.0, r.p_value, o.alpha);
  return r;
}

Comparison compare_reports(const json& baseline, const json& current, const CompareOptions& o) {
  SB_EXPECTS(std::isfinite(o.threshold) && o.threshold >= 0 && o.threshold < 1,
             "compare: --threshold must lie in [0%, 100%)");
  SB_EXPECTS(o.alpha > 0 && o.alpha < 1, "compare: --alpha must lie in (0, 1)");
  Comparison out;
  out.options = o;
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
    const std::vector<double> ct = detail::phase_times(c, "total");
    CaseComparison r;
    if (b != nullptr) {
      const std::vector<double> bt = detail::phase_times(*b, "total");
      r = compare_samples(bt, ct, o);
    } else {
      r.current_repeats = ct.size();
      r.current_median_s = median(ct);
    }
    describe(r, c);
    const std::string status = str(c, "status", "ok");
    if (status == "skipped") {
      r.verdict = Verdict::missing;
      r.detail = "skipped in current" + (str(c, "message").empty() ? "" : ": " + str(c, "message"));
    } else if (current_failed(c)) {
      r.verdict = Verdict::failed;
      r.detail = failure_text(c);
    } else if (b == nullptr) {
      r.verdict = Verdict::new_case;
      r.detail = "not in baseline";
    } else if (str(*b, "status", "ok") != "ok") {
      r.verdict = Verdict::new_case;
      r.detail = fmt::format("baseline case did not finish ok ({})", str(*b, "status"));
    }
    out.cases.push_back(std::move(r));
  }
  if (bcases.is_array()) {
    for (const auto& b : bcases) {
      const std::string key = match_key(b);
      if (seen.count(key) != 0) continue;
      seen[key] = true;
      CaseComparison r;
      describe(r, b);
      const std::vector<double> bt = detail::phase_times(b, "total");
      r.baseline_repeats = bt.size();
      r.baseline_median_s = median(bt);
      r.verdict = Verdict::missing;
      r.detail = "not in current";
      out.cases.push_back(std::move(r));
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
