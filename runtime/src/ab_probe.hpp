#pragma once
/// @file ab_probe.hpp
/// (runtime internals) `scalebench-rank --probe [--plugin LIB.so]...`: what an A/B run's
/// launcher learns about a side's build before any job starts (ab_protocol.hpp).

namespace sb::detail {

/// Prints the probe's JSON line on stdout and returns 0; a plugin that does not load, a bad
/// setting or a bad argument: one line on stderr, exit code 2. Needs no MPI.
[[nodiscard]] int run_ab_probe(int argc, char** argv) noexcept;

}  // namespace sb::detail
