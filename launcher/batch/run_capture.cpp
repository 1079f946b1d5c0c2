#include "batch/run_capture.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "scalebench/error.hpp"
#include "scalebench/printable.hpp"

namespace sb::batch {

Captured run_capture(const std::vector<std::string>& argv, const std::string& stdin_path) {
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
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[4096];
  while (open_fds > 0) {
    if (::poll(fds, 2, -1) < 0) {
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
