/// What needs a reader's attention, for the table, Markdown and HTML formats: the summary's
/// notes grouped by what they say, and the "problems": cases that did not finish ok, grouped by
/// status and message ("10 GPU cases skipped: <reason>"), each group with what to do about it,
/// then one line per failed check; apart from them, the cases that cannot run on this machine by
/// their nature (comms with one worker), which are no problem.

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "format_util.hpp"
#include "formats.hpp"
#include "scalebench/report.hpp"
#include "summary_util.hpp"

namespace sb::results::detail {
namespace {

struct Group {
  std::string status, message;
  std::vector<const json*> cases;
};

/// What a user can do about a group of cases with this status.
std::string hint(const Group& g, bool all_gpu) {
  if (g.status == "skipped" && all_gpu)
    return g.cases.size() == 1 ? "--paths cpu1,cpuN leaves it out"
                               : "--paths cpu1,cpuN leaves them out";
  if (g.status == "timeout")
    return "--case-timeout S gives more time; --resume FILE re-runs only these";
  if (g.status == "failed") return "--resume FILE re-runs only the failed cases";
  return {};
}

bool all_on(const Group& g, const char* device) {
  return std::all_of(g.cases.begin(), g.cases.end(),
                     [&](const json* c) { return case_device(*c) == device; });
}

/// "svd/single-gpu/...", or "3 GPU cases", "2 CPU cases", "5 cases".
std::string group_subject(const Group& g) {
  if (g.cases.size() == 1) return case_label(*g.cases.front());
  return fmt::format("{} {}cases", g.cases.size(),
                     all_on(g, "gpu")   ? "GPU "
                     : all_on(g, "cpu") ? "CPU "
                                        : "");
}

std::string group_line(const Group& g) {
  const bool all_gpu = all_on(g, "gpu");
  std::string line =
      g.cases.size() == 1 ? group_subject(g) + ": " + g.status : group_subject(g) + " " + g.status;
  if (!g.message.empty()) line += ": " + g.message;
  if (g.cases.size() > 1 && g.status != "skipped") {
    // which ones (a skip's reason says enough; the table lists them)
    std::string ids;
    for (std::size_t i = 0; i < g.cases.size() && i < 5; ++i)
      ids += (i ? ", " : "") + case_label(*g.cases[i]);
    if (g.cases.size() > 5) ids += fmt::format(" and {} more", g.cases.size() - 5);
    line += " (" + ids + ")";
  }
  const std::string h = hint(g, all_gpu);
  if (!h.empty()) line += "; " + h;
  return line;
}

}  // namespace

std::vector<std::string> not_run_here_lines(const json& model) {
  std::vector<std::string> out;
  const json& cases = sub(model, "cases");
  if (!cases.is_array()) return out;
  std::vector<Group> groups;
  for (const auto& c : cases) {
    if (!c.value("not_applicable", false)) continue;
    const std::string msg = str(c, "message");
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const Group& g) { return g.message == msg; });
    if (it == groups.end()) it = groups.insert(groups.end(), Group{"not run", msg, {}});
    it->cases.push_back(&c);
  }
  for (const auto& g : groups) out.push_back(group_subject(g) + ": " + g.message);
  return out;
}

std::vector<std::string> never_run_lines(const json& model) {
  const std::vector<std::string> never = never_run_cases(model);
  if (never.empty()) return {};
  std::string ids;
  for (std::size_t i = 0; i < never.size() && i < 5; ++i) ids += (i ? ", " : "") + never[i];
  if (never.size() > 5) ids += fmt::format(" and {} more", never.size() - 5);
  const std::string status = str(sub(model, "attrs"), "status");
  return {fmt::format(
      "{} of {} planned case(s) never ran ({}): {}", never.size(), sub(model, "plan").size(),
      status == "running" ? "the run was killed, or is still running" : "the run ended before them",
      ids)};
}

std::vector<std::string> next_lines(const json& model) {
  return next_commands(model, str(model, "file"));
}

std::vector<std::string> problem_lines(const json& model) {
  std::vector<std::string> out;
  const json& cases = sub(model, "cases");
  if (!cases.is_array()) return out;
  std::vector<Group> groups;
  for (const auto& c : cases) {
    const std::string status = str(c, "status", "unknown");
    if (status == "ok") continue;
    if (c.value("not_applicable", false)) continue;  // not_run_here_lines
    const std::string msg = str(c, "message");
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const Group& g) { return g.status == status && g.message == msg; });
    if (it == groups.end()) it = groups.insert(groups.end(), Group{status, msg, {}});
    it->cases.push_back(&c);
  }
  for (const auto& g : groups) out.push_back(group_line(g));
  // Cases that ran after a node of the allocation was lost ran on the nodes left.
  std::map<std::string, int> fewer;  // lost nodes -> cases
  for (const auto& c : cases) {
    const json& lost = sub(c, "nodes_lost");
    if (!lost.is_array() || lost.empty()) continue;
    std::string names;
    for (const auto& n : lost)
      names += (names.empty() ? "" : ", ") + (n.is_string() ? n.get<std::string>() : n.dump());
    ++fewer[names];
  }
  for (const auto& [names, n] : fewer)
    out.push_back(
        fmt::format("{} case(s) ran on fewer nodes: {} lost earlier in the run", n, names));
  for (const auto& c : cases) {
    const json& v = sub(c, "validation");
    if (!v.is_array()) continue;
    for (const auto& e : v) {
      if (!e.is_object() || !e.contains("pass") || !e["pass"].is_boolean() || e["pass"].get<bool>())
        continue;
      auto number = [](double x) { return std::isnan(x) ? std::string("-") : plain_number(x); };
      out.push_back(fmt::format("{}: check {} failed: value {}, limit {}{}", case_label(c),
                                str(e, "name"), number(num(e, "value")), number(num(e, "limit")),
                                str(e, "detail").empty() ? "" : " (" + str(e, "detail") + ")"));
    }
  }
  return out;
}

std::vector<NoteGroup> note_groups(const json& summary, const std::vector<std::string>& labels) {
  std::vector<NoteGroup> out;
  for (std::size_t i = 0; i < summary.size(); ++i) {
    const std::string label = i < labels.size() ? labels[i] : str(summary[i], "case");
    for (const auto& n : split_notes(str(summary[i], "notes"))) {
      const NoteParts p = split_note(n);
      auto it = std::find_if(out.begin(), out.end(), [&](const NoteGroup& g) {
        return g.head == p.head && g.why == p.why;
      });
      if (it == out.end()) it = out.insert(out.end(), NoteGroup{p.head, p.why, {}});
      it->cases.push_back(p.figure.empty() ? label : label + " (" + p.figure + ")");
    }
  }
  return out;
}

}  // namespace sb::results::detail
