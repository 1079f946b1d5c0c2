/// The run's plan in its report (/plan): the cases a killed or stopped run never got to, and
/// the commands that finish it.

#include <set>
#include <sstream>

#include <fmt/format.h>

#include "report_layout.hpp"
#include "scalebench/report.hpp"
#include "summary_util.hpp"

namespace sb::results {

using detail::str;
using detail::sub;

std::vector<std::string> never_run_cases(const nlohmann::json& model) {
  std::vector<std::string> out;
  const nlohmann::json& plan = sub(model, layout::kPlan);
  if (!plan.is_array()) return out;
  std::set<std::string> seen;
  const nlohmann::json& cases = sub(model, "cases");
  for (const auto& c : cases.is_array() ? cases : nlohmann::json::array()) {
    seen.insert(str(c, "id"));
    if (const std::string p = str(c, "planned_id"); !p.empty()) seen.insert(p);
  }
  for (const auto& p : plan)
    if (const std::string id = str(p, "id"); !id.empty() && seen.count(id) == 0) out.push_back(id);
  return out;
}

namespace {

/// `word` quoted for a POSIX shell when it needs it.
std::string shell_word(const std::string& w) {
  if (!w.empty() && w.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                        "0123456789_./%+,=@:-") == std::string::npos)
    return w;
  std::string out = "'";
  for (const char c : w) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// The program as the run was started (build/launcher/scalebench, an installed one): the first
/// word of the `command_line` attribute; "scalebench" without one.
std::string program_of(const std::string& command_line) {
  std::istringstream in(command_line);
  std::string w;
  return in >> w ? shell_word(w) : std::string("scalebench");
}

/// The run's command line (the `command_line` attribute: its words joined by spaces) without
/// --out and --resume, then `--resume FILE`.
std::string resume_line(const std::string& command_line, const std::string& file) {
  std::istringstream in(command_line);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w == "--out" || w == "--resume") {
      ++i;
      continue;
    }
    if (w.rfind("--out=", 0) == 0 || w.rfind("--resume=", 0) == 0) continue;
    out += (out.empty() ? "" : " ") + (i == 0 ? program_of(command_line) : shell_word(w));
  }
  return out + " --resume " + shell_word(file);
}

}  // namespace

std::vector<std::string> next_commands(const nlohmann::json& model, const std::string& file) {
  std::vector<std::string> out;
  const nlohmann::json& attrs = sub(model, "attrs");
  const std::string status = str(attrs, "status");
  const std::string name = file.empty() ? std::string("REPORT.h5") : file;
  const std::string cl = str(attrs, "command_line");
  if (status == "running")
    out.push_back(fmt::format("{} recover {}", program_of(cl), shell_word(name)));
  bool unfinished = !never_run_cases(model).empty();
  const nlohmann::json& cases = sub(model, "cases");
  for (const auto& c : cases.is_array() ? cases : nlohmann::json::array()) {
    const std::string st = str(c, "status");
    unfinished = unfinished || st == "failed" || st == "timeout" ||
                 (st == "skipped" && str(c, "message").rfind("not run:", 0) == 0);
  }
  if (unfinished || status == "running") {
    out.push_back(
        cl.empty() ? fmt::format("scalebench run <the same options> --resume {}", shell_word(name))
                   : resume_line(cl, name));
  }
  return out;
}

}  // namespace sb::results
