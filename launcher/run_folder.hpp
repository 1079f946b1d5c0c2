#pragma once
/// @file run_folder.hpp
/// The work folder of one `scalebench run`: `.scalebench-<pid>/` beside the report, holding the
/// job plans, the scheduler's record streams, the job logs, launch files (long host lists), the
/// report's temporary file, an owner file and the launcher's lifeline (lifeline.hpp).
///
/// One writer per report: a run refuses to start (sb::UsageError, exit 2) while another live
/// run writes the same report, naming it. A run that was killed leaves its folder behind (its
/// lifeline is free): `scalebench recover REPORT` and `scalebench run ... --resume REPORT` fold
/// the cases its streams hold into the report and remove the folder; a fresh run writing the
/// same report removes it only with --force (run_command.cpp), and any other run in that
/// folder says how to recover it. One report is one file (file_identity.hpp): every spelling
/// of its path names the same writer.

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalebench/lifeline.hpp"

namespace sb {

/// Who owns a work folder (its owner.json).
struct RunOwner {
  int pid = 0;
  std::string host;
  std::string report;  ///< absolute path of the report the run writes
  std::string started_utc;
  double started = 0;  ///< seconds since the epoch (orders two runs that start together)
};

/// Whether `owner` writes (or wrote) `report`: the same file however either path is spelled (a
/// link, a bind mount, a hard link: file_identity.hpp).
[[nodiscard]] bool writes_report(const RunOwner& owner, const std::filesystem::path& report);

/// Throws the one-writer refusal (sb::UsageError naming the other run) when a live run writes
/// `report`; before anything else is said about the report (RunFolder checks again, race-free).
void refuse_if_written(const std::filesystem::path& report);

class RunFolder {
 public:
  /// Creates the folder beside `report` (an absolute path), writes its owner file and takes the
  /// lifeline. Throws sb::UsageError when another live run writes `report`, and
  /// sb::EnvironmentError when the folder cannot be made.
  explicit RunFolder(const std::filesystem::path& report);
  ~RunFolder();  ///< removes the folder and everything in it (unless keep())
  RunFolder(const RunFolder&) = delete;
  RunFolder& operator=(const RunFolder&) = delete;

  [[nodiscard]] const std::filesystem::path& path() const noexcept { return dir_; }
  [[nodiscard]] const std::string& lifeline_path() const noexcept { return lifeline_.path(); }
  void keep() noexcept { keep_ = true; }

 private:
  std::filesystem::path dir_;
  LifelineHold lifeline_;
  bool keep_ = false;
};

/// A work folder whose run is dead (its lifeline is free).
struct OrphanRun {
  std::filesystem::path folder;
  RunOwner owner;
};

/// The dead runs' work folders in `dir` (work folders of live runs and of other programs are
/// not listed). Folders whose owner file is missing or damaged are listed with an empty owner.
[[nodiscard]] std::vector<OrphanRun> find_orphan_runs(const std::filesystem::path& dir);

/// What a run's record streams hold: the first start record and the last record of every case
/// (by case id), in the order they finished.
struct StreamRecords {
  nlohmann::json start;               ///< null when no job got as far as its start record
  std::vector<nlohmann::json> cases;  ///< case records (type removed)
  std::string last_utc;               ///< when the last case ended
};
[[nodiscard]] StreamRecords read_stream_records(const std::filesystem::path& folder);

/// Removes what killed writers of `report` left beside it: `<report>.tmp-<pid>` files whose
/// process is gone. Returns how many were removed.
int remove_stale_temp_files(const std::filesystem::path& report);

}  // namespace sb
