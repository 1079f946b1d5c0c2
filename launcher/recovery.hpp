#pragma once
/// @file recovery.hpp
/// Folding what killed runs left into their report (`scalebench recover`, `run --resume`).
/// A run whose launcher was killed (kill -9, the OOM killer, a lost login shell) ends its job
/// through the lifeline, and the cases its scheduler finished after the launcher's last report
/// write are in the record streams of its work folder. These functions put them into the report.

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run_folder.hpp"

namespace sb {

/// The status of a run whose report could not be written (run_command.cpp); `recover` replaces
/// it (and "running", a killed run's) once it has folded the work folder's cases in.
inline constexpr const char* kUnsavedStatus = "failed: the report could not be written";

struct Recovery {
  std::vector<OrphanRun> runs;  ///< the killed runs of this report whose folders were read
  int cases = 0;                ///< case records taken from their streams
  std::string last_utc;         ///< when the last of those cases ended
};

/// Adds to `model` (a report model; null when the report does not exist yet) the cases that
/// killed runs of `report` finished: a stream's case replaces the model's case of the same id
/// unless that one is ok. Creates the model from a stream's start record when needed. Does not
/// remove anything (call remove_recovered after the merged report is written).
Recovery recover_into(const std::filesystem::path& report, nlohmann::json& model);

/// Removes the work folders of `r` and killed writers' temporary files beside `report`.
void remove_recovered(const std::filesystem::path& report, const Recovery& r);

}  // namespace sb

namespace CLI {
class App;
}

namespace sb {
/// Registers `recover`: folds killed runs' streams into REPORT and removes their folders.
void add_recover_command(CLI::App& app, int& exit_code);
}  // namespace sb
