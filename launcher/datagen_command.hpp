#pragma once
/// @file datagen_command.hpp
/// `scalebench datagen WORKLOAD --out FILE.h5 [--preset P] [--param workload.key=value]..
/// [--max-bytes N]`: writes the exact inputs of a case (the numbers the workers generate) and
/// the answer computed by scalebench's CPU code to an HDF5 file, so anyone can recompute the
/// answer with NumPy or pandas. Layout: docs/datagen.md.

#include <cstdint>
#include <string>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace sb {

/// Default --max-bytes: 2 GiB.
inline constexpr std::int64_t kDatagenDefaultMaxBytes = std::int64_t{2} << 30;

struct DatagenOptions {
  std::string workload;
  std::string out;
  std::string preset = "small";
  std::vector<std::string> params;  ///< "workload.key=value"
  std::int64_t max_bytes = kDatagenDefaultMaxBytes;
  int threads = 0;  ///< 0: every hardware thread
};

/// Writes the file (through FILE.tmp-<pid>, renamed when complete) and returns the bytes of
/// data in it. Before generating anything, throws sb::UsageError (exit 2) with one line naming
/// the bytes needed and the limit when the inputs exceed `max_bytes`; no file is left behind
/// on any error.
std::int64_t run_datagen(const DatagenOptions& options, const std::string& command_line);

/// "2147483648", "2GiB", "500MB", "1e9", "64 KiB" -> bytes. Throws sb::UsageError.
[[nodiscard]] std::int64_t parse_byte_size(const std::string& text);

/// Adds the `datagen` subcommand; `exit_code` must outlive app.parse().
void add_datagen_command(CLI::App& app, int& exit_code, const std::string& command_line);

}  // namespace sb
