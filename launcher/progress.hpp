#pragma once
/// @file progress.hpp
/// Live progress of a run: on a terminal one updating line (case k of N, workload, path,
/// repeat, elapsed, ETA) plus a line per finished case; in batch logs plain lines only.

#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

namespace sb {

class Progress {
 public:
  /// `total_cases` planned; output goes to `out` (stderr), as a terminal when `tty`.
  Progress(int total_cases, std::FILE* out, bool tty);
  void on_record(const nlohmann::json& record);
  /// Ends the updating line (before printing anything else).
  void finish();

 private:
  void redraw(const nlohmann::json& progress);
  int total_;
  std::FILE* out_;
  bool tty_;
  double t0_;
  int finished_ = 0;
  bool line_open_ = false;
  std::string last_started_;
};

}  // namespace sb
