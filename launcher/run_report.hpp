#pragma once
/// @file run_report.hpp
/// The report of one run as it grows: the run's attributes, the cases an earlier report keeps
/// (--resume, recover), and the records the jobs stream. Written after every change, crash-safe
/// (results::write_report); when the report's folder cannot be written any more (full disk,
/// quota, a folder turned read-only), a copy goes to the temporary folder instead, so that no
/// finished case is lost.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalebench/references.hpp"
#include "scalebench/workload.hpp"

namespace sb {

class RunReport {
 public:
  /// `path`: the report; `temp_dir`: where its temporary file goes (the run's work folder, on
  /// the same file system); `attrs`: the root attributes (status "running").
  RunReport(std::string path, std::string temp_dir, nlohmann::json attrs);

  /// An earlier report's cases: those in `planned` that finished ok keep their place and are
  /// not run again (an each-gpu or each-node case when every device's record is ok); those
  /// this run does not plan are kept after the planned ones. Its system description and
  /// start-up figures stay until a job of this run brings its own.
  void keep_previous(const nlohmann::json& previous, const std::vector<CaseSpec>& planned);
  /// Ids of the planned cases that keep_previous kept.
  [[nodiscard]] bool kept(const std::string& id) const { return kept_ids_.count(id) != 0; }
  [[nodiscard]] int kept_count() const { return static_cast<int>(kept_ids_.size()); }

  /// The run's planned cases, in order: the report's /plan, so that a report a killed run left
  /// still lists the cases it never got to.
  void set_plan(const std::vector<CaseSpec>& planned);
  /// The first job's start record (system description, start-up, ceilings).
  void set_start(const nlohmann::json& start);
  /// A finished (or failed) case; replaces the record of the same plan index (and device).
  void add_case(nlohmann::json record);
  /// Cases appended after the planned ones (recover: cases of a killed run's stream).
  void add_unplanned(nlohmann::json record);

  /// End time, jobs, status ("ok", "failed", "stopped by SIGINT", ...).
  void finish(const std::string& status, int jobs);
  void set_attr(const std::string& key, const nlohmann::json& value);
  /// A top-level part of the model besides the cases (an A/B run's "ab").
  void set_member(const std::string& key, nlohmann::json value);
  /// The reference files the verdicts (results/include/scalebench/verdicts.hpp) use; the
  /// report's /verdicts is judged again whenever it is written.
  void set_references(results::ReferenceSet references);
  /// A weak scaling study's cases (case_plan.hpp): each case id's id at the factor 1, recorded
  /// as the record's `scaling_id`.
  void set_scaling_ids(std::map<std::string, std::string> ids);

  /// Writes the report (throws results::ReportWriteError, exit code 3).
  void write();
  /// After write() failed: the model as an HDF5 file in the temporary folder ($TMPDIR or /tmp).
  /// Returns its path, or "" when that failed too (`why` then says why).
  [[nodiscard]] std::string save_fallback(std::string* why = nullptr) noexcept;
  /// After write() and save_fallback() failed: the report on disk (the last one written) gets
  /// `status` in place, when its folder takes no new file but the file is writable. Returns
  /// whether it did.
  bool mark_last_written(const std::string& status) noexcept;

  [[nodiscard]] const nlohmann::json& model();
  [[nodiscard]] const std::string& path() const { return path_; }
  /// Cases of the report with this status ("ok", "failed", "timeout", "skipped").
  [[nodiscard]] int count(const std::string& status);
  [[nodiscard]] bool any_failed();

 private:
  void rebuild();
  std::string path_;
  std::string temp_dir_;
  nlohmann::json model_;
  nlohmann::json written_;  ///< the model of the last report written (null before the first)
  /// Planned cases by plan index, then device ("" for a case that is not per device).
  std::map<std::pair<int, std::string>, nlohmann::json> by_index_;
  std::vector<nlohmann::json> unplanned_;
  std::map<std::string, bool> kept_ids_;
  int planned_ = 0;
  bool dirty_ = true;
  results::ReferenceSet references_;
  std::map<std::string, std::string> scaling_ids_;
};

}  // namespace sb
