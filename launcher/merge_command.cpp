// `scalebench report merge` (merge_command.hpp).
#include "merge_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "batch/fleet_folder.hpp"
#include "console.hpp"
#include "reference_files.hpp"
#include "scalebench/error.hpp"
#include "scalebench/fleet.hpp"
#include "scalebench/merge.hpp"
#include "scalebench/report.hpp"
#include "scalebench/scaling.hpp"
#include "scalebench/verdicts.hpp"

namespace fs = std::filesystem;

namespace sb {
namespace {

using json = nlohmann::json;

/// A report to read and where it came from.
struct Input {
  std::string path;
  int folder = -1;       ///< index into the fleet folders; -1: not a fleet element
  std::string element;   ///< its fleet element
  bool scanned = false;  ///< found in a folder (merged reports there are left out)
};

struct FleetFolder {
  std::string dir;
  batch::FleetManifest manifest;
  std::vector<results::MissingElement> missing;
};

bool schema_error(const std::string& msg) {
  return msg.find("schema version") != std::string::npos;
}

}  // namespace

nlohmann::json merge_into(const MergeRequest& req, std::string* out_path) {
  if (req.inputs.empty()) throw UsageError("report merge: give reports or folders of reports");
  std::vector<Input> inputs;
  std::vector<FleetFolder> fleets;
  std::string out = req.out;
  std::size_t folders = 0;
  for (const auto& in : req.inputs) {
    std::error_code ec;
    if (fs::is_directory(in, ec)) {
      ++folders;
      if (out.empty() && req.inputs.size() == 1) out = (fs::path(in) / "merged.h5").string();
      bool found = false;
      batch::FleetManifest m = batch::read_fleet_manifest(in, &found);
      if (found) {
        FleetFolder f{in, std::move(m), {}};
        for (const auto& e : f.manifest.elements) {
          const fs::path report = fs::path(in) / (e.element + ".h5");
          if (fs::is_regular_file(report, ec)) {
            inputs.push_back({report.string(), static_cast<int>(fleets.size()), e.element, true});
          } else {
            f.missing.push_back(
                {e.element, e.node, e.job_id,
                 "no report in " + in + " (the job never ran, or was killed before it wrote one)"});
          }
        }
        fleets.push_back(std::move(f));
        continue;
      }
      std::vector<std::string> files;
      for (const auto& entry : fs::directory_iterator(in, ec)) {
        if (entry.path().extension() != ".h5" || fs::is_symlink(entry.symlink_status())) continue;
        if (!entry.is_regular_file()) continue;
        files.push_back(entry.path().string());
      }
      std::sort(files.begin(), files.end());
      for (auto& f : files) inputs.push_back({f, -1, "", true});
    } else if (fs::exists(in, ec)) {
      inputs.push_back({in, -1, "", false});
    } else {
      throw UsageError(
          fmt::format("report merge: {} is neither a report nor a folder", one_line(in)));
    }
  }
  if (out.empty())
    throw UsageError(folders == 1 ? "report merge: give --out FILE for the merged report"
                                  : "report merge: give --out FILE for the merged report (of "
                                    "several inputs)");
  const fs::path out_abs = fs::weakly_canonical(fs::absolute(out));
  std::erase_if(inputs, [&](const Input& i) {
    std::error_code ec;
    return fs::weakly_canonical(fs::absolute(i.path), ec) == out_abs;
  });
  if (inputs.empty() && fleets.empty())
    throw UsageError("report merge: no report found in " + one_line(req.inputs.front()));

  results::MergeOptions options;
  options.keep_series = req.keep_series;
  options.command_line = req.command_line;
  results::ReportMerger merger(options);
  std::vector<std::string> paths;
  for (const auto& i : inputs) paths.push_back(i.path);
  std::vector<int> source_folder;  // fleet folder of each source (-1: none)
  const std::size_t jobs = std::clamp<long>(sysconf(_SC_NPROCESSORS_ONLN), 1, 4);
  results::read_reports_isolated(
      paths, !req.keep_series, static_cast<std::size_t>(jobs),
      [&](std::size_t i, json&& model) {
        // A folder's earlier merged report is made of the others: left out.
        if (inputs[i].scanned && model.contains("sources")) return;
        const std::size_t before = merger.size();
        merger.add(inputs[i].path, std::move(model));
        source_folder.resize(merger.size(), -1);
        for (std::size_t s = before; s < merger.size(); ++s) source_folder[s] = inputs[i].folder;
      },
      [&](std::size_t i, const std::string& msg) {
        if (inputs[i].folder < 0 || schema_error(msg))
          throw UsageError(schema_error(msg) ? "cannot merge: " + one_line(msg) : one_line(msg));
        FleetFolder& f = fleets[static_cast<std::size_t>(inputs[i].folder)];
        const auto it = std::find_if(
            f.manifest.elements.begin(), f.manifest.elements.end(),
            [&](const batch::FleetElement& e) { return e.element == inputs[i].element; });
        const batch::FleetElement e = it != f.manifest.elements.end() ? *it : batch::FleetElement{};
        f.missing.push_back(
            {inputs[i].element, e.node, e.job_id, "report unreadable: " + one_line(msg)});
      });

  results::MergeFleet fleet;
  std::vector<std::string> duplicates;
  if (!fleets.empty()) {
    duplicates = merger.keep_newest_per_host();
    for (const auto& f : fleets) {
      fleet.elements += f.manifest.elements.size();
      fleet.missing.insert(fleet.missing.end(), f.missing.begin(), f.missing.end());
    }
    fleet.duplicates = duplicates;
  }
  json model = merger.finish(load_references(req.references), fleets.empty() ? nullptr : &fleet);

  if (!fleets.empty()) {
    // The command that runs the nodes not ok and the missing elements again, per folder.
    std::vector<std::set<std::string>> nodes(fleets.size());
    std::vector<std::set<int>> indices(fleets.size());
    std::map<std::string, int> folder_of_host;
    const std::size_t n_sources = model["sources"].size();
    for (std::size_t s = 0; s < n_sources && s < source_folder.size(); ++s) {
      const json& row = model["sources"][s];
      if (source_folder[s] < 0 || row.value("superseded", false)) continue;
      const std::string host = row.value("host", "");
      folder_of_host[host] = source_folder[s];
      if (row.value("status", "ok") != "ok")
        nodes[static_cast<std::size_t>(source_folder[s])].insert(host);
    }
    for (const auto& r : results::fleet_nodes(model)) {
      if (r.value("status", "") != "not ok") continue;
      const auto it = folder_of_host.find(r.value("host", ""));
      if (it != folder_of_host.end()) nodes[static_cast<std::size_t>(it->second)].insert(it->first);
    }
    for (std::size_t k = 0; k < fleets.size(); ++k)
      for (const auto& m : fleets[k].missing) {
        if (!m.node.empty()) {
          nodes[k].insert(m.node);
        } else if (const int idx = batch::array_element_index(m.element); idx >= 0) {
          indices[k].insert(idx);
        }
      }
    std::string cmd;
    for (std::size_t k = 0; k < fleets.size(); ++k) {
      const std::string one = batch::resubmit_command(
          fleets[k].manifest, fs::absolute(fleets[k].dir).lexically_normal().string(),
          {nodes[k].begin(), nodes[k].end()}, {indices[k].begin(), indices[k].end()});
      if (!one.empty()) cmd += (cmd.empty() ? "" : "\n  ") + one;
    }
    model["fleet"]["resubmit"] = cmd;
  }
  results::write_report(model, out);
  if (out_path != nullptr) *out_path = out;
  return model;
}

void add_merge_command(CLI::App& report, int& exit_code, const std::vector<std::string>& argv) {
  auto o = std::make_shared<MergeRequest>();
  auto check = std::make_shared<bool>(false);
  CLI::App* sub = report.add_subcommand(
      "merge",
      "Merge reports and folders of reports (a fleet sweep's, a scaling study's) into one "
      "(docs/acceptance.md, docs/batch.md)");
  sub->add_option("inputs", o->inputs, "reports (.h5) and folders of reports")->required();
  sub->add_option("--out", o->out, "the merged report (default, for one folder: FOLDER/merged.h5)");
  sub->add_option("--references", o->references,
                  "reference file (TOML) the devices are also judged against (repeatable; "
                  "before the shipped ones)");
  sub->add_flag("--check", *check, "exit 1 when a device is not ok or a fleet element is missing");
  sub->add_flag("--keep-series", o->keep_series,
                "keep every case's task events and telemetry series (default: they stay in the "
                "source reports)");
  sub->callback([o, check, &exit_code, argv] {
    MergeRequest req = *o;
    for (const auto& a : argv) req.command_line += (req.command_line.empty() ? "" : " ") + a;
    std::string out;
    const json model = merge_into(req, &out);
    const std::size_t sources = model["sources"].size();
    const std::size_t cases = model.value("cases", json::array()).size();
    if (const std::string f = results::format_fleet_text(model); !f.empty()) {
      say(stdout, f);
    } else if (const std::string s = results::format_scaling_text(model); !s.empty()) {
      say(stdout, s);
    } else {
      const std::string v = results::format_verdicts_text(results::verdicts_of(model));
      if (!v.empty()) say(stdout, v.substr(0, v.find('\n') + 1));
    }
    sayf(stderr, "scalebench: merged {} report(s), {} case(s), into {}\n", sources, cases, out);
    const json& fleet = model.value("fleet", json::object());
    const bool missing = !fleet.value("missing", json::array()).empty();
    const bool bad = results::count_not_ok(results::verdicts_of(model)) > 0;
    exit_code = *check && (missing || bad) ? kExitFailed : kExitOk;
  });
}

}  // namespace sb
