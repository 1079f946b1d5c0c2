#pragma once
/// @file file_tail.hpp
/// Follows a file that another process appends to (the scheduler's record stream, a job's log):
/// each call returns the complete lines added since the last one; a partial last line waits for
/// its end.

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sb {

class FileTail {
 public:
  explicit FileTail(std::string path) : path_(std::move(path)) {}
  /// Complete lines added since the last call (without their newline).
  std::vector<std::string> new_lines();
  /// What is left after the last newline (a job that ended mid-line), then nothing.
  std::string rest();

 private:
  std::string path_;
  std::size_t offset_ = 0;
  std::string partial_;
};

/// A FileTail of JSON lines: torn or damaged lines (a job killed mid-write) are skipped.
class RecordTail {
 public:
  explicit RecordTail(std::string path) : tail_(std::move(path)) {}
  std::vector<nlohmann::json> new_records();

 private:
  FileTail tail_;
};

}  // namespace sb
