#pragma once
/// @file ab_sides.hpp
/// The two sides of an A/B run, checked before any job starts (ab_request.hpp says what a side
/// is): each side's rank program exists and speaks this launcher's A/B protocol (its
/// `--probe`, ab_protocol.hpp), its plugins load there, its settings are valid, and it has
/// every planned workload. Anything wrong is one line and exit code 2.

#include <array>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ab_request.hpp"

namespace sb {

struct AbSide {
  std::string name;          ///< "baseline" or "current"
  std::string label;         ///< as given, else the name
  std::string rank_program;  ///< absolute
  std::string rank_sha256;
  std::vector<std::string> plugins;  ///< absolute, in load order
  std::string mpiexec;               ///< "" = the run's
  std::map<std::string, std::string> env;
  std::vector<std::string> params;  ///< "workload.key=value" over the run's --param
  nlohmann::json probe;             ///< what the rank program answered
  /// The side's row of the report's /ab/sides.
  [[nodiscard]] nlohmann::json row() const;
};

/// The rank program a `rank=` item names: a file; a folder holding scalebench-rank (a build
/// folder) or libexec/scalebench-rank (an install prefix); or a `scalebench` with its
/// scalebench-rank beside it. Throws sb::UsageError naming `what`.
[[nodiscard]] std::string find_rank_program(const std::string& given, const std::string& what);

/// Resolves both sides ([0] baseline, [1] current). `this_rank`: this build's scalebench-rank;
/// `run_plugins`: the run's plugins (--plugin, the suite's); `workloads`: those of the planned
/// cases. Throws sb::UsageError (exit 2) with one line.
[[nodiscard]] std::array<AbSide, 2> resolve_sides(const AbRequest& request,
                                                  const std::string& this_rank,
                                                  const std::vector<std::string>& run_plugins,
                                                  const std::vector<std::string>& workloads);

}  // namespace sb
