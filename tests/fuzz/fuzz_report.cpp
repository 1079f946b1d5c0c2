// Fuzz target: the report reader (HDF5) on arbitrary bytes, then the summary and the table of
// what it accepted. The bytes go to a private temporary file (the reader takes a path). Bad
// input must end in sb::UsageError; anything else (crash, abort, another exception) is a bug.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "scalebench/error.hpp"
#include "scalebench/report.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/sb-fuzz-report-" + std::to_string(getpid()) + ".h5";
  if (std::FILE* f = std::fopen(path.c_str(), "wb")) {
    if (size > 0) std::fwrite(data, 1, size, f);
    std::fclose(f);
  } else {
    return 0;
  }
  try {
    const auto model = sb::results::read_report(path);
    (void)sb::results::summarize(model);
    (void)sb::results::format_report(model, "table");
  } catch (const sb::UsageError&) {
  }
  std::remove(path.c_str());
  return 0;
}
