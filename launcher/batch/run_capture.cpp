#include "batch/run_capture.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>

#include "scalebench/error.hpp"
#include "scalebench/printable.hpp"

namespace sb::batch {

Captured run_capture(const std::vector<std::string>& argv, const std::string& stdin_path,
                     const std::map<std::string, std::string>& env, double timeout_s) {
  const int in_fd = ::open(stdin_path.empty() ? "/dev/null" : stdin_path.c_str(), O_RDONLY);
  if (in_fd < 0)
    throw EnvironmentError("cannot open '" + printable(stdin_path) + "': " + std::strerror(errno));
  int out_pipe[2];
  int err_pipe[2];
  if (::pipe(out_pipe) != 0 || ::pipe(err_pipe) != 0)
    throw EnvironmentError(std::string("pipe: ") + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(in_fd);
    throw EnvironmentError(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    if (timeout_s > 0) ::setpgid(0, 0);  // so that a timeout ends what it started too
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    ::dup2(in_fd, 0);
    ::close(in_fd);
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    std::fprintf(stderr, "cannot execute %s: %s\n", args[0], std::strerror(errno));
    ::_exit(127);
  }
  ::close(in_fd);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  Captured c;
  if (timeout_s > 0) ::setpgid(pid, pid);
  const auto t0 = std::chrono::steady_clock::now();
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[4096];
  while (open_fds > 0) {
    int wait_ms = -1;
    if (timeout_s > 0) {
      const double left =
          timeout_s - std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (left <= 0) {
        c.timed_out = true;
        ::kill(-pid, SIGKILL);
        for (auto& f : fds)
          if (f.fd >= 0) ::close(f.fd);
        break;
      }
      wait_ms = static_cast<int>(left * 1000) + 1;
    }
    const int ready = ::poll(fds, 2, wait_ms);
    if (ready < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        (i == 0 ? c.out : c.err).append(buf, static_cast<std::size_t>(n));
      } else {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  c.status = WIFEXITED(status) ? WEXITSTATUS(status) : exit_code_of_signal(WTERMSIG(status));
  return c;
}

}  // namespace sb::batch
