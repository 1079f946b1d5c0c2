#pragma once
/// @file compare.hpp
/// The regression gate (docs/specification.md §8): `scalebench compare BASELINE.h5 CURRENT.h5`
/// (docs/ci.md).
///
/// Cases are matched by (workload, path, params, and the device of an each-gpu or each-node
/// record). Interference on a shared machine only adds
/// time, in bursts, so the gate judges the fast repeats: for a pair with at least `min_repeats`
/// repeats on both sides (repeats marked `throttled` or `host_stalled` left out), the change is
/// fastest_third_mean(current) / fastest_third_mean(baseline) - 1 (stats.hpp) with its
/// (1 - alpha) bootstrap interval (bootstrap.hpp):
///   change >  threshold and interval above 0 -> slower (a regression)
///   change < -threshold and interval below 0 -> faster
///   |change| > threshold otherwise            -> noisy (not proven either way)
///   otherwise                                 -> same
/// The medians and a two-sided Mann-Whitney U test (mann_whitney.hpp) are reported beside.
/// When the run that looks slower (or faster) measured on a busier machine and that explains
/// the change (interference.hpp), the verdict is `inconclusive` instead.
///
/// Every compared case states its minimum detectable effect (`mde`): the smallest true change
/// the rule above would call slower (or faster) four times in five, given this run's spread:
/// max(threshold, z(1 - alpha/2) se) + z(0.8) se, with se the bootstrap's standard error of the
/// log ratio. When a `same` case's baseline measured on a busier machine than current, that
/// could hide a slowdown beyond the threshold, and the verdict is `inconclusive` (a nightly
/// baseline taken on a slowed machine must not pass a regression).
///
/// An A/B report (`scalebench run --baseline ...`, docs/ci.md) holds both sides, measured turn
/// by turn in one job: compare_ab_report pairs its sides' cases by position and judges them by
/// the same rule, its interval resampling whole rounds (a turn of each side: repeats that shared
/// a moment of the machine are one piece of evidence, compare_rounds). The busy-machine rule
/// takes another form there: both sides shared the machine turn by turn, but when other
/// processes took a quarter of the cores or more in either side's turns, a side's fastest
/// repeats are those that met a quiet moment, and a change within what that load explains is
/// `inconclusive` (interference.hpp, busy_in_either).
///
/// A case that failed (validation, error or timeout) in CURRENT is `failed`, a regression.
/// Cases only in CURRENT are `new` (also when the baseline case did not finish ok). A baseline
/// case absent from CURRENT, or ok in the baseline but skipped in CURRENT, is `missing`; a case
/// skipped in both (or skipped on one side and absent on the other) is `skipped`.
///
/// Exit codes (comparison_exit_code): 1 a regression (failed, slower; noisy and inconclusive
/// too with --on-noisy fail); else 4 "incomplete" when a baseline case is missing or nothing
/// was compared (unless --allow-missing); else 5 "inconclusive" when a case is noisy or
/// inconclusive and --on-noisy is warn (the default); else 0.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalebench/error.hpp"
#include "scalebench/system_identity.hpp"

