#pragma once
/// @file merge.hpp
/// Merging reports: several runs (the nodes of a fleet sweep, the node counts of a scaling
/// study, runs of other clusters or dates) become one report whose cases keep where they came
/// from (docs/report-schema.md, "Merged reports"). The merged report is a report like any
/// other: `report`, `compare` and `history add` read it.
///
/// What a merged model adds:
///  - "sources": one row per merged report {source, report, job_id, host, git_sha,
///    scalebench_version, start_utc, end_utc, status, scheduler, nodes, cases, scaling_nodes,
///    weak_scale};
///  - per case: `source` (its row), `source_report`, `source_job`, `source_host`,
///    `source_commit`; a case whose workload, path, parameters and device occur in several
///    reports is told apart the way each-* records are: its `id` gets "/DEVICE" appended
///    (`planned_id` keeps the id it had, `device_id` holds DEVICE): the host (`host:gpuK` of a
///    single-gpu record) when the reports ran on different hosts, `nodes=K` in a scaling study,
///    else `report=N`;
///  - "verdicts": every device judged against all its peers of the merged reports (verdicts.hpp)
///    and the reference files given;
///  - "scaling" when the reports are the node counts of a scaling study (scaling.hpp);
///  - "fleet" when the caller describes the sweep (MergeFleet: the elements that never
///    reported).
/// Per-task events and telemetry time series (the bulk of a report) stay in the source reports
/// unless MergeOptions::keep_series: the merged case says which report holds them.

#include <cstddef>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalebench/references.hpp"

namespace sb::results {

struct MergeOptions {
  /// Keep every case's task events and telemetry series (default: left in the source reports,
  /// which keeps a merge of thousands of reports within memory).
  bool keep_series = false;
  /// The merging command, for the merged report's `command_line`.
  std::string command_line;
};

/// An element of a fleet sweep that left no report (docs/acceptance.md, "A fleet").
struct MissingElement {
  std::string element;  ///< "node-n3" (one job per node) or "element-7" (a job array's)
  std::string node;     ///< the node it was meant for; "" for an array element
  std::string job_id;   ///< its batch job (array element), "" when unknown
  std::string reason;   ///< "no report", "report unreadable: ..."
};

/// A fleet sweep as its run folder describes it.
struct MergeFleet {
  std::size_t elements = 0;             ///< elements submitted (nodes and array elements)
  std::vector<MissingElement> missing;  ///< those without a report
  std::vector<std::string> duplicates;  ///< "node3: 2 reports, the newest kept (...)"
  std::string resubmit;  ///< the command that runs the failed and missing nodes again; "" none
};

/// Builds a merged model one report at a time (so that only the merged part of each is held).
class ReportMerger {
 public:
  explicit ReportMerger(MergeOptions options = {});

  /// Adds the report `name` (its path, as shown). Its bulky per-case arrays are dropped first
  /// unless keep_series. A merged report's cases keep their sources. Throws sb::UsageError
  /// ("cannot merge NAME: ...") for a model of another schema version or without cases.
  void add(const std::string& name, nlohmann::json model);

  /// Reports added so far.
  [[nodiscard]] std::size_t size() const { return sources_.size(); }
  /// The row of source `i` (merge.hpp: "sources").
  [[nodiscard]] const nlohmann::json& source(std::size_t i) const { return sources_.at(i); }

  /// A fleet sweep's reports of one node (an element run again, or two job array elements on
  /// one node): the newest (its start_utc) is kept, the cases of the others are left out and
  /// their source rows say `superseded`. Returns one line per such node.
  std::vector<std::string> keep_newest_per_host();

  /// The merged model: attributes, system, sources, cases, verdicts (judged against all peers
  /// and `references`), the scaling table when the reports are a scaling study, `fleet` when
  /// given. Throws sb::UsageError when nothing was added.
  [[nodiscard]] nlohmann::json finish(const ReferenceSet& references,
                                      const MergeFleet* fleet = nullptr);

 private:
  MergeOptions options_;
  nlohmann::json sources_ = nlohmann::json::array();
  nlohmann::json cases_ = nlohmann::json::array();
  nlohmann::json nodes_ = nlohmann::json::array();
  nlohmann::json gpus_ = nlohmann::json::array();
  nlohmann::json ceilings_ = nlohmann::json::array();
  nlohmann::json versions_ = nlohmann::json::object();
  nlohmann::json startup_ = nlohmann::json::object();
  nlohmann::json attrs_ = nlohmann::json::object();
  std::vector<std::string> presets_, schedulers_, sb_versions_, commits_, job_ids_;
  std::set<std::string> hosts_, gpu_keys_;  ///< the nodes and GPUs in the system so far
  std::size_t ranks_ = 0, workers_ = 0;
};

/// Reads the reports `paths` the way read_report_isolated does (report.hpp: a damaged file
/// cannot crash or hang the caller) without a process per file: `jobs` child processes read
/// every jobs-th file each, dropping the bulky arrays first when `slim` (drop_series), and the
/// caller gets each model in path order, `on_report(i, model)`, or the one-line reason a file
/// could not be read, `on_error(i, message)`. A child that crashes or hangs on a file costs that
/// file alone: a new child goes on with the rest.
void read_reports_isolated(const std::vector<std::string>& paths, bool slim, std::size_t jobs,
                           const std::function<void(std::size_t, nlohmann::json&&)>& on_report,
                           const std::function<void(std::size_t, const std::string&)>& on_error);

/// read_report (report.hpp) without the bulky arrays drop_series drops: they are not read.
[[nodiscard]] nlohmann::json read_report_slim(const std::string& path);

/// Drops a report model's bulky per-case arrays (task events, telemetry series, per-repeat
/// results), keeping the figures a merged report needs.
void drop_series(nlohmann::json& model);

}  // namespace sb::results
