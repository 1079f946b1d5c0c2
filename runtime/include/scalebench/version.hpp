#pragma once
/// @file version.hpp
/// scalebench's version and the git SHA it was built from (stamped into one translation unit,
/// so a new commit recompiles one file, not the project).

namespace sb {
[[nodiscard]] const char* version() noexcept;
[[nodiscard]] const char* git_sha() noexcept;
}  // namespace sb
