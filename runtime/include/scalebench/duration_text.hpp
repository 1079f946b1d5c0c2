#pragma once
/// @file duration_text.hpp
/// Durations as people read them, the same in every table, note and message.

#include <string>

namespace sb {

/// "1.234 s", "12.30 ms", "45.60 us", "3.2 ns", "0 s"; "-" for NaN.
[[nodiscard]] std::string human_seconds(double seconds);

}  // namespace sb
