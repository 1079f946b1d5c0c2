// read_report_isolated: read_report in a child process (report.hpp).
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "scalebench/error.hpp"
#include "scalebench/input_file.hpp"
#include "scalebench/report.hpp"
#include "scalebench/settings.hpp"

namespace sb::results {

namespace {

bool write_all(int fd, const void* data, std::size_t n) {
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

}  // namespace

nlohmann::json read_report_isolated(const std::string& path) {
  // A FIFO would block the reader until its timeout, /dev/zero would feed it for ever.
  check_regular_input(path, "report");
  int fds[2];
  if (::pipe(fds) != 0)
    throw EnvironmentError(fmt::format("cannot create a pipe: {}", std::strerror(errno)));
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw EnvironmentError(fmt::format("cannot fork to read {}: {}", path, std::strerror(errno)));
  }
  if (pid == 0) {
    // Child: one status byte ('J' model as CBOR, 'E' one-line error), then the payload.
    ::close(fds[0]);
    char status = 'J';
    std::vector<std::uint8_t> payload;
    try {
      payload = nlohmann::json::to_cbor(read_report(path));
    } catch (const std::exception& e) {
      status = 'E';
      const std::string msg = e.what();
      payload.assign(msg.begin(), msg.end());
    }
    const bool ok =
        write_all(fds[1], &status, 1) && write_all(fds[1], payload.data(), payload.size());
    ::close(fds[1]);
    ::_exit(ok ? 0 : 3);
  }
  ::close(fds[1]);
  // Damaged files can also make the HDF5 library loop for ever (a fuzzed global heap did): the
  // child gets a minute plus one second per 20 MB of file (SCALEBENCH_REPORT_READ_TIMEOUT_S
  // overrides it), then it is killed.
  struct stat st {};
  const double size = ::stat(path.c_str(), &st) == 0 ? static_cast<double>(st.st_size) : 0.0;
  double limit_s = settings::report_read_timeout_s();
  if (limit_s <= 0) limit_s = 60.0 + size / 20e6;
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::milliseconds(static_cast<std::int64_t>(std::min(limit_s, 1e7) * 1e3));
  std::vector<std::uint8_t> data;
  char buf[1 << 16];
  bool hung = false;
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) {
      hung = true;
      break;
    }
    pollfd pfd{fds[0], POLLIN, 0};
    const int pr = ::poll(&pfd, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (pr < 0 && errno == EINTR) continue;
    if (pr == 0) continue;
    const ssize_t r = ::read(fds[0], buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    data.insert(data.end(), buf, buf + r);
  }
  ::close(fds[0]);
  if (hung) {
    ::kill(pid, SIGKILL);
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    throw UsageError(fmt::format(
        "report {} is damaged: reading it did not finish within {} s (the HDF5 library looped on "
        "it); re-run to write it again",
        path, limit_s));
  }
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  // The child ends with status 0 after writing its answer; anything else (a signal, or a
  // sanitizer's exit after a fault inside the HDF5 library) means reading the file crashed.
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0 || data.empty()) {
    const std::string how =
        WIFSIGNALED(wstatus)
            ? fmt::format("signal {}, {}", WTERMSIG(wstatus), strsignal(WTERMSIG(wstatus)))
            : fmt::format("exit status {}", WEXITSTATUS(wstatus));
    throw UsageError(fmt::format(
        "report {} is damaged: reading it crashed the HDF5 library ({}); re-run to write it again",
        path, how));
  }
  const std::vector<std::uint8_t> payload(data.begin() + 1, data.end());
  if (data[0] == 'E') throw UsageError(std::string(payload.begin(), payload.end()));
  return nlohmann::json::from_cbor(payload);
}

}  // namespace sb::results
