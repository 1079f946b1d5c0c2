// A plugin's trial load in a forked child (plugin_trial.hpp).
#include "plugin_trial.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>

#include <fmt/format.h>

#include "scalebench/error.hpp"
#include "scalebench/printable.hpp"

namespace sb::detail {
namespace {

void write_all(int fd, const std::string& s) noexcept {
  std::size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

/// The child: runs `load`, then answers 'K' (loaded) or 'E' and the error's text.
[[noreturn]] void child(int answer, int err, const std::function<void()>& load) noexcept {
  const int null_out = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (null_out >= 0) ::dup2(null_out, STDOUT_FILENO);
  ::dup2(err, STDERR_FILENO);
  std::string reply = "K";
  try {
    load();
  } catch (const std::exception& e) {
    reply = std::string("E") + e.what();
  } catch (...) {
    reply = "Eunknown exception while loading";
  }
  write_all(answer, reply);
  ::_exit(0);  // no atexit handlers, no destructors of the parent's objects
}

/// The last non-empty line of `text`, one line, at most 200 characters.
std::string last_line(const std::string& text) {
  std::size_t end = text.find_last_not_of("\r\n \t");
  if (end == std::string::npos) return {};
  const std::size_t begin = text.find_last_of('\n', end);
  std::string line = text.substr(begin == std::string::npos ? 0 : begin + 1,
                                 end + 1 - (begin == std::string::npos ? 0 : begin + 1));
  if (line.size() > 200) line = line.substr(0, 200) + "...";
  return one_line(line);
}

}  // namespace

void try_plugin_in_child(const std::string& shown, const std::function<void()>& load,
                         double limit_s) {
  int answer[2], err[2];
  if (::pipe2(answer, O_CLOEXEC) != 0)
    throw EnvironmentError(
        fmt::format("plugin {}: cannot create a pipe: {}", one_line(shown), std::strerror(errno)));
  if (::pipe2(err, O_CLOEXEC) != 0) {
    const int e = errno;
    ::close(answer[0]);
    ::close(answer[1]);
    throw EnvironmentError(
        fmt::format("plugin {}: cannot create a pipe: {}", one_line(shown), std::strerror(e)));
  }
  std::fflush(nullptr);  // nothing buffered is written twice
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int e = errno;
    for (const int fd : {answer[0], answer[1], err[0], err[1]}) ::close(fd);
    throw EnvironmentError(
        fmt::format("plugin {}: cannot fork to try it: {}", one_line(shown), std::strerror(e)));
  }
  if (pid == 0) {
    ::close(answer[0]);
    ::close(err[0]);
    child(answer[1], err[1], load);
  }
  ::close(answer[1]);
  ::close(err[1]);
  std::string reply, printed;
  bool hung = false;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<long>(limit_s * 1e3));
  pollfd fds[2] = {{answer[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open_fds = 2;
  while (open_fds > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) {
      hung = true;
      break;
    }
    const int pr = ::poll(fds, 2, static_cast<int>(std::min<long long>(left, 1000)));
    if (pr < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      char buf[4096];
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        std::string& to = i == 0 ? reply : printed;
        to.append(buf, static_cast<std::size_t>(n));
        if (printed.size() > (1u << 16)) printed.erase(0, printed.size() - (1u << 15));
      } else if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (const auto& f : fds)
    if (f.fd >= 0) ::close(f.fd);
  if (hung) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const std::string name = one_line(shown);
  if (hung)
    throw UsageError(fmt::format("plugin {}: did not finish loading within {:g} s", name, limit_s));
  if (!reply.empty() && reply[0] == 'K' && WIFEXITED(status) && WEXITSTATUS(status) == 0) return;
  if (!reply.empty() && reply[0] == 'E') throw UsageError(reply.substr(1));
  const std::string said = last_line(printed);
  const std::string tail = said.empty() ? "" : fmt::format(" ({})", said);
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* abbrev = sigabbrev_np(sig);
    throw UsageError(
        fmt::format("plugin {} crashed while loading: {} ({}){}", name,
                    abbrev != nullptr ? std::string("SIG") + abbrev : fmt::format("signal {}", sig),
                    strsignal(sig), tail));
  }
  throw UsageError(fmt::format(
      "plugin {} ended the program while loading (it called exit({})): a plugin must not exit{}",
      name, WIFEXITED(status) ? WEXITSTATUS(status) : -1, tail));
}

}  // namespace sb::detail
