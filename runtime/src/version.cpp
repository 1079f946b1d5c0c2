#include "scalebench/version.hpp"

#include "scalebench_git_sha.h"  // generated at build time (cmake/ScalebenchVersion.cmake)

namespace sb {
const char* version() noexcept {
  return SCALEBENCH_VERSION;
}
const char* git_sha() noexcept {
  return SCALEBENCH_GIT_SHA;
}
}  // namespace sb
