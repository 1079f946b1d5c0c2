#include "scalebench/version.hpp"

namespace sb {
const char* version() noexcept {
  return SCALEBENCH_VERSION;
}
const char* git_sha() noexcept {
  return SCALEBENCH_GIT_SHA;
}
}  // namespace sb
