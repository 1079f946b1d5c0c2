#include "scalebench/find_program.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <sstream>

#include "scalebench/settings.hpp"

namespace sb {
namespace {

bool executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

std::string find_program(const std::string& name) {
  if (name.empty()) return {};
  if (name.find('/') != std::string::npos) return executable_file(name) ? name : std::string{};
  std::stringstream dirs(settings::environment_variable("PATH").value_or("/usr/bin:/bin"));
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string full = (dir.empty() ? "." : dir) + "/" + name;
    if (executable_file(full)) return full;
  }
  return {};
}

}  // namespace sb
