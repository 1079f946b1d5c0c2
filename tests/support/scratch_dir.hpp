#pragma once
/// @file scratch_dir.hpp
/// Helpers of the tests that run scalebench and read what it wrote: a private temporary folder
/// removed at scope exit, and a whole file read into a string.

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>

namespace sb::test_support {

/// A fresh folder under the system's temporary directory (mkdtemp), removed with its contents
/// when the object goes out of scope.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& prefix = "sbtest") {
    std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "XXXXXX")).string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + tmpl);
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

/// The bytes of file p (empty when it cannot be read).
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace sb::test_support
