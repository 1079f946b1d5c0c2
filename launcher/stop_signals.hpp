#pragma once
/// @file stop_signals.hpp
/// The signals that stop a run: SIGINT (Ctrl-C), SIGTERM (scancel, a time limit), SIGHUP (the
/// terminal went away) end the running job at once; SIGUSR1 (a batch system's time-limit
/// warning) lets the running case finish first. Every finished case stays in the report.

#include <string>

namespace sb {

/// Installs the handlers (idempotent). Called when the run is about to start its first job:
/// before that, the default action (the process ends) leaves nothing behind.
void install_stop_signals();

/// The stop signal received since the last call, or 0.
[[nodiscard]] int take_stop_signal() noexcept;

/// "SIGINT", "SIGTERM", "SIGHUP", "SIGUSR1", or "signal N".
[[nodiscard]] std::string signal_name(int sig);

/// Exit code of a run stopped by `sig`: 128 + sig (130 for SIGINT, 143 for SIGTERM, 129 for
/// SIGHUP), as a shell reports a program ended by that signal; 0 for SIGUSR1, a graceful stop
/// at a batch time limit whose finished cases are complete (batch systems then record the job
/// as completed, not failed).
[[nodiscard]] int stop_exit_code(int sig) noexcept;

}  // namespace sb
