#include "scalebench/report_cli.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include "scalebench/compare.hpp"
#include "scalebench/error.hpp"
#include "scalebench/file_identity.hpp"
#include "scalebench/history.hpp"
#include "scalebench/input_file.hpp"
#include "scalebench/printable.hpp"
#include "scalebench/references.hpp"
#include "scalebench/report.hpp"

namespace sb::results {
namespace {

/// Refuses an --out that names one of the command's input files, however spelled (a link, a
/// relative path, a hard link: file_identity.hpp): writing it would destroy the input.
void check_out_is_no_input(const std::string& out, const std::vector<std::string>& inputs) {
  if (out.empty() || out == "-") return;
  for (const auto& in : inputs)
    if (same_file(out, in))
      throw UsageError(fmt::format(
          "--out {} is the input {} itself: writing there would destroy it; choose another file",
          one_line(out), one_line(in)));
}

/// Writes `text` to `out`, or to stdout when `out` is empty or "-". A regular file (or a new
/// one) is written as a temporary then renamed, so a reader never sees half a file; a symlink
/// is followed; anything else that exists (a device such as /dev/null, a pipe) is written
/// in place and never replaced. `for_people` (table, markdown) and anything bound for a
/// terminal shows control characters escaped: a report's strings come from whoever wrote it, and
/// must not move the reader's cursor, set the window title or hide lines (printable.hpp).
void emit(std::string text, const std::string& out, bool for_people) {
  namespace fs = std::filesystem;
  const bool to_stdout = out.empty() || out == "-";
  if (for_people || (to_stdout && ::isatty(STDOUT_FILENO) != 0)) text = terminal_text(text);
  if (to_stdout) {
    std::cout << text << std::flush;
    return;
  }
  std::error_code ec;
  std::string target = out;
  if (fs::is_symlink(fs::symlink_status(out, ec))) {
    const fs::path resolved = fs::canonical(out, ec);
    if (!ec) target = resolved.string();
  }
  const fs::file_status st = fs::status(target, ec);
  if (fs::exists(st) && !fs::is_regular_file(st)) {
    if (fs::is_directory(st)) throw UsageError(fmt::format("cannot write {}: it is a folder", out));
    std::ofstream f(target, std::ios::binary);
    f << text;
    f.flush();
    if (!f) throw UsageError(fmt::format("cannot write {}: {}", out, std::strerror(errno)));
    return;
  }
  const std::string tmp = fmt::format("{}.tmp-{}", target, ::getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw UsageError(fmt::format("cannot write {}: {}", out, std::strerror(errno)));
    f << text;
    f.flush();
    if (!f) {
      std::remove(tmp.c_str());
      throw UsageError(fmt::format("cannot write {}: {}", out, std::strerror(errno)));
    }
  }
  if (std::rename(tmp.c_str(), target.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    throw UsageError(fmt::format("cannot write {}: {}", out, std::strerror(err)));
  }
}

}  // namespace

void add_report_command(CLI::App& app, int& exit_code) {
  struct Options {
    std::vector<std::string> files;
    std::string format = "table";
    std::string out;
    bool wide = false;
    bool make_references = false;
    bool per_repeat = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand("report",
                                     "Render reports (.h5) as a table, Markdown, a tidy CSV or "
                                     "JSON records table, JSON, Google Benchmark JSON, HTML or "
                                     "JUnit XML");
  sub->add_option("files", o->files,
                  "report files written by `scalebench run` (table, markdown, csv, records, "
                  "json: several, one after another)");
  sub->add_option("--format", o->format,
                  fmt::format("output format: {}", fmt::join(report_formats(), "|")))
      ->capture_default_str();
  sub->add_option("--out", o->out, "write to this file instead of standard output");
  sub->add_flag("--wide", o->wide,
                "table: every column and whole case ids, whatever the terminal's width");
  sub->add_flag("--per-repeat", o->per_repeat,
                "csv, records: one row per timed repeat instead of one per case");
  sub->add_flag("--make-references", o->make_references,
                "write a reference file (TOML, docs/acceptance.md) from one good run's device "
                "medians instead of rendering it");
  sub->callback([o, sub, &exit_code] {
    // `report merge` (launcher/merge_command.hpp) is a subcommand of its own.
    if (!sub->get_subcommands().empty()) return;
    if (o->files.empty())
      throw UsageError("report: give one report file or more (or `report merge` to merge them)");
    if (o->make_references) {
      if (o->files.size() != 1) throw UsageError("report --make-references takes one report");
      check_out_is_no_input(o->out, o->files);
      emit(make_references(read_report_isolated(o->files.front()), 0.10, o->files.front()), o->out,
           false);
      exit_code = kExitOk;
      return;
    }
    // A report named twice, or through a link (scalebench-reports/latest.h5 beside the report
    // it points at, as a shell glob gives them), is shown once.
    std::vector<std::string> files;
    std::vector<std::filesystem::path> seen;
    for (const auto& f : o->files) {
      std::error_code ec;
      const auto real = std::filesystem::weakly_canonical(f, ec);
      if (!ec && std::find(seen.begin(), seen.end(), real) != seen.end()) continue;
      seen.push_back(ec ? std::filesystem::path(f) : real);
      files.push_back(f);
    }
    check_report_request(files.size(), o->format, o->per_repeat);
    check_out_is_no_input(o->out, o->files);
    std::vector<NamedReport> reports;
    for (const auto& f : files) reports.push_back({f, read_report_isolated(f)});
    // A file (--out) keeps the full table, like a pipe; the terminal gets what fits it.
    const bool to_stdout = o->out.empty() || o->out == "-";
    const std::size_t width = o->wide || !to_stdout ? 0 : output_width(STDOUT_FILENO);
    emit(format_reports(reports, o->format, width, o->per_repeat), o->out,
         o->format == "table" || o->format == "markdown");
    exit_code = kExitOk;
  });
}

void add_compare_command(CLI::App& app, int& exit_code) {
  struct Options {
    std::string baseline;
    std::string current;
    std::string threshold = "5%";
    double alpha = 0.01;
    std::string on_noisy = "warn";
    bool allow_missing = false;
    bool strict = false;
    std::string format = "table";
    std::string out;
  };
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "compare",
      "Regression gate: compare CURRENT with BASELINE, or the two sides of one A/B report "
      "(docs/ci.md). Exit 0 pass, 1 regression, 2 bad usage (or --strict and different "
      "hardware), 4 incomplete (a baseline case missing or nothing compared), 5 inconclusive "
      "(noisy or busy-machine cases, --on-noisy warn)");
  sub->add_option("baseline", o->baseline,
                  "baseline report (.h5), or an A/B report (`run --baseline ...`) alone")
      ->required();
  sub->add_option("current", o->current, "current report (.h5)");
  sub->add_option("--threshold", o->threshold,
                  "slow-down of the fastest third of the repeats that counts as a regression, "
                  "e.g. 5% or 0.05")
      ->capture_default_str();
  sub->add_option("--alpha", o->alpha,
                  "1 - confidence of the bootstrap interval; level of the Mann-Whitney U test")
      ->capture_default_str();
  sub->add_option("--on-noisy", o->on_noisy,
                  "noisy or inconclusive cases: pass (exit 0), warn (exit 5), fail (exit 1)")
      ->capture_default_str();
  sub->add_flag("--allow-missing", o->allow_missing,
                "pass when baseline cases are missing from current or nothing was compared");
  sub->add_flag("--strict", o->strict, "refuse (exit 2) reports from different hardware");
  sub->add_option("--format", o->format,
                  "output format: table|markdown|junit|json (json: docs/ci.md)")
      ->capture_default_str();
  sub->add_option("--out", o->out, "write to this file instead of standard output");
  sub->callback([o, &exit_code] {
    CompareOptions opts;
    opts.threshold = parse_threshold(o->threshold);
    opts.alpha = o->alpha;
    if (!(opts.alpha > 0 && opts.alpha < 1))
      throw UsageError(fmt::format("--alpha {} must lie between 0 and 1", o->alpha));
    opts.on_noisy = parse_noisy_policy(o->on_noisy);
    opts.allow_missing = o->allow_missing;
    opts.strict = o->strict;
    if (o->format != "table" && o->format != "markdown" && o->format != "junit" &&
        o->format != "json")
      throw UsageError(fmt::format(
          "unknown compare format '{}'; use one of table, markdown, junit, json", o->format));
    check_out_is_no_input(o->out, {o->baseline, o->current});
    const nlohmann::json baseline = read_report_isolated(o->baseline);
    Comparison c;
    if (o->current.empty()) {
      if (!is_ab_report(baseline))
        throw UsageError(fmt::format(
            "compare: {} is not an A/B report (`scalebench run --baseline ...` writes one); "
            "give a baseline and a current report",
            o->baseline));
      c = compare_ab_report(baseline, opts);
    } else {
      c = compare_reports(baseline, read_report_isolated(o->current), opts);
    }
    const bool to_stdout = o->out.empty() || o->out == "-";
    emit(format_comparison(c, o->format, to_stdout ? output_width(STDOUT_FILENO) : 0), o->out,
         o->format == "table" || o->format == "markdown");
    exit_code = comparison_exit_code(c);
  });
}

void add_history_command(CLI::App& app, int& exit_code) {
  struct Options {
    std::string store;
    std::string source;
    std::vector<std::string> reports;
    std::string commit;
    std::string pattern;
    std::string format = "table";
    std::string out;
    std::string threshold = "5%";
  };
  static constexpr const char* kStoreHelp =
      "a SQLite file or a postgresql:// URI (docs/history-schema.md)";
  auto o = std::make_shared<Options>();
  CLI::App* hist = app.add_subcommand(
      "history",
      "Runs over time in SQLite or PostgreSQL: each case's trend and the runs where it stepped "
      "(docs/ci.md)");
  hist->require_subcommand(1);

  CLI::App* add = hist->add_subcommand(
      "add", "Add reports to a store (created if missing), all in one transaction");
  add->add_option("store", o->store, kStoreHelp)->required();
  add->add_option("reports", o->reports, "reports (.h5) written by `scalebench run`")->required();
  add->add_option("--commit", o->commit,
                  "commit under test (default: the report's git_sha); one report only");
  add->callback([o, &exit_code] {
    if (!o->commit.empty() && o->reports.size() != 1)
      throw UsageError("history add --commit takes one report");
    for (const auto& r : o->reports)  // before the store's kind: the clearer message
      if (same_file(o->store, r))
        throw UsageError(fmt::format(
            "history store {} is the report {} itself: give the store a file of its own",
            one_line(o->store), one_line(r)));
    const HistoryLocation where = locate_history(o->store, true);
    std::vector<HistoryRun> runs;
    for (const auto& r : o->reports)
      runs.push_back(history_run(read_report_isolated(r), r, o->commit));
    HistoryAdded added;
    try {
      added = add_history_runs(o->store, runs);
    } catch (const Error& e) {
      throw Error(fmt::format("{}; nothing was added", e.what()), e.exit_code());
    }
    std::string text;
    for (std::size_t i = 0; i < runs.size(); ++i)
      text += fmt::format("{}{} (commit {}, {}, {}, machine {})\n",
                          added.added[i] ? "added " : "already in the store: ", runs[i].report,
                          runs[i].commit, runs[i].time_utc, runs[i].host, runs[i].machine);
    std::cout << text << fmt::format("{}: {} run(s)\n", where.label, added.runs);
    exit_code = kExitOk;
  });

  CLI::App* import = hist->add_subcommand(
      "import", "Copy every run of one store into another (e.g. an old HDF5 store)");
  import->add_option("source", o->source, "store to copy: HDF5, SQLite or a postgresql:// URI")
      ->required();
  import->add_option("store", o->store, kStoreHelp)->required();
  import->callback([o, &exit_code] {
    const HistoryLocation from = locate_history(o->source, false);
  const HistoryLocation where = locate_history(o->store, true);
  std::error_code ec;
  if (from.spec == where.spec || (from.kind != HistoryLocation::Kind::postgresql &&
                                  std::filesystem::equivalent(from.spec, where.spec, ec)))
    throw UsageError(
        fmt::format("history import: {} is both the source and the store", from.label));
  HistoryStore source = read_history(o->source, true);
  std::sort(source.runs.begin(), source.runs.end(),
            [](const HistoryRun& a, const HistoryRun& b) { return a.id < b.id; });
  HistoryAdded added;
  try {
    added = add_history_runs(o->store, source.runs);
  } catch (const Error& e) {
    throw Error(fmt::format("{}; nothing was imported", e.what()), e.exit_code());
  }
  const auto n = static_cast<std::size_t>(std::count(added.added.begin(), added.added.end(), true));
  std::cout << fmt::format(
      "imported {} run(s) from {} into {} ({} already there); {} is unchanged\n{}: {} run(s)\n", n,
      from.label, where.label, source.runs.size() - n, from.label, where.label, added.runs);
  exit_code = kExitOk;
});

const auto view = [&](const char* name, const char* help, const char* default_format) {
  CLI::App* v = hist->add_subcommand(name, help);
  v->add_option("store", o->store, kStoreHelp)->required();
  v->add_option("--case", o->pattern, "only cases whose id matches this shell pattern");
  v->add_option("--format", o->format,
                fmt::format("output format: {}", fmt::join(history_formats(), "|")))
      ->default_str(default_format);
  v->add_option("--out", o->out, "write to this file instead of standard output");
  v->add_option("--threshold", o->threshold,
                "smallest step shown, as a percentage (5%) or a fraction (0.05)")
      ->default_str("5%");
  v->callback([o, &exit_code, default_format] {
    if (o->format.empty()) o->format = default_format;
    ChangePointOptions options;
    options.min_change = parse_threshold(o->threshold);
    const HistoryLocation where = locate_history(o->store, false);
    if (where.kind != HistoryLocation::Kind::postgresql) check_out_is_no_input(o->out, {o->store});
    if (where.kind == HistoryLocation::Kind::hdf5)
      std::cerr << fmt::format(
          "scalebench: {} is an HDF5 store of an earlier scalebench; `scalebench history "
          "import {} {}` copies it into a SQLite store that concurrent jobs can add to\n",
          where.label, where.spec,
          std::filesystem::path(where.spec).replace_extension(".db").string());
    const HistoryStore store = read_history(o->store);
    const std::string text =
        format_history(store, history_trends(store, o->pattern, options), o->format);
    emit(text, o->out, o->format == "table" || o->format == "markdown");
    exit_code = kExitOk;
  });
  return v;
};
view("show", "Print each case's trend and its steps", "table");
view("report", "Render the trends: html (charts), openmetrics, json, markdown or table", "html");
o->format.clear();
}  // namespace sb::results

}  // namespace sb::results
