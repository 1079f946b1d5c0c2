#include "job_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "job_guardian.hpp"
#include "scalebench/clock.hpp"
#include "scalebench/error.hpp"

extern char** environ;

namespace sb {
namespace {

/// fork()'s error in words; EAGAIN names the process limit that usually causes it.
std::string fork_error(int err) {
  std::string s = std::strerror(err);
  rlimit rl{};
  if (err == EAGAIN && ::getrlimit(RLIMIT_NPROC, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
    s += fmt::format(" (the limit on processes, ulimit -u, is {})", rl.rlim_cur);
  return s;
}

/// Reads exactly `n` bytes from `fd`, waiting up to `timeout_ms` (-1: for ever). False on EOF,
/// an error or the time running out.
bool read_exactly(int fd, void* data, std::size_t n, int timeout_ms) {
  auto* p = static_cast<char*>(data);
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (n > 0) {
    int wait = -1;
    if (timeout_ms >= 0) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                            until - std::chrono::steady_clock::now())
                            .count();
      wait = static_cast<int>(std::max<long long>(0, left));  // 0: one look, no wait
    }
    pollfd pfd{fd, POLLIN, 0};
    const int pr = ::poll(&pfd, 1, wait);
    if (pr < 0 && errno == EINTR) continue;
    if (pr <= 0) return false;
    const ssize_t r = ::read(fd, p, n);
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

}  // namespace

JobProcess::JobProcess(const batch::LaunchPlan& plan, const std::string& log_path, bool commands) {
  if (plan.argv.empty()) throw EnvironmentError("empty MPI launch command");
  const int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log < 0)
    throw EnvironmentError(fmt::format("cannot create {}: {}", log_path, std::strerror(errno)));
  int null_in = -1;
  if (commands) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
      const int err = errno;
      ::close(log);
      throw EnvironmentError(fmt::format("pipe: {}", std::strerror(err)));
    }
    null_in = fds[0];
    input_ = fds[1];
  } else {
    null_in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  }
  std::vector<std::string> envs;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv(*e);
    const auto eq = kv.find('=');
    if (eq != std::string::npos && plan.env.count(kv.substr(0, eq)) != 0) continue;
    envs.push_back(kv);
  }
  for (const auto& [k, v] : plan.env) envs.push_back(k + "=" + v);
  std::vector<char*> argv, envp;
  for (const auto& a : plan.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : envs) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  int down[2] = {-1, -1}, up[2] = {-1, -1};  // launcher -> guardian, guardian -> launcher
  auto close_all = [&] {
    for (const int fd : {log, null_in, down[0], down[1], up[0], up[1]})
      if (fd >= 0) ::close(fd);
  };
  if (::pipe2(down, O_CLOEXEC) != 0 || ::pipe2(up, O_CLOEXEC) != 0) {
    const int err = errno;
    close_all();
    close_input();
    throw EnvironmentError(
        fmt::format("cannot start the MPI job: pipe: {} (ulimit -n?)", std::strerror(err)));
  }
  std::fflush(nullptr);  // nothing buffered is written twice
  const pid_t guardian = ::fork();
  if (guardian < 0) {
    const int err = errno;
    close_all();
    close_input();
    throw EnvironmentError(fmt::format("cannot start the MPI job: fork: {}", fork_error(err)));
  }
  if (guardian == 0) {
    // The commands' write end stays the launcher's alone: the job sees their end when it closes.
    if (input_ >= 0) ::close(input_);
    detail::run_guardian(down[0], up[1], null_in, log, argv.data(), envp.data());
  }
  ::close(down[0]);
  ::close(up[1]);
  ::close(log);
  if (null_in >= 0) ::close(null_in);
  guardian_ = guardian;
  to_guardian_ = down[1];
  from_guardian_ = up[0];
  pid_t starter = 0;
  if (!read_exactly(from_guardian_, &starter, sizeof starter, 30000) || starter <= 0) {
    const int err = starter < 0 ? -starter : EAGAIN;
    ::close(to_guardian_);  // the guardian ends whatever it started
    ::close(from_guardian_);
    to_guardian_ = from_guardian_ = -1;
    while (::waitpid(guardian_, nullptr, 0) < 0 && errno == EINTR) {
    }
    guardian_ = -1;
    close_input();
    throw EnvironmentError(fmt::format("cannot start the MPI job: fork: {}", fork_error(err)));
  }
  pid_ = starter;
  started_ = now();
}

JobProcess::~JobProcess() {
  end(10.0);
  close_input();
  if (to_guardian_ >= 0) ::close(to_guardian_);
  if (from_guardian_ >= 0) ::close(from_guardian_);
}

bool JobProcess::send(const std::string& line) noexcept {
  if (input_ < 0) return false;
  const std::string text = line + "\n";
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t w = ::write(input_, text.data() + done, text.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;  // EPIPE (SIGPIPE is ignored): the job is gone
    done += static_cast<std::size_t>(w);
  }
  return true;
}

void JobProcess::close_input() noexcept {
  if (input_ >= 0) ::close(input_);
  input_ = -1;
}

void JobProcess::take_status(int timeout_ms) {
  if (exited_ || guardian_ <= 0) return;
  int st = 0;
  if (read_exactly(from_guardian_, &st, sizeof st, timeout_ms)) {
    status_ = st;
    exited_ = true;
  } else {
    // No status: did the guardian die (it was killed)? Then so did the job's starter.
    int gst = 0;
    if (::waitpid(guardian_, &gst, WNOHANG) == guardian_) {
      guardian_ = -1;
      status_ = SIGKILL;  // as if killed: "MPI job killed by signal 9"
      exited_ = true;
      return;
    }
  }
  if (exited_ && guardian_ > 0) {
    while (::waitpid(guardian_, nullptr, 0) < 0 && errno == EINTR) {
    }
    guardian_ = -1;
  }
}

bool JobProcess::running() {
  take_status(0);
  return !exited_;
}

void JobProcess::tell(char word) noexcept {
  if (to_guardian_ >= 0) (void)!::write(to_guardian_, &word, 1);
}

void JobProcess::terminate() {
  if (term_sent_ > 0 || exited_) return;
  ::kill(-pid_, SIGTERM);  // once: a second one makes mpiexec skip its orderly abort
  term_sent_ = now();
}

double JobProcess::terminate_age() const {
  return term_sent_ > 0 ? now() - term_sent_ : 0.0;
}

void JobProcess::kill_all() noexcept {
  if (pid_ <= 0 || exited_) return;
  ::kill(-pid_, SIGKILL);
  tell(detail::kGuardianKill);  // and whatever is below it, ranks in groups of their own too
}

void JobProcess::end(double grace_s) noexcept {
  if (pid_ <= 0 || guardian_ <= 0) return;
  if (running()) {
    terminate();
    while (running() && terminate_age() < grace_s)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill_all();
  take_status(-1);  // the guardian answers once nothing of the job is left
}

std::vector<JobProc> JobProcess::processes(bool with_rank) const {
  return guardian_ > 0 ? processes_below(guardian_, with_rank) : std::vector<JobProc>{};
}

}  // namespace sb
