// Fuzz target: --param overrides and --paths lists through the case planner. Input: the first
// line is a --paths list (empty: all), the second a preset, every further line one --param
// "workload.key=value". Bad input must end in sb::UsageError; anything else is a bug.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "case_plan.hpp"
#include "scalebench/error.hpp"
#include "scalebench/params.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  std::string paths, preset, line;
  std::getline(in, paths);
  std::getline(in, preset);
  sb::RunRequest request;
  request.preset = preset.empty() ? "tiny" : preset;
  while (std::getline(in, line)) request.params.push_back(line);
  try {
    if (!paths.empty()) request.paths = sb::parse_paths(paths);
    (void)sb::plan_cases(request);
  } catch (const sb::UsageError&) {
  }
  // The scalar parsers on their own, on every line.
  std::istringstream again(std::string(reinterpret_cast<const char*>(data), size));
  while (std::getline(again, line)) {
    try {
      (void)sb::parse_int(line, "fuzz");
    } catch (const sb::UsageError&) {
    }
    try {
      (void)sb::parse_double(line, "fuzz");
    } catch (const sb::UsageError&) {
    }
  }
  return 0;
}
