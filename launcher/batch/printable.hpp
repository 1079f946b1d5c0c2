#pragma once
/// @file printable.hpp
/// Values from the environment, node files and the command line shown safely in one-line error
/// messages: whatever a value holds (a newline in SLURM_JOB_NODELIST, an escape sequence in a
/// node file), the message stays one line of visible text.

#include <cstddef>
#include <string>
#include <string_view>

namespace sb::batch {

/// `text` with every control character written as an escape (`\n`, `\r`, `\t`, `\xHH`) and a
/// backslash as `\\`; beyond `max_chars` input bytes it is cut and ends with
/// `... (N bytes)`. Bytes of 0x80 and above (UTF-8) are kept.
[[nodiscard]] std::string printable(std::string_view text, std::size_t max_chars = 160);

}  // namespace sb::batch
