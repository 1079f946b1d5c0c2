#include "ab_request.hpp"

#include <cerrno>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "scalebench/error.hpp"

namespace sb {
namespace {

std::string relative_to(const std::string& path, const std::string& folder) {
  if (folder.empty() || path.empty() || std::filesystem::path(path).is_absolute()) return path;
  return (std::filesystem::path(folder) / path).string();
}

bool valid_env_name(const std::string& name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  for (char c : name)
    if (!(c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
      return false;
  return true;
}

}  // namespace

void add_side_item(AbSideRequest& side, const std::string& item, const std::string& what,
                   const std::string& folder) {
  const auto eq = item.find('=');
  const auto colon = item.find(':');
  side.given = true;
  if (colon != std::string::npos && (eq == std::string::npos || colon < eq)) {
    const std::string kind = item.substr(0, colon);
    const std::string rest = item.substr(colon + 1);
    const auto e = rest.find('=');
    if (kind == "env") {
      const std::string name = rest.substr(0, e);
      if (e == std::string::npos || !valid_env_name(name))
        throw UsageError(fmt::format(
            "{} '{}': write env:NAME=VALUE with NAME a variable name (letters, digits, _)", what,
            item));
      side.env.emplace_back(name, rest.substr(e + 1));
      return;
    }
    if (kind == "param") {
      const auto dot = rest.find('.');
      if (e == std::string::npos || dot == std::string::npos || dot > e || dot == 0 || dot + 1 == e)
        throw UsageError(
            fmt::format("{} '{}': write param:WORKLOAD.KEY=VALUE (e.g. param:subset-mean.n=21000)",
                        what, item));
      side.params.push_back(rest);
      return;
    }
    throw UsageError(
        fmt::format("{} '{}': unknown kind '{}:' (env:NAME=VALUE, "
                    "param:WORKLOAD.KEY=VALUE)",
                    what, item, kind));
  }
  if (eq == std::string::npos || eq == 0)
    throw UsageError(
        fmt::format("{} '{}': write KEY=VALUE: rank=PATH, plugin=PATH, mpiexec=PATH, label=TEXT, "
                    "env:NAME=VALUE or param:WORKLOAD.KEY=VALUE",
                    what, item));
  const std::string key = item.substr(0, eq);
  const std::string value = item.substr(eq + 1);
  if (value.empty() && key != "label")
    throw UsageError(fmt::format("{} '{}': {} needs a value", what, item, key));
  if (key == "rank") {
    side.rank = relative_to(value, folder);
  } else if (key == "plugin") {
    side.plugins.push_back(relative_to(value, folder));
  } else if (key == "mpiexec") {
    side.mpiexec = value.find('/') == std::string::npos ? value : relative_to(value, folder);
  } else if (key == "label") {
    side.label = value;
  } else {
    throw UsageError(fmt::format(
        "{} '{}': unknown key '{}' (rank, plugin, mpiexec, label, env:NAME, param:WORKLOAD.KEY)",
        what, item, key));
  }
}

int parse_ab_block(const std::string& text) {
  if (text == "auto") return 0;
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || v < 1 || v > 1000)
    throw UsageError(fmt::format(
        "--ab-block must be 'auto' or a number of timed repeats per turn, 1-1000 (got '{}')",
        text));
  return static_cast<int>(v);
}

}  // namespace sb
