// The job's guardian: nothing of a job survives its launcher (job_guardian.hpp).
#include "job_guardian.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "job_processes.hpp"

namespace sb::detail {
namespace {

/// Seconds the job's processes get to end after SIGTERM before SIGKILL.
constexpr double kGraceS = 5.0;

void put(int fd, const void* data, std::size_t n) noexcept {
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

/// Reaps every child that has ended; records the starter's status when it is among them.
void reap(pid_t starter, int& status, bool& starter_done) noexcept {
  int st = 0;
  pid_t w;
  while ((w = ::waitpid(-1, &st, WNOHANG)) > 0)
    if (w == starter) {
      status = st;
      starter_done = true;
    }
}

/// Whether any process is left below this one (zombies not counted: they are reaped).
bool any_left() {
  for (const auto& p : processes_below(::getpid()))
    if (p.state != 'Z') return true;
  return false;
}

/// Ends everything below the guardian: SIGTERM (and SIGCONT, so that a stopped process gets
/// it), up to kGraceS seconds, then SIGKILL.
void end_everything(pid_t starter, int& status, bool& starter_done) {
  for (const auto& p : processes_below(::getpid())) {
    ::kill(p.pid, SIGTERM);
    ::kill(p.pid, SIGCONT);
  }
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(kGraceS);
  while (std::chrono::steady_clock::now() < until) {
    reap(starter, status, starter_done);
    if (!any_left()) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (int round = 0; round < 50 && any_left(); ++round) {
    for (const auto& p : processes_below(::getpid())) ::kill(p.pid, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    reap(starter, status, starter_done);
  }
  reap(starter, status, starter_done);
}

}  // namespace

void run_guardian(int from_launcher, int to_launcher, int in, int out, char** argv,
                  char** envp) noexcept {
  // Only the launcher decides: a Ctrl-C or SIGTERM to the launcher's process group is its
  // business, not the guardian's.
  for (const int sig : {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGPIPE, SIGQUIT}) ::signal(sig, SIG_IGN);
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  // It prints nothing, and holds no end of the launcher's terminal or pipes (`run ... | head`
  // sees its end of file when the launcher ends, not when the guardian does).
  const int quiet = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (quiet >= 0) {
    for (const int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) ::dup2(quiet, fd);
    if (quiet > STDERR_FILENO) ::close(quiet);
  }
  // Nothing of the launcher's is held here: its lifeline's lock above all (a held lock would
  // say the launcher lives), its report files, its terminal input.
  int keep[] = {from_launcher, to_launcher, in, out};
  std::sort(std::begin(keep), std::end(keep));
  unsigned next = 3;  // close every descriptor from 3 up but those kept
  for (const int k : keep) {
    if (k < 0 || static_cast<unsigned>(k) < next) continue;
    if (static_cast<unsigned>(k) > next) ::close_range(next, static_cast<unsigned>(k) - 1, 0);
    next = static_cast<unsigned>(k) + 1;
  }
  ::close_range(next, ~0U, 0);
  const pid_t guardian = ::getpid();
  const pid_t starter = ::fork();
  if (starter == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != guardian) ::_exit(127);  // the guardian died before the line above
    if (in >= 0) ::dup2(in, STDIN_FILENO);
    ::dup2(out, STDOUT_FILENO);
    ::dup2(out, STDERR_FILENO);
    for (const int fd : keep)
      if (fd > STDERR_FILENO) ::close(fd);
    for (const int sig : {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGPIPE, SIGQUIT})
      ::signal(sig, SIG_DFL);
    ::execvpe(argv[0], argv, envp);
    const char* what = std::strerror(errno);
    put(STDERR_FILENO, "cannot start ", 13);
    put(STDERR_FILENO, argv[0], std::strlen(argv[0]));
    put(STDERR_FILENO, ": ", 2);
    put(STDERR_FILENO, what, std::strlen(what));
    put(STDERR_FILENO, "\n", 1);
    ::_exit(127);
  }
  if (starter < 0) {
    const pid_t err = -errno;
    put(to_launcher, &err, sizeof err);
    ::_exit(0);
  }
  ::setpgid(starter, starter);  // also here: no race with the child's own call
  put(to_launcher, &starter, sizeof starter);
  int status = 0;
  bool starter_done = false;
  while (!starter_done) {
    pollfd pfd{from_launcher, POLLIN, 0};
    const int pr = ::poll(&pfd, 1, 50);
    if (pr > 0) {
      char word = 0;
      const ssize_t n = ::read(from_launcher, &word, 1);
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
        // The launcher is gone: so is its job.
        end_everything(starter, status, starter_done);
        ::_exit(0);
      }
      if (n == 1 && word == kGuardianKill) {
        ::kill(-starter, SIGKILL);
        for (const auto& p : processes_below(guardian)) ::kill(p.pid, SIGKILL);
      }
    }
    reap(starter, status, starter_done);
  }
  // The starter has ended; whatever it left (orphaned ranks) ends too, before the launcher
  // hears the status.
  if (any_left()) end_everything(starter, status, starter_done);
  put(to_launcher, &status, sizeof status);
  ::_exit(0);
}

}  // namespace sb::detail
