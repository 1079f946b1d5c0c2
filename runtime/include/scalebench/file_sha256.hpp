#pragma once
/// @file file_sha256.hpp
/// SHA-256 (FIPS 180-4) of a file, for the report's record of each plugin: the hex digest
/// `sha256sum` prints, so a reader can tell which build of a plugin a run measured.

#include <string>

namespace sb::detail {

/// Lower-case hex SHA-256 of the file's bytes. Throws sb::UsageError when it cannot be read.
[[nodiscard]] std::string file_sha256(const std::string& path);

/// Lower-case hex SHA-256 of `bytes`.
[[nodiscard]] std::string sha256_hex(const std::string& bytes);

}  // namespace sb::detail
