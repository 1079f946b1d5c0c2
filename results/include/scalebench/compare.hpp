#pragma once
/// @file compare.hpp
/// The regression gate (docs/specification.md §8): `scalebench compare BASELINE.h5 CURRENT.h5`.
///
/// Cases are matched by (workload, path, params). For a pair with at least `min_repeats`
/// repeats on both sides, the per-repeat total times are compared with a two-sided
/// Mann-Whitney U test (mann_whitney.hpp) and the relative change of the medians:
///   p < alpha and change >  threshold -> slower (a regression)
///   p < alpha and change < -threshold -> faster
///   p >= alpha and |change| > threshold -> noisy (not proven either way)
///   otherwise                           -> same
/// A case that failed (validation, error or timeout) in CURRENT is `failed`, a regression.
/// Cases only in CURRENT are `new` (also when the baseline case did not finish ok), cases only
/// in BASELINE (or skipped in CURRENT) are `missing`; neither fails the gate.

#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace sb::results {

enum class Verdict { faster, same, slower, noisy, new_case, missing, too_few_repeats, failed };

/// "faster", "same", "slower", "noisy", "new", "missing", "too-few-repeats", "failed".
[[nodiscard]] std::string_view to_string(Verdict v) noexcept;
/// slower and failed are regressions; every other verdict passes the gate.
[[nodiscard]] constexpr bool is_regression(Verdict v) noexcept {
  return v == Verdict::slower || v == Verdict::failed;
}

struct CompareOptions {
  double threshold = 0.05;      ///< relative change of the median that matters (0.05 = 5%)
  double alpha = 0.01;          ///< significance level of the U test
  std::size_t min_repeats = 5;  ///< fewer repeats on either side: too-few-repeats
};

/// The outcome for one case.
struct CaseComparison {
  std::string name;  ///< case id (current's, else baseline's)
  std::string workload;
  std::string path;
  nlohmann::json params = nlohmann::json::object();
  Verdict verdict = Verdict::same;
  std::size_t baseline_repeats = 0;
  std::size_t current_repeats = 0;
  double baseline_median_s = std::numeric_limits<double>::quiet_NaN();
  double current_median_s = std::numeric_limits<double>::quiet_NaN();
  double change = std::numeric_limits<double>::quiet_NaN();   ///< current/baseline median - 1
  double p_value = std::numeric_limits<double>::quiet_NaN();  ///< U test, two-sided
  std::string detail;                                         ///< one line for people
};

struct Comparison {
  CompareOptions options;
  std::vector<CaseComparison> cases;  ///< CURRENT's order, then cases missing from CURRENT
  [[nodiscard]] bool regressed() const noexcept;
};

/// Judges two samples of total times (seconds); fills medians, change, p_value and verdict
/// (never new/missing/failed).
[[nodiscard]] CaseComparison compare_samples(std::span<const double> baseline,
                                             std::span<const double> current,
                                             const CompareOptions& options = {});

/// Compares two report models (read_report). Throws sb::UsageError for bad options.
[[nodiscard]] Comparison compare_reports(const nlohmann::json& baseline,
                                         const nlohmann::json& current,
                                         const CompareOptions& options = {});

/// "table" (terminal), "markdown" (CI summaries) or "junit" (JUnit XML for CI test reports).
/// `width`: the columns the table fits, cutting the case ids and details (0: no limit;
/// output_width in report.hpp). Throws sb::UsageError for another format.
[[nodiscard]] std::string format_comparison(const Comparison& c, const std::string& format,
                                            std::size_t width = 0);

/// The process exit code of `scalebench compare`: 1 when a case regressed, else 0.
[[nodiscard]] int comparison_exit_code(const Comparison& c) noexcept;

/// Parses a threshold: "5%" -> 0.05, "0.05" -> 0.05. Throws sb::UsageError otherwise.
[[nodiscard]] double parse_threshold(const std::string& text);

}  // namespace sb::results
