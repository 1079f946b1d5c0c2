#include "stop_signals.hpp"

#include <signal.h>

#include <csignal>

#include <fmt/format.h>

#include "scalebench/error.hpp"

namespace sb {
namespace {

volatile std::sig_atomic_t g_signal = 0;

void on_signal(int sig) {
  g_signal = sig;
}

}  // namespace

void install_stop_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a waiting poll() or sleep wakes up
  for (const int sig : {SIGINT, SIGTERM, SIGHUP, SIGUSR1}) sigaction(sig, &sa, nullptr);
}

int take_stop_signal() noexcept {
  const int sig = g_signal;
  g_signal = 0;
  return sig;
}

std::string signal_name(int sig) {
  switch (sig) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    case SIGUSR1:
      return "SIGUSR1";
    default:
      return fmt::format("signal {}", sig);
  }
}

int stop_exit_code(int sig) noexcept {
  return sig == SIGUSR1 ? kExitOk : exit_code_of_signal(sig);
}

}  // namespace sb
