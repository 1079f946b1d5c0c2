#include "cli_reference.hpp"

#include <algorithm>
#include <map>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "case_plan.hpp"
#include "console.hpp"
#include "scalebench/error.hpp"
#include "scalebench/history.hpp"
#include "scalebench/report.hpp"
#include "scalebench/workload.hpp"

namespace sb {
namespace {

constexpr std::size_t kNameColumn = 30;

/// `text` word-wrapped to `width` columns, lines joined with '\n' (CLI11 indents them).
std::string wrap(const std::string& text, std::size_t width) {
  std::string out;
  std::istringstream paragraphs(text);
  std::string para;
  bool first_para = true;
  while (std::getline(paragraphs, para)) {
    if (!first_para) out += '\n';
    first_para = false;
    std::string line;
    std::istringstream words(para);
    for (std::string w; words >> w;) {
      if (!line.empty() && line.size() + 1 + w.size() > width) {
        out += line + '\n';
        line.clear();
      }
      line += (line.empty() ? "" : " ") + w;
    }
    out += line;
  }
  return out;
}

/// The visible subcommands of `app` (CLI11 hides those of the empty group).
std::vector<const CLI::App*> visible_subcommands(const CLI::App& app) {
  return app.get_subcommands(
      [](const CLI::App* a) { return !a->get_name().empty() && !a->get_group().empty(); });
}

std::vector<const CLI::Option*> named_options(const CLI::App& app) {
  return app.get_options(
      [](const CLI::Option* o) { return !o->get_positional() && !o->get_group().empty(); });
}

std::vector<const CLI::Option*> positionals(const CLI::App& app) {
  return app.get_options([](const CLI::Option* o) { return o->get_positional(); });
}

bool takes_value(const CLI::Option* o) {
  return o->get_type_size_max() > 0 && o->get_items_expected_max() > 0;
}

std::vector<std::string> long_names(const CLI::Option* o) {
  std::vector<std::string> out;
  for (const auto& l : o->get_lnames()) out.push_back("--" + l);
  for (const auto& s : o->get_snames()) out.push_back("-" + s);
  return out;
}

/// Every command path ("", "run", "history show") with its App, depth first.
void walk(const CLI::App& app, const std::string& path,
          std::vector<std::pair<std::string, const CLI::App*>>& out) {
  out.emplace_back(path, &app);
  for (const CLI::App* s : visible_subcommands(app))
    walk(*s, path.empty() ? s->get_name() : path + " " + s->get_name(), out);
}

std::string joined(const std::vector<std::string>& v, const char* sep = " ") {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

/// The words an option's value is one of (completion), empty when it is free.
std::vector<std::string> option_values(const std::string& path, const std::string& option) {
  if (option == "--preset") return preset_names();
  if (option == "--paths")
    return {"single-cpu", "multi-cpu", "single-gpu", "multi-gpu", "each-gpu",
            "each-node",  "cpu1",      "cpuN",       "gpu1",      "gpuN"};
  if (option == "--workloads") {
    std::vector<std::string> out;
    for (const auto& w : workloads()) out.push_back(w.name);
    return out;
  }
  if (option == "--repeats") return {"auto"};
  if (option == "--scheduler") return {"slurm", "pbs", "lsf", "sge"};
  if (option == "--on-noisy") return {"pass", "warn", "fail"};
  if (option == "--format") {
    if (path == "report") return results::report_formats();
    if (path == "compare") return {"table", "markdown", "junit", "json"};
    if (path.rfind("history", 0) == 0) return results::history_formats();
    if (path == "info") return {"table", "json"};
  }
  return {};
}

/// Options whose value is a file or folder.
bool file_option(const std::string& option) {
  static const std::vector<std::string> files{"--out",    "--suite",  "--resume", "--references",
                                              "--plugin", "--output", "--dir"};
  return std::find(files.begin(), files.end(), option) != files.end();
}

/// man(7) text: backslashes, leading dots and quotes, and hyphens escaped.
std::string roff(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out = "\\&" + out;
  return out;
}

/// Text for the C string of a shell word list or a zsh description.
std::string zsh_describe(const std::string& name, const std::string& help) {
  std::string h;
  for (const char c : help) {
    if (c == ':')
      h += "\\:";
    else if (c == '\'')
      h += "'\\''";
    else if (c == '\n')
      h += ' ';
    else
      h += c;
  }
  if (h.size() > 80) h = h.substr(0, 77) + "...";
  return "'" + name + ":" + h + "'";
}

}  // namespace

HelpFormatter::HelpFormatter() {
  column_width(kNameColumn);
}

std::string HelpFormatter::make_option(const CLI::Option* opt, bool is_positional) const {
  std::stringstream out;
  const std::string desc = make_option_desc(opt);
  CLI::detail::format_help(out, make_option_name(opt, is_positional) + make_option_opts(opt),
                           wrap(desc, kHelpColumns - kNameColumn), kNameColumn);
  return out.str();
}

std::string HelpFormatter::make_subcommand(const CLI::App* sub) const {
  std::stringstream out;
  CLI::detail::format_help(out, sub->get_display_name(),
                           wrap(sub->get_description(), kHelpColumns - kNameColumn), kNameColumn);
  return out.str();
}

std::string HelpFormatter::make_description(const CLI::App* app) const {
  const std::string d = app->get_description();
  return d.empty() ? std::string() : wrap(d, kHelpColumns) + "\n";
}

std::string HelpFormatter::make_footer(const CLI::App* app) const {
  const std::string f = app->get_footer();
  return f.empty() ? std::string() : wrap(f, kHelpColumns) + "\n";
}

std::string man_page(const CLI::App& app, const std::string& version) {
  std::vector<std::pair<std::string, const CLI::App*>> all;
  walk(app, "", all);
  std::string out;
  out += fmt::format(".TH SCALEBENCH 1 \"\" \"{}\" \"User Commands\"\n", roff(version));
  out += ".SH NAME\nscalebench \\- " +
         roff(app.get_description().substr(app.get_description().find(": ") == std::string::npos
                                               ? 0
                                               : app.get_description().find(": ") + 2)) +
         "\n";
  out += ".SH SYNOPSIS\n.B scalebench\n\\fICOMMAND\\fR [\\fIOPTIONS\\fR]\n";
  out += ".SH DESCRIPTION\n" + roff(app.get_description()) + "\n";
  out += ".SH COMMANDS\n";
  for (const auto& [path, sub] : all) {
    if (path.empty()) continue;
    std::string usage = "scalebench " + path;
    for (const CLI::Option* p : positionals(*sub))
      usage += " " + std::string(p->get_required() ? "" : "[") + p->get_name() +
               (p->get_items_expected_max() > 1 ? "..." : "") + (p->get_required() ? "" : "]");
    if (!named_options(*sub).empty()) usage += " [OPTIONS]";
    if (!visible_subcommands(*sub).empty()) usage += " COMMAND";
    out += ".SS \"" + roff(usage) + "\"\n" + roff(sub->get_description()) + "\n";
    for (const CLI::Option* p : positionals(*sub))
      out += ".TP\n\\fI" + roff(p->get_name()) + "\\fR\n" + roff(p->get_description()) + "\n";
    for (const CLI::Option* o : named_options(*sub)) {
      std::string names;
      for (const auto& n : long_names(o))
        names += (names.empty() ? "" : ", ") + ("\\fB" + roff(n) + "\\fR");
      if (takes_value(o)) names += " \\fI" + roff(o->get_type_name()) + "\\fR";
      out += ".TP\n" + names + "\n" + roff(o->get_description()) + "\n";
    }
    const std::string footer = sub->get_footer();
    if (!footer.empty()) out += ".PP\n" + roff(footer) + "\n";
  }
  out +=
      ".SH EXIT STATUS\n"
      "0 success; 1 a case failed or the gate found a regression; 2 bad usage or input; 3 the "
      "environment (no MPI, no GPU with \\-\\-require\\-gpu, a report that cannot be written); "
      "4 compare incomplete; 5 compare inconclusive; 128+n stopped by signal n.\n";
  out +=
      ".SH FILES\n"
      ".TP\n\\fIscalebench\\-reports/\\fR\nthe default folder of reports, with \\fIlatest.h5\\fR\n"
      ".TP\n\\fI<prefix>/share/doc/scalebench/\\fR\nthe documentation the help texts name as "
      "docs/*.md (README.md and docs/)\n";
  out += ".SH SEE ALSO\n\\fBmpiexec\\fR(1), \\fBsbatch\\fR(1), \\fBqsub\\fR(1), \\fBbsub\\fR(1)\n";
  return out;
}

std::string bash_completion(const CLI::App& app) {
  std::vector<std::pair<std::string, const CLI::App*>> all;
  walk(app, "", all);
  std::string descend;
  for (const auto& [path, sub] : all)
    for (const CLI::App* s : visible_subcommands(*sub))
      descend += fmt::format("      \"{}:{}\") cmd=\"{}\" ;;\n", path, s->get_name(),
                             path.empty() ? s->get_name() : path + " " + s->get_name());
  std::string cases;
  for (const auto& [path, sub] : all) {
    std::vector<std::string> opts, subs, value_opts, file_opts;
    for (const CLI::Option* o : named_options(*sub))
      for (const auto& n : long_names(o)) {
        opts.push_back(n);
        if (takes_value(o)) (file_option(n) ? file_opts : value_opts).push_back(n);
      }
    for (const CLI::App* s : visible_subcommands(*sub)) subs.push_back(s->get_name());
    std::string prev_cases;
    for (const auto& n : value_opts) {
      const auto v = option_values(path, n);
      prev_cases += v.empty() ? fmt::format("        {}) return ;;\n", n)
                              : fmt::format("        {}) values=\"{}\" ;;\n", n, joined(v));
    }
    if (!file_opts.empty())
      prev_cases += fmt::format("        {}) files=1 ;;\n", joined(file_opts, "|"));
    if (path == "completion") subs = {"bash", "zsh", "man"};
    cases += fmt::format("    \"{}\")\n      opts=\"{}\"\n      subs=\"{}\"\n", path, joined(opts),
                         joined(subs));
    if (!prev_cases.empty()) cases += "      case \"$prev\" in\n" + prev_cases + "      esac\n";
    cases += "      ;;\n";
  }
  return "# bash completion for scalebench: generated from its option definitions by\n"
         "# `scalebench completion bash` (installed by cmake --install).\n"
         "_scalebench() {\n"
         "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
         "  local cmd=\"\" i w opts=\"\" subs=\"\" values=\"\" files=0\n"
         "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
         "    w=${COMP_WORDS[i]}\n"
         "    # submit passes the words after -- to `scalebench run`\n"
         "    if [[ $w == -- && $cmd == submit ]]; then cmd=run; continue; fi\n"
         "    case \"$cmd:$w\" in\n" +
         descend +
         "    esac\n"
         "  done\n"
         "  case \"$cmd\" in\n" +
         cases +
         "  esac\n"
         "  if [[ $files == 1 ]]; then\n"
         "    compopt -o filenames 2>/dev/null\n"
         "    mapfile -t COMPREPLY < <(compgen -f -- \"$cur\")\n"
         "  elif [[ -n $values ]]; then\n"
         "    mapfile -t COMPREPLY < <(compgen -W \"$values\" -- \"$cur\")\n"
         "  elif [[ $cur == -* ]]; then\n"
         "    mapfile -t COMPREPLY < <(compgen -W \"$opts\" -- \"$cur\")\n"
         "  elif [[ -n $subs ]]; then\n"
         "    mapfile -t COMPREPLY < <(compgen -W \"$subs\" -- \"$cur\")\n"
         "  else\n"
         "    compopt -o filenames 2>/dev/null\n"
         "    mapfile -t COMPREPLY < <(compgen -f -- \"$cur\")\n"
         "  fi\n"
         "}\n"
         "complete -F _scalebench scalebench\n";
}

std::string zsh_completion(const CLI::App& app) {
  std::vector<std::pair<std::string, const CLI::App*>> all;
  walk(app, "", all);
  std::string descend;
  for (const auto& [path, sub] : all)
    for (const CLI::App* s : visible_subcommands(*sub))
      descend += fmt::format("      '{}:{}') cmd='{}' ;;\n", path, s->get_name(),
                             path.empty() ? s->get_name() : path + " " + s->get_name());
  std::string cases;
  for (const auto& [path, sub] : all) {
    std::vector<std::string> opts, subs;
    std::string prev_cases;
    std::vector<std::string> file_opts;
    for (const CLI::Option* o : named_options(*sub))
      for (const auto& n : long_names(o)) {
        opts.push_back(zsh_describe(n, o->get_description()));
        if (!takes_value(o)) continue;
        if (file_option(n)) {
          file_opts.push_back(n);
          continue;
        }
        const auto v = option_values(path, n);
        prev_cases += v.empty() ? fmt::format("        {}) return ;;\n", n)
                                : fmt::format("        {}) values=({}) ;;\n", n, joined(v));
      }
    if (!file_opts.empty())
      prev_cases += fmt::format("        {}) files=1 ;;\n", joined(file_opts, "|"));
    for (const CLI::App* s : visible_subcommands(*sub))
      subs.push_back(zsh_describe(s->get_name(), s->get_description()));
    if (path == "completion") subs = {"bash", "zsh", "man"};
    cases += fmt::format("    '{}')\n      opts=(\n        {}\n      )\n      subs=({})\n", path,
                         joined(opts, "\n        "), joined(subs, " "));
    if (!prev_cases.empty()) cases += "      case $prev in\n" + prev_cases + "      esac\n";
    cases += "      ;;\n";
  }
  return "#compdef scalebench\n"
         "# zsh completion for scalebench: generated from its option definitions by\n"
         "# `scalebench completion zsh` (installed by cmake --install).\n"
         "_scalebench() {\n"
         "  local cmd='' w i cur=${words[CURRENT]} prev=${words[CURRENT-1]} files=0\n"
         "  local -a opts subs values\n"
         "  for ((i = 2; i < CURRENT; i++)); do\n"
         "    w=${words[i]}\n"
         "    if [[ $w == -- && $cmd == submit ]]; then cmd=run; continue; fi\n"
         "    case \"$cmd:$w\" in\n" +
         descend +
         "    esac\n"
         "  done\n"
         "  case $cmd in\n" +
         cases +
         "  esac\n"
         "  if (( files )); then _files; return; fi\n"
         "  if (( ${#values} )); then compadd -a values; return; fi\n"
         "  if [[ $cur == -* ]]; then _describe 'option' opts; return; fi\n"
         "  if (( ${#subs} )); then _describe 'command' subs; return; fi\n"
         "  _files\n"
         "}\n"
         "_scalebench \"$@\"\n";
}

void add_completion_command(CLI::App& app, int& exit_code, const std::string& version) {
  auto what = std::make_shared<std::string>();
  CLI::App* sub = app.add_subcommand(
      "completion",
      "Print the bash or zsh completion script, or the man page (`cmake --install` installs all "
      "three)");
  sub->add_option("what", *what, "bash, zsh or man")->required();
  sub->footer(
      "Example: source <(scalebench completion bash), or scalebench completion man | man -l -");
  sub->callback([what, &app, &exit_code, version] {
    if (*what == "bash") {
      say(stdout, bash_completion(app));
    } else if (*what == "zsh") {
      say(stdout, zsh_completion(app));
    } else if (*what == "man") {
      say(stdout, man_page(app, version));
    } else {
      throw UsageError(fmt::format("completion '{}': use bash, zsh or man", one_line(*what)));
    }
    exit_code = kExitOk;
  });
}

}  // namespace sb
