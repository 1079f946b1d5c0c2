#pragma once
/// @file formats.hpp
/// (private) One renderer per `scalebench report --format`; `summary` is summarize(model).
/// `width`: the columns a text table must fit (0: no limit, the full table).

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sb::results::detail {

std::string format_table(const nlohmann::json& model, const nlohmann::json& summary,
                         std::size_t width);
std::string format_markdown(const nlohmann::json& model, const nlohmann::json& summary);

/// The tidy export (format_tidy.cpp): "csv" and "records", one row per case or per repeat.
struct TidyTable {
  using Row = std::map<std::string, nlohmann::json>;
  std::vector<std::string> columns;  ///< in the order they first appeared
  std::vector<Row> rows;
  void set(Row& row, const std::string& column, nlohmann::json value);
};
/// Appends `model`'s rows (`report`, when given, fills a leading `report` column).
void add_tidy_rows(TidyTable& table, const nlohmann::json& model, const nlohmann::json& summary,
                   bool per_repeat, const std::string* report = nullptr);
std::string tidy_csv(const TidyTable& table, bool header = true);
std::string tidy_records(const TidyTable& table);
std::string format_json(const nlohmann::json& model, const nlohmann::json& summary);
std::string format_gbench(const nlohmann::json& model, const nlohmann::json& summary);
std::string format_html(const nlohmann::json& model, const nlohmann::json& summary);
std::string format_junit(const nlohmann::json& model, const nlohmann::json& summary);

/// Cases that did not finish ok, grouped by status and message with a hint each, then one line
/// per failed check (format_attention.cpp).
std::vector<std::string> problem_lines(const nlohmann::json& model);
/// Skipped cases that cannot run on this machine by their nature (`not_applicable`: comms with
/// one worker), grouped by reason: no problem, and not among problem_lines.
std::vector<std::string> not_run_here_lines(const nlohmann::json& model);
/// "29 of 32 planned cases never ran (the run was killed or stopped before them): a, b and 27
/// more" from the report's plan; empty when every planned case has a record.
std::vector<std::string> never_run_lines(const nlohmann::json& model);
/// The commands that finish an incomplete report (next_commands in report.hpp) for the file the
/// model was read from (its "file" member, set by `scalebench report`).
std::vector<std::string> next_lines(const nlohmann::json& model);

/// The summary rows' notes grouped by what they say: the cases that share a note's head and
/// reason ("slower than single-cpu: a (0.09x), b (0.41x)"), the reason said once.
struct NoteGroup {
  std::string head, why;
  std::vector<std::string> cases;  ///< "label (figure)"
};
/// `labels[i]` names summary row i (its case id when `labels` is shorter).
std::vector<NoteGroup> note_groups(const nlohmann::json& summary,
                                   const std::vector<std::string>& labels = {});

/// The run at a glance (format_headline.cpp), for the top of every human format.
struct Headline {
  std::string status;  ///< the run's status attribute ("ok", "failed", ...); "unknown"
  std::size_t cases = 0, ok = 0, failed = 0, skipped = 0, timeout = 0, other = 0;
  std::string tally;   ///< "4 ok, 1 failed, 1 skipped (6 cases)"
  std::string hosts;   ///< "node0" or "4 nodes: node0, node1, ..."
  std::string cpus;    ///< "AMD EPYC 9654 (2 cores, 8.00 GiB)"; "" when unknown
  std::string gpus;    ///< "2 x NVIDIA H200 (140 GiB)"; "" when none
  std::string job;     ///< "scheduler local" or "scheduler slurm, job 1234"
  std::string preset;  ///< "tiny"; "" when unknown
  std::string when;    ///< "2026-11-22T10:00:00Z .. 10:05:00Z (5 min 0 s)"
};
Headline headline_of(const nlohmann::json& model);

/// "ceilings used: stream_triad 20.0 GB/s per CPU worker, ..." for the kinds the summary's rows
/// used; "" when none.
std::string ceilings_used(const nlohmann::json& model, const nlohmann::json& summary);

}  // namespace sb::results::detail
