#pragma once
/// @file lapack_check.hpp
/// SB_LAPACK_CHECK: a LAPACK(E) call returning info != 0 throws sb::LibraryError.

#include <string>

#include "scalebench/error.hpp"

#define SB_LAPACK_CHECK(call)                                                                \
  do {                                                                                       \
    const int sb_lapack_info_ = static_cast<int>(call);                                      \
    if (sb_lapack_info_ != 0)                                                                \
      ::sb::detail::throw_library_error(                                                     \
          "LAPACK", #call, "info = " + std::to_string(sb_lapack_info_), __FILE__, __LINE__); \
  } while (0)
