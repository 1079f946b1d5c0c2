#pragma once
/// @file fleet_folder.hpp
/// The run folder of a fleet sweep (docs/acceptance.md, "A fleet"): every element's report and
/// log, and `fleet.json`, which `scalebench submit --fleet ...` writes and updates at every
/// submission and `scalebench report merge` reads to tell which elements never reported:
///
///   { "format": "scalebench-fleet", "version": 1, "scheduler": "slurm",
///     "submit": [submit options, fleet options left out], "run": [run options],
///     "elements": [ {"element": "node-n3" | "element-7", "node": "n3" | "",
///                    "job_id": "130" | "123_7", "submitted_utc": "..."} ] }
///
/// Element `E` writes its report to `E.h5` and its log to `E.out` in the folder. A node named
/// with --fleet-nodes is element `node-NAME`; element I of a --fleet COUNT job array is
/// `element-I`. Submitting an element again replaces its entry (and, when it runs, its report).

#include <string>
#include <vector>

namespace sb::batch {

inline constexpr const char* kFleetManifest = "fleet.json";

struct FleetElement {
  std::string element;  ///< "node-n3" or "element-7": its report is ELEMENT.h5
  std::string node;     ///< the node it is pinned to; "" for an array element
  std::string job_id;   ///< the batch job (an array element's own id: 123_7, 123[7], 123.8)
  std::string submitted_utc;
};

struct FleetManifest {
  std::string scheduler;
  std::vector<std::string> submit_args;  ///< submit options without the fleet ones
  std::vector<std::string> run_args;     ///< run options (after --)
  std::vector<FleetElement> elements;
};

/// The element name of a node ("node-n3") and of array element `index` ("element-7").
[[nodiscard]] std::string node_element(const std::string& node);
[[nodiscard]] std::string array_element(int index);
/// The index of an "element-I" name; -1 for any other.
[[nodiscard]] int array_element_index(const std::string& element);

/// Reads DIR/fleet.json; nullopt-like: `found` false when the folder has none. Throws
/// sb::UsageError (one line) for a manifest that does not parse.
[[nodiscard]] FleetManifest read_fleet_manifest(const std::string& dir, bool* found = nullptr);

/// Writes DIR/fleet.json (a temporary file renamed over it). Throws sb::EnvironmentError.
void write_fleet_manifest(const std::string& dir, const FleetManifest& manifest);

/// Adds `elements` to `manifest`, replacing entries of the same element.
void add_elements(FleetManifest& manifest, const std::vector<FleetElement>& elements);

/// The command that submits `nodes` (pinned, --fleet-nodes) and array elements `indices`
/// (--fleet-elements) of the sweep in `dir` again with the manifest's options, every word
/// quoted for a POSIX shell where it needs it; "" when both are empty.
[[nodiscard]] std::string resubmit_command(const FleetManifest& manifest, const std::string& dir,
                                           const std::vector<std::string>& nodes,
                                           const std::vector<int>& indices);

/// `word` as a shell reads it: bare when it holds only [A-Za-z0-9_./%+,=@:-], else quoted.
[[nodiscard]] std::string readable_word(const std::string& word);

}  // namespace sb::batch
