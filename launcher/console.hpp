#pragma once
/// @file console.hpp
/// What the launcher prints. Writing never throws and never ends the program: `scalebench run
/// ... | head -3` closes the pipe after three lines, and the run must still finish and write its
/// report (the report is the output that matters; SIGPIPE is ignored, EPIPE is dropped).

#include <cstdio>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "scalebench/printable.hpp"  // one_line(): what a message quotes stays on one line

namespace sb {

/// Writes `text` to `to` (stdout or stderr) and flushes; errors are dropped.
void say(std::FILE* to, std::string_view text) noexcept;

/// say() with a format string.
template <class... Args>
void sayf(std::FILE* to, fmt::format_string<Args...> format, Args&&... args) noexcept {
  try {
    say(to, fmt::format(format, std::forward<Args>(args)...));
  } catch (...) {
    // formatting failed (out of memory): nothing to print
  }
}

}  // namespace sb
