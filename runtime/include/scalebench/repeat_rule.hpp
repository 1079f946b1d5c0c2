#pragma once
/// @file repeat_rule.hpp
/// How many timed repeats a case takes: a fixed count (`--repeats N`), or as many as it needs
/// (`--repeats auto`): at least `min_repeats`, then until the median is known to within
/// `target_spread`, or `max_repeats` were taken, or `max_time_s` has passed — nvbench's
/// stopping criteria, with a distribution-free interval because interference on a shared
/// machine is one-sided and heavy-tailed (docs/ci.md, "Adaptive repeats").

#include <string>
#include <vector>

namespace sb {

struct RepeatRule {
  int min_repeats = 5;       ///< fixed count when equal to max_repeats
  int max_repeats = 5;       ///< the most timed repeats the case takes
  double max_time_s = 0;     ///< wall time of the timed repeats, 0: no limit (auto only)
  double target_spread = 0;  ///< relative half-width of the median's 95% interval (auto only)
  [[nodiscard]] bool adaptive() const noexcept { return max_repeats > min_repeats; }
};

/// The defaults of `--repeats auto` (docs/ci.md).
inline constexpr int kAutoMinRepeats = 5;
inline constexpr int kAutoMaxRepeats = 100;
inline constexpr double kAutoMaxTime = 10.0;
inline constexpr double kAutoTargetSpread = 0.01;

/// Why a case stopped taking repeats.
struct RepeatStop {
  bool stop = false;
  std::string reason;  ///< "count" (fixed), "spread", "max-repeats" or "max-time"
  double spread = 0;   ///< relative half-width of the median's 95% interval (NaN below 2)
};

/// The relative half-width of a distribution-free 95% confidence interval of the median of
/// `totals` (order statistics, binomial normal approximation), as a fraction of the median;
/// the whole range's half-width below 6 repeats; NaN below 2 repeats.
[[nodiscard]] double median_spread(std::vector<double> totals);

/// Warm-up: a case's `warmup` repeats, and more until those after the first (which carries
/// one-time costs: connections, first touches) have taken kMinWarmupS (at most
/// kMaxWarmupRepeats); none with --warmup 0. The first repeats after a case starts run slow
/// while GPU links and clocks settle: seed groupby by-name on four GPUs ran its first three
/// timed repeats at 1.4-2.3x the median after one warm-up repeat, and at the median after 30
/// (docs/performance.md, "Where a small case's time goes").
inline constexpr double kMinWarmupS = 0.05;
inline constexpr int kMaxWarmupRepeats = 1000;

/// Whether a case that has run `done` warm-up repeats of its `warmup`, `elapsed_s` seconds after
/// the first of them ended, runs another one.
[[nodiscard]] bool warm_up_more(int done, int warmup, double elapsed_s);

/// Whether a case that took `totals` in `elapsed_s` seconds of timed repeats stops now.
[[nodiscard]] RepeatStop repeat_stop(const RepeatRule& rule, const std::vector<double>& totals,
                                     double elapsed_s);

}  // namespace sb