namespace sb::results {

enum class Verdict {
  faster,
  same,
  slower,
  noisy,
  inconclusive,
  new_case,
  missing,
  skipped,
  too_few_repeats,
  failed
};

/// "faster", "same", "slower", "noisy", "inconclusive", "new", "missing", "skipped",
/// "too-few-repeats", "failed".
[[nodiscard]] std::string_view to_string(Verdict v) noexcept;
/// slower and failed are regressions whatever the policy.
[[nodiscard]] constexpr bool is_regression(Verdict v) noexcept {
  return v == Verdict::slower || v == Verdict::failed;
}
/// The verdicts --on-noisy decides: the gate could not tell.
[[nodiscard]] constexpr bool is_undecided(Verdict v) noexcept {
  return v == Verdict::noisy || v == Verdict::inconclusive;
}
/// The verdicts that come from comparing two timing samples.
[[nodiscard]] constexpr bool is_compared(Verdict v) noexcept {
  return v == Verdict::faster || v == Verdict::same || v == Verdict::slower ||
         v == Verdict::noisy || v == Verdict::inconclusive;
}

/// What a noisy or inconclusive case does to the exit code.
enum class NoisyPolicy { pass, warn, fail };
/// "pass", "warn", "fail".
[[nodiscard]] std::string_view to_string(NoisyPolicy p) noexcept;
/// Throws sb::UsageError for another word.
[[nodiscard]] NoisyPolicy parse_noisy_policy(const std::string& text);

struct CompareOptions {
  double threshold = 0.05;      ///< relative change that matters (0.05 = 5%)
  double alpha = 0.01;          ///< 1 - confidence of the interval; level of the U test
  std::size_t min_repeats = 5;  ///< fewer repeats on either side: too-few-repeats
  NoisyPolicy on_noisy = NoisyPolicy::warn;
  bool allow_missing = false;  ///< missing cases and an empty comparison pass
  bool strict = false;         ///< refuse (sb::UsageError) reports of different hardware
};

/// The outcome for one case.
struct CaseComparison {
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  std::string name;  ///< case id (current's, else baseline's)
  std::string workload;
  std::string path;
  nlohmann::json params = nlohmann::json::object();
  Verdict verdict = Verdict::same;
  std::size_t baseline_repeats = 0;  ///< timed repeats used (marked ones left out)
  std::size_t current_repeats = 0;
  std::size_t marked_left_out = 0;  ///< repeats marked throttled or host-stalled, both sides
  double baseline_fast_s = kNaN;    ///< mean of the fastest third of the repeats
  double current_fast_s = kNaN;
  double change = kNaN;       ///< current/baseline fastest-third mean - 1
  double change_low = kNaN;   ///< (1 - alpha) bootstrap interval of `change`
  double change_high = kNaN;  ///<
  double baseline_median_s = kNaN;
  double current_median_s = kNaN;
  double median_change = kNaN;  ///< current/baseline median - 1
  double p_value = kNaN;        ///< U test, two-sided
  double mde = kNaN;            ///< minimum detectable effect (relative, > 0; see above)
  std::size_t rounds = 0;       ///< an A/B run's rounds the interval resampled (0: repeats)
  /// An A/B run's paired evidence (signed_rank.hpp): the rounds' Hodges-Lehmann change and its
  /// signed-rank interval at the same confidence; a verdict of slower or faster needs it too.
  double paired_change = kNaN;
  double paired_low = kNaN;
  double paired_high = kNaN;
  std::string detail;  ///< one line for people
};

/// What an A/B report says about its sides (compare_ab_report).
struct AbSides {
  std::string baseline;  ///< one line each: label, program (commit), plugins, environment
  std::string current;
  std::size_t turns = 0;          ///< turns handed out, both sides counted
  std::uint64_t seed = 0;         ///< of the turn order
  std::size_t timed_repeats = 0;  ///< both sides together
};

struct Comparison {
  CompareOptions options;
  std::vector<CaseComparison> cases;     ///< CURRENT's order, then cases missing from CURRENT
  std::vector<SystemDifference> system;  ///< what differs between the two runs' machines
  std::optional<AbSides> ab;             ///< set when both sides came from one A/B run
  [[nodiscard]] bool regressed() const noexcept;        ///< a case fails the gate (exit 1)
  [[nodiscard]] bool incomplete() const noexcept;       ///< exit 4 (see the file comment)
  [[nodiscard]] bool undecided() const noexcept;        ///< a noisy or inconclusive case
  [[nodiscard]] std::size_t compared() const noexcept;  ///< cases with a timing verdict
  [[nodiscard]] std::size_t count(Verdict v) const noexcept;
};

/// The minimum detectable effect (see above) for a bootstrap standard error `log_sd` of the
/// log ratio; NaN when it is unknown.
[[nodiscard]] double minimum_detectable_effect(double log_sd, double threshold, double alpha);

/// Judges two samples of total times (seconds); fills the statistics, detail and verdict
/// (faster, same, slower, noisy or too-few-repeats).
[[nodiscard]] CaseComparison compare_samples(std::span<const double> baseline,
                                             std::span<const double> current,
                                             const CompareOptions& options = {});

/// The same rule on an A/B run's repeats in rounds (round i: baseline[i] and current[i], a turn
/// of each side, bootstrap.hpp): whole rounds are resampled for the interval and the MDE, and
/// the rounds' paired ratios (signed_rank.hpp) must agree: `slower` or `faster` only when their
/// interval excludes no change too (otherwise `noisy`), the MDE the larger of the two.
[[nodiscard]] CaseComparison compare_rounds(const std::vector<std::vector<double>>& baseline,
                                            const std::vector<std::vector<double>>& current,
                                            const CompareOptions& options = {});

/// Whether a case's change is decided: slower or faster, or its interval (and an A/B run's
/// paired interval) within +-threshold (an A/B run with `--repeats auto` takes repeats until it
/// is).
[[nodiscard]] bool is_decided(const CaseComparison& r, const CompareOptions& options) noexcept;

/// Whether `model` is an A/B report (it has the `ab` section).
[[nodiscard]] bool is_ab_report(const nlohmann::json& model) noexcept;

/// The baseline side of an A/B report as a report model of its own (its system, start-up and
/// cases), for compare_reports or history. Throws sb::UsageError when it is not an A/B report.
[[nodiscard]] nlohmann::json ab_baseline_model(const nlohmann::json& model);

/// Compares the two sides of one A/B report (see above). Throws sb::UsageError for bad options
/// or a report that is not an A/B report.
[[nodiscard]] Comparison compare_ab_report(const nlohmann::json& model,
                                           const CompareOptions& options = {});

/// Compares two report models (read_report). Throws sb::UsageError for bad options, and with
/// options.strict when the hardware differs.
[[nodiscard]] Comparison compare_reports(const nlohmann::json& baseline,
                                         const nlohmann::json& current,
                                         const CompareOptions& options = {});

/// "table" (terminal), "markdown" (CI summaries), "junit" (JUnit XML for CI test reports) or
/// "json" (schema "scalebench-compare/1", docs/ci.md). `width`: the columns the table fits: the
/// parameters every case of a workload shares go above it, then the details and ids are cut
/// (0: no limit; output_width in report.hpp). Throws sb::UsageError for another format.
[[nodiscard]] std::string format_comparison(const Comparison& c, const std::string& format,
                                            std::size_t width = 0);

/// The process exit code of `scalebench compare`: 1, 4, 5 or 0 (see the file comment).
[[nodiscard]] int comparison_exit_code(const Comparison& c) noexcept;

/// Parses a threshold: "5%" -> 0.05, "0.05" -> 0.05. Throws sb::UsageError otherwise.
[[nodiscard]] double parse_threshold(const std::string& text);

}  // namespace sb::results
