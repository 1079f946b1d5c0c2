#pragma once
/// @file thread_limit.hpp
/// A process limit too low for threads (`ulimit -u 3`) is an environment problem, exit 3 with
/// its cause, not a silent exit 130: OpenBLAS starts its thread pool in a library constructor,
/// before main(), and raises SIGINT when pthread_create fails. Before any library starts (the
/// program's pre-init array), scalebench notes a SIGINT instead of dying of it, and under a low
/// process limit sets stderr aside while the libraries start; main() then stops with the cause
/// in one line.

#include <string>

namespace sb {

/// Puts stderr and SIGINT back as they were before the libraries started; then "" when they
/// started their threads, else why not, in one line naming the limit.
[[nodiscard]] std::string thread_start_failure();

}  // namespace sb
