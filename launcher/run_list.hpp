#pragma once
/// @file run_list.hpp
/// `scalebench run --list` (`--dry-run`): every planned case as the run would treat it on this
/// machine or allocation (case_forecast.hpp: run, skipped with the reason the run would record,
/// or failing its memory check), with its workers, estimated time (case_estimate.hpp) and
/// memory per worker, and the totals. Nothing runs.

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalebench/case_forecast.hpp"
#include "scalebench/workload.hpp"

namespace sb {

struct ListContext {
  MachineShape machine;
  std::string where;              ///< "1 node (local)", "2 nodes (slurm job 42)"
  std::string cpus;               ///< the CPU allowance when it is below the node's, else ""
  std::vector<std::string> kept;  ///< ids a resumed report keeps (not run again)
  std::vector<nlohmann::json> past_reports;  ///< for the estimates, newest first
  std::string host;
  std::size_t width = 0;  ///< columns to fit (0: none)
};

/// The listing (ends in '\n').
[[nodiscard]] std::string format_list(const std::vector<CaseSpec>& cases, const ListContext& ctx);

}  // namespace sb
