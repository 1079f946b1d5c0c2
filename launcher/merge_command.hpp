#pragma once
/// @file merge_command.hpp
/// `scalebench report merge INPUT... [--out FILE] [--references FILE]... [--check]
/// [--keep-series]`: reports and folders of reports into one report (results merge.hpp). A
/// fleet sweep's folder (its fleet.json, batch/fleet_folder.hpp) lists its elements: those
/// without a report are `missing`, and the merge prints the command that re-submits the nodes
/// that are not ok and the missing ones. A scaling study's folder (`scalebench scale`) gives
/// the scaling table.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace CLI {
class App;
}

namespace sb {

struct MergeRequest {
  std::vector<std::string> inputs;  ///< report files and folders
  std::string out;                  ///< the merged report; "" = FOLDER/merged.h5 (one folder)
  std::vector<std::string> references;
  bool keep_series = false;
  std::string command_line;
};

/// Merges and writes the merged report; returns its model (and `out` the path written).
/// Throws sb::UsageError (one line) for an input that is neither a report nor a folder, a report
/// of another schema version or that cannot be read (outside a fleet folder), nothing to merge.
[[nodiscard]] nlohmann::json merge_into(const MergeRequest& request, std::string* out);

/// Registers `merge` on the `report` subcommand; its callback prints the fleet or scaling table
/// and sets `exit_code` (0; with --check 1 when a node is not ok or missing).
void add_merge_command(CLI::App& report, int& exit_code, const std::vector<std::string>& argv);

}  // namespace sb
