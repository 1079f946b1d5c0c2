// Another process's start-up environment (process_environment.hpp).
#include "process_environment.hpp"

#include <fstream>
#include <iterator>

namespace sb::detail {

bool started_with(unsigned pid, const std::string& name, const std::string& value) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  if (!in) return false;
  const std::string want = name + "=" + value;
  // NUL-separated entries; an environment is at most a few hundred KiB.
  std::string entry;
  for (std::istreambuf_iterator<char> it(in), end; it != end; ++it) {
    if (*it != '\0') {
      entry.push_back(*it);
      continue;
    }
    if (entry == want) return true;
    entry.clear();
  }
  return entry == want;
}

}  // namespace sb::detail
