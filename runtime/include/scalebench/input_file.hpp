#pragma once
/// @file input_file.hpp
/// Input files (suite files, reports, reference files, history stores, plugins) are regular
/// files: a FIFO would block the reader for ever, /dev/zero would fill memory, a folder or a
/// device says nothing. These refuse them with one line (sb::UsageError, exit 2) without ever
/// blocking: stat() first, and files read here are opened with O_NONBLOCK and checked again on
/// the open descriptor.

#include <cstddef>
#include <string>
#include <string_view>

namespace sb {

/// Throws sb::UsageError ("{what} {path}: is a FIFO (named pipe), not a file ...") when `path`
/// exists and is not a regular file (symbolic links followed). A missing file passes: the
/// caller says so in its own words.
void check_regular_input(const std::string& path, std::string_view what);

/// The whole of the regular file `path`, of at most `max_bytes` bytes; sb::UsageError naming
/// `what` when it is missing, unreadable, not a regular file or larger.
[[nodiscard]] std::string read_input_file(const std::string& path, std::string_view what,
                                          std::size_t max_bytes);

}  // namespace sb
