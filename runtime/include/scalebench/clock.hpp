#pragma once
/// @file clock.hpp
/// Wall clock for phase and task timing, and a scoped phase timer.

#include <time.h>

#include <chrono>

#include "scalebench/workload.hpp"

namespace sb {

/// Seconds on a steady clock (arbitrary origin).
inline double now() noexcept {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// CPU time this process has used, all its threads, in seconds (one clock_gettime).
inline double process_cpu_s() noexcept {
  timespec ts{};
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return 0.0;
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

/// Adds the scope's duration to one phase of a PhaseTimes.
class ScopedPhase {
 public:
  ScopedPhase(PhaseTimes& times, Phase phase) noexcept : times_(times), phase_(phase), t0_(now()) {}
  ~ScopedPhase() {
    const double dt = now() - t0_;
    switch (phase_) {
      case Phase::generate:
        times_.generate += dt;
        break;
      case Phase::compute:
        times_.compute += dt;
        break;
      case Phase::communicate:
        times_.communicate += dt;
        break;
    }
  }
  ScopedPhase(const ScopedPhase&) = delete;
  ScopedPhase& operator=(const ScopedPhase&) = delete;

 private:
  PhaseTimes& times_;
  Phase phase_;
  double t0_;
};

}  // namespace sb
