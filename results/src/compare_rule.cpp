// compare_samples: the gate's decision rule for one pair of timing samples (compare.hpp).
#include <cmath>

#include <fmt/format.h>

#include "scalebench/bootstrap.hpp"
#include "scalebench/compare.hpp"
#include "scalebench/mann_whitney.hpp"
#include "scalebench/stats.hpp"

namespace sb::results {

CaseComparison compare_samples(std::span<const double> baseline, std::span<const double> current,
                               const CompareOptions& o) {
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
  const RatioInterval ci = bootstrap_fast_ratio(baseline, current, 1.0 - o.alpha);
  r.change_low = ci.low - 1.0;
  r.change_high = ci.high - 1.0;
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
  r.detail = fmt::format("median {:+.1f}%", r.median_change * 100.0);
  if (r.verdict == Verdict::noisy)
    r.detail += fmt::format("; the {:g}% interval includes no change", 100.0 * (1.0 - o.alpha));
  return r;
}

}  // namespace sb::results
