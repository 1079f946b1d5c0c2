// A process limit that leaves no thread, noticed before the libraries start (thread_limit.hpp).
#include "thread_limit.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fmt/format.h>

namespace {

/// Below this many processes and threads per user, a library's thread pool may not start.
constexpr rlim_t kLowProcessLimit = 64;

volatile sig_atomic_t g_sigint_before_main = 0;
int g_saved_stderr = -1;  // stderr while the libraries started, when it was set aside
struct sigaction g_previous_sigint {};

void note_sigint(int) {
  g_sigint_before_main = 1;
}

/// Runs before every library's constructor (the program's DT_PREINIT_ARRAY), before the C
/// library itself is set up: system calls only. OpenBLAS's constructor raises SIGINT when it
/// cannot start its threads; under a low process limit its two lines about it are set aside
/// too, for main() to say it in one.
void before_libraries(int, char**, char**) {
  struct sigaction sa {};
  sa.sa_handler = note_sigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &g_previous_sigint);
  rlimit rl{};
  if (geteuid() == 0 || getrlimit(RLIMIT_NPROC, &rl) != 0 || rl.rlim_cur >= kLowProcessLimit)
    return;
  const int quiet = open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (quiet < 0) return;
  g_saved_stderr = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
  if (g_saved_stderr >= 0) dup2(quiet, STDERR_FILENO);
  close(quiet);
}

}  // namespace

__attribute__((section(".preinit_array"),
               used)) static void (*const sb_preinit)(int, char**, char**) = before_libraries;

namespace sb {

std::string thread_start_failure() {
  if (g_saved_stderr >= 0) {  // stderr back as it was
    dup2(g_saved_stderr, STDERR_FILENO);
    close(g_saved_stderr);
    g_saved_stderr = -1;
  }
  sigaction(SIGINT, &g_previous_sigint, nullptr);  // the launcher's own handling from here on
  if (g_sigint_before_main == 0) return {};
  rlimit rl{};
  if (geteuid() == 0 || getrlimit(RLIMIT_NPROC, &rl) != 0 || rl.rlim_cur >= kLowProcessLimit) {
    raise(SIGINT);  // a Ctrl-C that came that early: interrupted, as it would have been
    return {};
  }
  const std::string limit =
      fmt::format(" (the limit on processes and threads, ulimit -u, is {})", rl.rlim_cur);
  return fmt::format(
      "cannot start a thread: OpenBLAS could not start its threads before scalebench began (it "
      "raised SIGINT){}: raise the limit (ulimit -u) or run fewer processes as this user",
      limit);
}

}  // namespace sb
