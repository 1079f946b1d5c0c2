#include "cli_suggest.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "console.hpp"

namespace sb {
namespace {

/// Edit distance with adjacent transpositions (optimal string alignment).
std::size_t distance(const std::string& a, const std::string& b) {
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i)
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}

/// The subcommand the parse got to: the last one parsed at every level.
const CLI::App* deepest(const CLI::App& app) {
  const CLI::App* at = &app;
  while (!at->get_subcommands().empty()) at = at->get_subcommands().back();
  return at;
}

std::string command_name(const CLI::App* at, const std::string& program) {
  std::vector<std::string> names;
  for (const CLI::App* a = at; a != nullptr && a->get_parent() != nullptr; a = a->get_parent())
    names.push_back(a->get_name());
  std::string out = program;
  for (auto it = names.rbegin(); it != names.rend(); ++it) out += " " + *it;
  return out;
}

std::vector<std::string> option_names(const CLI::App* at) {
  std::vector<std::string> out;
  for (const CLI::Option* o : at->get_options()) {
    for (const auto& l : o->get_lnames()) out.push_back("--" + l);
    for (const auto& s : o->get_snames()) out.push_back("-" + s);
  }
  return out;
}

std::vector<std::string> subcommand_names(const CLI::App* at) {
  std::vector<std::string> out;
  for (const CLI::App* s : at->get_subcommands(
           [](const CLI::App* a) { return !a->get_name().empty() && !a->get_group().empty(); }))
    out.push_back(s->get_name());
  return out;
}

}  // namespace

std::string nearest_name(const std::string& word, const std::vector<std::string>& names) {
  if (word.empty()) return {};
  // A unique name that starts with the word ("--pres" for "--preset").
  std::string prefixed;
  int starts = 0;
  for (const auto& n : names)
    if (n.size() > word.size() && n.rfind(word, 0) == 0 &&
        word.find_first_not_of('-') != std::string::npos) {
      prefixed = n;
      ++starts;
    }
  std::string best;
  std::size_t best_d = std::string::npos;
  const std::size_t bare = word.size() - std::min(word.size(), word.find_first_not_of('-'));
  const std::size_t limit = std::min<std::size_t>(3, std::max<std::size_t>(1, bare / 3));
  for (const auto& n : names) {
    const std::size_t d = distance(word, n);
    if (d <= limit && d < best_d) {
      best = n;
      best_d = d;
    }
  }
  if (!best.empty()) return best;
  return starts == 1 ? prefixed : std::string();
}

std::string explain_parse_error(const CLI::App& app, const CLI::ParseError& error,
                                const std::string& program) {
  const CLI::App* at = deepest(app);
  const std::string here = command_name(at, program);
  const std::string see = fmt::format("(see {} --help)", here);
  std::vector<std::string> left = app.remaining(true);
  // The first word that is not an option, where a subcommand is wanted and none was given.
  const std::vector<std::string> subs = subcommand_names(at);
  if (!subs.empty() && at->get_subcommands().empty()) {
    for (const auto& w : left) {
      if (w.empty() || w[0] == '-') continue;
      const std::string near = nearest_name(w, subs);
      return fmt::format("unknown subcommand '{}' of {}{} {}", one_line(w), here,
                         near.empty() ? "" : fmt::format("; did you mean `{} {}`?", here, near),
                         see);
    }
  }
  std::vector<std::string> unknown;
  for (const auto& w : left)
    if (w.size() > 1 && w[0] == '-' && w != "--") unknown.push_back(w.substr(0, w.find('=')));
  if (!unknown.empty()) {
    const std::vector<std::string> names = option_names(at);
    std::string line = fmt::format("unknown option{} ", unknown.size() > 1 ? "s" : "");
    for (std::size_t i = 0; i < unknown.size(); ++i) {
      const std::string near = nearest_name(unknown[i], names);
      line += (i ? ", " : "") + one_line(unknown[i]) +
              (near.empty() ? "" : fmt::format(" (did you mean {}?)", near));
    }
    return fmt::format("{} for {} {}", line, here, see);
  }
  return fmt::format("{} {}", one_line(error.what()), see);
}

}  // namespace sb
