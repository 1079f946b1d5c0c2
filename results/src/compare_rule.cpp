// compare_samples: the gate's decision rule for one pair of timing samples (compare.hpp).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "scalebench/bootstrap.hpp"
#include "scalebench/compare.hpp"
#include "scalebench/mann_whitney.hpp"
#include "scalebench/signed_rank.hpp"
#include "scalebench/stats.hpp"

namespace sb::results {
namespace {

/// Power at which the minimum detectable effect is stated: the change is caught 4 times in 5.
constexpr double kMdePower = 0.8;

}  // namespace

double minimum_detectable_effect(double log_sd, double threshold, double alpha) {
  if (!std::isfinite(log_sd) || log_sd < 0) return CaseComparison::kNaN;
  // Called slower when the change exceeds the threshold and the interval's lower end (about
  // change - z se) lies above 0: the change must exceed max(threshold, z se); a true change
  // z(power) se beyond that does so with that power.
  const double z = normal_quantile(1.0 - alpha / 2.0);
  return std::max(threshold, z * log_sd) + normal_quantile(kMdePower) * log_sd;
}

namespace {

/// The rule on two samples whose interval `interval` computes (after the repeat counts pass).
/// The detail line of a timing verdict: the medians' change, `evidence` (an A/B run's paired
/// rounds, or empty), why a change is noisy (`which`: the interval that includes no change),
/// the MDE.
std::string detail_of(const CaseComparison& r, const CompareOptions& o,
                      const std::string& evidence = {}, const char* which = "the") {
  std::string out = fmt::format("median {:+.1f}%", r.median_change * 100.0);
  if (!evidence.empty()) out += "; " + evidence;
  if (r.verdict == Verdict::noisy)
    out += fmt::format("; {} {:g}% interval includes no change", which, 100.0 * (1.0 - o.alpha));
  if (std::isfinite(r.mde)) out += fmt::format("; MDE {:.1f}%", r.mde * 100.0);
  return out;
}

template <class Interval>
CaseComparison judge(std::span<const double> baseline, std::span<const double> current,
                     const CompareOptions& o, Interval interval) {
  CaseComparison r;
  r.baseline_repeats = baseline.size();
  r.current_repeats = current.size();
  r.baseline_median_s = median(baseline);
  r.current_median_s = median(current);
  r.baseline_fast_s = fastest_third_mean(baseline);
  r.current_fast_s = fastest_third_mean(current);
  if (r.baseline_median_s > 0) r.median_change = r.current_median_s / r.baseline_median_s - 1.0;
  if (r.baseline_fast_s > 0) r.change = r.current_fast_s / r.baseline_fast_s - 1.0;
  if (baseline.size() < o.min_repeats || current.size() < o.min_repeats) {
    r.verdict = Verdict::too_few_repeats;
    r.detail = fmt::format("{} vs {} repeats; the gate needs {} on each side (--repeats)",
                           baseline.size(), current.size(), o.min_repeats);
    return r;
  }
  const RatioInterval ci = interval();
  r.change_low = ci.low - 1.0;
  r.change_high = ci.high - 1.0;
  r.mde = minimum_detectable_effect(ci.log_sd, o.threshold, o.alpha);
  r.p_value = mann_whitney_u(baseline, current).p_value;

  const bool big = std::isfinite(r.change) && std::abs(r.change) > o.threshold;
  if (big && r.change > 0 && r.change_low > 0) {
    r.verdict = Verdict::slower;
  } else if (big && r.change < 0 && r.change_high < 0) {
    r.verdict = Verdict::faster;
  } else if (big) {
    r.verdict = Verdict::noisy;
  } else {
    r.verdict = Verdict::same;
  }
  r.detail = detail_of(r, o);
  return r;
}

std::vector<double> flat(const std::vector<std::vector<double>>& rounds) {
  std::vector<double> out;
  for (const auto& r : rounds) out.insert(out.end(), r.begin(), r.end());
  return out;
}

}  // namespace

CaseComparison compare_samples(std::span<const double> baseline, std::span<const double> current,
                               const CompareOptions& o) {
  return judge(baseline, current, o,
               [&] { return bootstrap_fast_ratio(baseline, current, 1.0 - o.alpha); });
}

CaseComparison compare_rounds(const std::vector<std::vector<double>>& baseline,
                              const std::vector<std::vector<double>>& current,
                              const CompareOptions& o) {
  const std::vector<double> b = flat(baseline);
  const std::vector<double> c = flat(current);
  CaseComparison r =
      judge(b, c, o, [&] { return bootstrap_fast_ratio_rounds(baseline, current, 1.0 - o.alpha); });
  r.rounds = std::min(baseline.size(), current.size());
  if (r.verdict == Verdict::too_few_repeats) return r;
  // The fastest third pools the sides' best moments; when a quiet spell fell on one side's
  // turns only, it moves while the rounds' paired ratios do not (docs/ci.md).
  const RatioInterval p = paired_round_ratio(baseline, current, 1.0 - o.alpha);
  r.paired_change = p.ratio - 1.0;
  r.paired_low = p.low - 1.0;
  r.paired_high = p.high - 1.0;
  const double paired_mde = minimum_detectable_effect(p.log_sd, o.threshold, o.alpha);
  if (std::isfinite(r.mde))
    r.mde = std::isfinite(paired_mde) ? std::max(r.mde, paired_mde) : CaseComparison::kNaN;
  const bool confirmed = r.verdict == Verdict::slower   ? r.paired_low > 0
                         : r.verdict == Verdict::faster ? r.paired_high < 0
                                                        : true;
  const std::string paired =
      std::isfinite(r.paired_change)
          ? fmt::format("paired rounds {:+.1f}% [{:+.1f}%, {:+.1f}%]", 100.0 * r.paired_change,
                        100.0 * r.paired_low, 100.0 * r.paired_high)
          : std::string("paired rounds: none");
  if (!confirmed) r.verdict = Verdict::noisy;
  r.detail = detail_of(r, o, paired, confirmed ? "the" : "the rounds'");
  return r;
}

bool is_decided(const CaseComparison& r, const CompareOptions& o) noexcept {
  if (r.verdict == Verdict::slower || r.verdict == Verdict::faster) return true;
  const auto inside = [&](double low, double high) {
    return std::isfinite(low) && std::isfinite(high) && low >= -o.threshold && high <= o.threshold;
  };
  return r.verdict == Verdict::same && inside(r.change_low, r.change_high) &&
         (r.rounds == 0 || inside(r.paired_low, r.paired_high));
}

}  // namespace sb::results
