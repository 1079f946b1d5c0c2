#pragma once
/// @file console.hpp
/// What the launcher prints. Writing never throws and never ends the program: `scalebench run
/// ... | head -3` closes the pipe after three lines, and the run must still finish and write its
/// report (the report is the output that matters; SIGPIPE is ignored, EPIPE is dropped).

#include <cstdio>
#include <string>
#include <string_view>

#include <fmt/format.h>

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

/// `text` with control characters (newlines, escapes) shown as \n, \t, \xHH: a message that
/// quotes user input or a file stays on one line whatever the input holds.
[[nodiscard]] std::string one_line(std::string_view text);

}  // namespace sb
