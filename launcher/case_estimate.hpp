#pragma once
/// @file case_estimate.hpp
/// How long a planned case will take, for `run --list`, from what this machine measured before
/// (the run's earlier reports: the default report folder's newest, the --resume and --out
/// reports), in this order:
///   measured  the same case (id and workers) in a report of this host: its median repeat time
///             times the repeats planned, plus what the case took outside its repeats (set-up,
///             validation) then;
///   scaled    the same workload, path, workers and other parameters at another size: that
///             case's figures times the ratio of the work units (Workload's work(), built-in
///             workloads only: a plugin's scheduler is not made outside its job);
///   ceiling   no such case: the case's bytes or flops at the measured ceilings of this machine
///             (the newest report's /system/ceilings), a lower bound shown as ">=".
/// Otherwise the estimate is unknown ("?").

#include <cstddef>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalebench/case_forecast.hpp"
#include "scalebench/workload.hpp"

namespace sb {

struct CaseEstimate {
  double seconds = std::numeric_limits<double>::quiet_NaN();  ///< wall time of the whole case
  std::string method;  ///< "measured", "scaled", "ceiling" (a lower bound), "" unknown
  [[nodiscard]] bool known() const { return !method.empty(); }
};

class CaseEstimator {
 public:
  /// From the cases of `reports` (models, newest first) measured on `host`.
  CaseEstimator(const std::vector<nlohmann::json>& reports, std::string host);
  [[nodiscard]] CaseEstimate estimate(const CaseSpec& spec, const CaseForecast& forecast) const;
  /// Reports the estimates came from.
  [[nodiscard]] std::size_t reports() const { return reports_; }

 private:
  struct Past {
    std::string id, workload, path, rest;  ///< rest: the parameters that are not sizes
    int workers = 0;
    double median_s = 0, overhead_s = 0, units = 0;
    int repeats = 0;
    int warmup = 0;
  };
  std::vector<Past> past_;
  nlohmann::json ceilings_ = nlohmann::json::array();
  std::size_t reports_ = 0;
};

/// The report files an estimate may read, newest first: `extra` (the --resume and --out
/// reports, when they exist), then up to `max` of `folder`'s *.h5 by modification time.
[[nodiscard]] std::vector<std::filesystem::path> estimate_sources(
    const std::filesystem::path& folder, const std::vector<std::filesystem::path>& extra,
    std::size_t max);

/// "~1.2 s", ">=30 ms", "?".
[[nodiscard]] std::string estimate_text(const CaseEstimate& e);

}  // namespace sb
