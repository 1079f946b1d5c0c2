#include "recovery.hpp"

#include <map>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "console.hpp"
#include "scalebench/error.hpp"
#include "scalebench/file_identity.hpp"
#include "scalebench/report.hpp"

namespace fs = std::filesystem;

namespace sb {

Recovery recover_into(const fs::path& report, nlohmann::json& model) {
  Recovery r;
  const fs::path dir = report.parent_path().empty() ? fs::path(".") : report.parent_path();
  for (const auto& orphan : find_orphan_runs(dir)) {
    if (!writes_report(orphan.owner, report)) continue;
    const StreamRecords s = read_stream_records(orphan.folder);
    r.runs.push_back(orphan);
    if (model.is_null()) {
      if (s.start.is_null()) continue;  // the launcher died before its job started
      model = {{"attrs",
                {{"status", "running"},
                 {"start_utc", orphan.owner.started_utc},
                 {"end_utc", ""},
                 {"host", orphan.owner.host}}},
               {"system", s.start.value("system", nlohmann::json::object())},
               {"startup", s.start.value("startup", nlohmann::json::object())},
               {"cases", nlohmann::json::array()}};
    }
    auto& cases = model["cases"];
    if (!cases.is_array()) cases = nlohmann::json::array();
    std::map<std::string, std::size_t> by_id;
    for (std::size_t i = 0; i < cases.size(); ++i) by_id[cases[i].value("id", "")] = i;
    for (const auto& c : s.cases) {
      const auto it = by_id.find(c.value("id", ""));
      if (it == by_id.end()) {
        by_id[c.value("id", "")] = cases.size();
        cases.push_back(c);
      } else if (cases[it->second].value("status", "") != "ok") {
        cases[it->second] = c;
      } else {
        continue;
      }
      ++r.cases;
    }
    if (s.last_utc > r.last_utc) r.last_utc = s.last_utc;
  }
  if (!model.is_null() && !r.runs.empty()) {
    auto& attrs = model["attrs"];
    const std::string status = attrs.value("status", "");
    if (status == "running") {
      const auto& o = r.runs.front().owner;
      attrs["status"] = fmt::format("interrupted: its launcher (pid {} on {}) was killed", o.pid,
                                    o.host.empty() ? "?" : o.host);
      if (!r.last_utc.empty()) attrs["end_utc"] = r.last_utc;
    } else if (status.rfind(kUnsavedStatus, 0) == 0) {
      attrs["status"] = fmt::format(
          "{}; `scalebench recover` put the cases its work folder kept into it", kUnsavedStatus);
      if (!r.last_utc.empty()) attrs["end_utc"] = r.last_utc;
    }
    // The case index is the position in the report.
    auto& cases = model["cases"];
    for (std::size_t i = 0; i < cases.size(); ++i) cases[i]["index"] = static_cast<int>(i);
  }
  return r;
}

void remove_recovered(const fs::path& report, const Recovery& r) {
  std::error_code ec;
  for (const auto& run : r.runs) fs::remove_all(run.folder, ec);
  (void)remove_stale_temp_files(report);
}

namespace {

/// Removes the work folders in `dir` of killed runs that hold nothing to recover (no start
/// record, no case: a launcher killed before its job started, even before its owner file was
/// whole), whichever report they were for. Returns how many.
int remove_empty_orphans(const fs::path& dir) {
  int removed = 0;
  for (const auto& o : find_orphan_runs(dir)) {
    const StreamRecords s = read_stream_records(o.folder);
    if (!s.start.is_null() || !s.cases.empty()) continue;
    std::error_code ec;
    if (fs::remove_all(o.folder, ec) > 0) ++removed;
  }
  return removed;
}

}  // namespace

void add_recover_command(CLI::App& app, int& exit_code) {
  auto file = std::make_shared<std::string>();
  CLI::App* sub = app.add_subcommand(
      "recover",
      "Fold the cases that a killed `scalebench run` finished into its report (the work folder "
      "it left beside the report is then removed)");
  sub->add_option("report", *file, "the report the killed run was writing (.h5)")->required();
  sub->callback([file, &exit_code] {
    // The file, however named (./r.h5, a link, a symlinked folder): owner files record it so.
    const fs::path report = canonical_file_path(*file);
    std::error_code ec;
    nlohmann::json model;
    if (fs::exists(report, ec)) model = results::read_report_isolated(report.string());
    const Recovery r = recover_into(report, model);
    // What killed launchers left that holds nothing goes too (docs/reliability.md).
    (void)remove_empty_orphans(report.parent_path());
    if (r.runs.empty()) {
      sayf(stdout, "scalebench: nothing to recover for {} (no work folder of a killed run)\n",
           one_line(report.string()));
      (void)remove_stale_temp_files(report);
      exit_code = kExitOk;
      return;
    }
    if (model.is_null()) {
      // Killed before its job had started (no start record, no case): nothing was measured.
      remove_recovered(report, r);
      sayf(stdout,
           "scalebench: nothing to recover for {}: {} killed run(s) of it ended before their "
           "job started (no case finished); their work folder(s) are removed\n",
           one_line(report.string()), r.runs.size());
      exit_code = kExitOk;
      return;
    }
    results::write_report(model, report.string());
    remove_recovered(report, r);
    const nlohmann::json& cases = model["cases"];
    int ok = 0;
    for (const auto& c : cases) ok += c.is_object() && c.value("status", "") == "ok" ? 1 : 0;
    sayf(stdout,
         "scalebench: recovered {} case(s) from {} killed run(s) into {}: it now holds {} "
         "case(s), {} ok\n",
         r.cases, r.runs.size(), one_line(report.string()),
         model.value("cases", nlohmann::json::array()).size(), ok);
    if (!model.is_null()) {
      const auto never = results::never_run_cases(model);
      if (!never.empty())
        sayf(stdout, "scalebench: {} of its {} planned case(s) never ran\n", never.size(),
             model["plan"].size());
      for (const auto& next : results::next_commands(model, report.string()))
        if (next.find(" --resume ") != std::string::npos)  // not `recover`: that is done
          sayf(stdout, "scalebench: to run the cases still missing: {}\n", one_line(next));
    }
    exit_code = kExitOk;
  });
}

}  // namespace sb
