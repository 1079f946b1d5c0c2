// Fuzz target: suite files (TOML) through the parser and the case planner. Bad input must end in
// sb::UsageError (exit 2, one line); anything else (crash, abort, another exception) is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "case_plan.hpp"
#include "scalebench/error.hpp"
#include "suite_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  sb::RunRequest request;
  try {
    sb::load_suite_text(text, "fuzz.toml", request);
    (void)sb::plan_cases(request);
  } catch (const sb::UsageError&) {
  }
  return 0;
}
