#pragma once
/// @file printable.hpp
/// Text from outside (the environment, node files, the command line, a report someone else
/// wrote) shown safely on a terminal or in a one-line message: whatever it holds (a newline in
/// SLURM_JOB_NODELIST, an escape sequence in a node file or a case id), what is printed stays
/// one line of visible text and cannot move the cursor or rewrite the terminal. C1 controls
/// (U+0080..U+009F, which some terminals obey: U+009B is CSI) are shown as \u0080..\u009f.

#include <cstddef>
#include <string>
#include <string_view>

namespace sb {

/// `text` with every control character written as an escape (`\n`, `\r`, `\t`, `\xHH`) and a
/// backslash as `\\`, so that the escapes are unambiguous; beyond `max_chars` input bytes it is
/// cut and ends with `... (N bytes)`. Bytes of 0x80 and above (UTF-8) are kept. For a value
/// quoted in a message.
[[nodiscard]] std::string printable(std::string_view text, std::size_t max_chars = 160);

/// A whole message on one line: control characters escaped as printable() does, backslashes and
/// length kept (a message may already quote printable() values, which must not be escaped
/// twice).
[[nodiscard]] std::string one_line(std::string_view text);

/// `text` for a terminal (a table, a list of lines): control characters escaped as one_line()
/// does, except the line breaks and tabs that lay it out.
[[nodiscard]] std::string terminal_text(std::string_view text);

}  // namespace sb
