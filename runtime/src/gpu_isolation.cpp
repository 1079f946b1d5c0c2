/// @file gpu_isolation.cpp
/// See gpu_isolation.hpp.
#include "gpu_isolation.hpp"

#include <cstdlib>
#include <cstring>
#include <sstream>
#include <vector>

#include "scalebench/settings.hpp"

namespace sb::detail {
namespace {

std::string trimmed(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return {};
  const auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

}  // namespace

std::optional<std::string> isolated_visible_devices(const char* current, int ordinal) {
  if (ordinal < 0) return std::nullopt;
  if (current == nullptr) return std::to_string(ordinal);
  std::vector<std::string> entries;
  std::stringstream list(current);
  for (std::string e; std::getline(list, e, ',');) entries.push_back(trimmed(e));
  if (static_cast<std::size_t>(ordinal) >= entries.size()) return std::nullopt;
  // CUDA stops at the first entry that names no GPU: every entry up to ours must name one.
  for (int i = 0; i <= ordinal; ++i) {
    const std::string& e = entries[static_cast<std::size_t>(i)];
    if (e.empty() || e[0] == '-') return std::nullopt;
  }
  return entries[static_cast<std::size_t>(ordinal)];
}

bool gpu_isolation_enabled() noexcept {
  try {
    return settings::gpu_isolation();
  } catch (...) {
    return true;  // the launcher refused bad values before the job started
  }
}

}  // namespace sb::detail
