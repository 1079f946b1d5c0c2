#pragma once
/// @file progress.hpp
/// Live progress of a run. On a terminal: one updating line (case k of N, its label, warm-up or
/// repeat r of R, elapsed, ETA) plus a line per finished case. In batch logs and pipes: plain
/// lines only — one when a case starts, one per repeat when repeats take longer than a few
/// seconds, one at least every kQuietS of a long case (the repeats done and the case's ETA), so
/// that a batch log never goes quiet for long, and one when it ends.

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalebench/workload.hpp"

namespace sb {

class Progress {
 public:
  /// Repeats longer than this get a line of their own in batch logs.
  static constexpr double kSlowRepeatS = 5.0;
  /// A running case says how far it got at least this often in batch logs.
  static constexpr double kQuietS = 10.0;

  /// `cases` planned to run; output goes to `out` (stderr), as a terminal when `tty`.
  Progress(const std::vector<CaseSpec>& cases, std::FILE* out, bool tty);
  void on_record(const nlohmann::json& record);
  /// Called often while a job runs: in batch logs, a line for a case quiet for kQuietS.
  void tick();
  /// Ends the updating line (before printing anything else).
  void finish();

  /// "groupby single-cpu query=by-name": the workload, the path and the parameters that tell
  /// this case from the other planned cases of its workload.
  [[nodiscard]] std::string label(const std::string& id) const;

 private:
  void on_progress(const nlohmann::json& p);
  /// A device's record of an each-gpu / each-node case: a line for a device that is not ok,
  /// one line for the case when its last device is in.
  void on_device(const nlohmann::json& rec);
  int total_;
  std::FILE* out_;
  bool tty_;
  double t0_;
  int finished_ = 0;
  bool line_open_ = false;
  std::map<std::string, std::string> labels_;  ///< by case id
  std::string current_;                        ///< id of the running case
  double repeat_t0_ = 0;                       ///< when its current repeat (or warm-up) began
  int repeat_ = 0;
  bool warmup_ = false;
  double case_t0_ = 0;
  double last_line_t_ = 0;  ///< when the running case last printed a line (batch logs)
  double timed_t0_ = -1;    ///< when its first timed repeat began (<0: still warming up)
  int repeats_ = 1;         ///< its (most) timed repeats
  bool adaptive_ = false;   ///< `--repeats auto`
  std::string what_;        ///< "[k/N] label" of the running case
  /// each-* cases: the device records in so far, by planned id.
  std::map<std::string, std::vector<nlohmann::json>> devices_;
};

}  // namespace sb
