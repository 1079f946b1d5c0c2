// Many reports read in a few child processes (merge.hpp: read_reports_isolated).
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "scalebench/error.hpp"
#include "scalebench/merge.hpp"
#include "scalebench/report.hpp"
#include "scalebench/settings.hpp"

namespace sb::results {
namespace {

using Clock = std::chrono::steady_clock;

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

enum class ReadEnd { ok, closed, timeout };

/// Reads exactly `n` bytes before `deadline`.
ReadEnd read_exact(int fd, void* data, std::size_t n, Clock::time_point deadline) {
  auto* p = static_cast<char*>(data);
  while (n > 0) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return ReadEnd::timeout;
    pollfd pfd{fd, POLLIN, 0};
    const int pr = ::poll(&pfd, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (pr < 0 && errno == EINTR) continue;
    if (pr <= 0) continue;
    const ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return ReadEnd::closed;
    p += r;
    n -= static_cast<std::size_t>(r);
  }
  return ReadEnd::ok;
}

/// A reader process: the files `files[next..]`, in order, each answered as a status byte ('J' a
/// model as CBOR, 'E' a one-line error), a length (uint64) and the payload.
struct Reader {
  pid_t pid = -1;
  int fd = -1;
  std::vector<std::size_t> files;
  std::size_t next = 0;
};

void start(Reader& r, const std::vector<std::string>& paths, bool slim) {
  int fds[2];
  if (::pipe(fds) != 0)
    throw EnvironmentError(fmt::format("cannot create a pipe: {}", std::strerror(errno)));
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw EnvironmentError(fmt::format("cannot fork to read reports: {}", std::strerror(errno)));
  }
  if (pid == 0) {
    ::close(fds[0]);
    for (std::size_t k = r.next; k < r.files.size(); ++k) {
      char status = 'J';
      std::vector<std::uint8_t> payload;
      try {
        payload = nlohmann::json::to_cbor(slim ? read_report_slim(paths[r.files[k]])
                                               : read_report(paths[r.files[k]]));
      } catch (const std::exception& e) {
        status = 'E';
        const std::string msg = e.what();
        payload.assign(msg.begin(), msg.end());
      }
      const std::uint64_t size = payload.size();
      if (!write_all(fds[1], &status, 1) || !write_all(fds[1], &size, sizeof size) ||
          !write_all(fds[1], payload.data(), payload.size()))
        ::_exit(3);
    }
    ::close(fds[1]);
    ::_exit(0);
  }
  ::close(fds[1]);
  r.pid = pid;
  r.fd = fds[0];
}

void stop(Reader& r, bool kill) {
  if (r.fd >= 0) ::close(r.fd);
  r.fd = -1;
  if (r.pid > 0) {
    if (kill) ::kill(r.pid, SIGKILL);
    while (::waitpid(r.pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  r.pid = -1;
}

double read_limit_s(const std::string& path) {
  const double set = settings::report_read_timeout_s();
  if (set > 0) return set;
  struct stat st {};
  const double size = ::stat(path.c_str(), &st) == 0 ? static_cast<double>(st.st_size) : 0.0;
  return 60.0 + size / 20e6;
}

}  // namespace

void read_reports_isolated(const std::vector<std::string>& paths, bool slim, std::size_t jobs,
                           const std::function<void(std::size_t, nlohmann::json&&)>& on_report,
                           const std::function<void(std::size_t, const std::string&)>& on_error) {
  if (paths.empty()) return;
  jobs = std::clamp<std::size_t>(jobs, 1, paths.size());
  std::vector<Reader> readers(jobs);
  for (std::size_t i = 0; i < paths.size(); ++i) readers[i % jobs].files.push_back(i);
  struct Cleanup {
    std::vector<Reader>& rs;
    ~Cleanup() {
      for (auto& r : rs) stop(r, true);
    }
  } cleanup{readers};
  for (auto& r : readers) start(r, paths, slim);
  for (std::size_t i = 0; i < paths.size(); ++i) {
    Reader& r = readers[i % jobs];
    const double limit_s = read_limit_s(paths[i]);
    const auto deadline =
        Clock::now() +
        std::chrono::milliseconds(static_cast<std::int64_t>(std::min(limit_s, 1e7) * 1e3));
    char status = 0;
    std::uint64_t size = 0;
    std::vector<std::uint8_t> payload;
    ReadEnd end = read_exact(r.fd, &status, 1, deadline);
    if (end == ReadEnd::ok) end = read_exact(r.fd, &size, sizeof size, deadline);
    if (end == ReadEnd::ok) {
      payload.resize(static_cast<std::size_t>(size));
      end = read_exact(r.fd, payload.data(), payload.size(), deadline);
    }
    ++r.next;
    if (end != ReadEnd::ok) {
      // The reader crashed or hung on this file: it alone is lost; a new reader goes on.
      stop(r, true);
      on_error(i, end == ReadEnd::timeout
                      ? fmt::format("report {} is damaged: reading it did not finish within {} s "
                                    "(the HDF5 library looped on it); re-run to write it again",
                                    paths[i], limit_s)
                      : fmt::format("report {} is damaged: reading it crashed the HDF5 library; "
                                    "re-run to write it again",
                                    paths[i]));
      if (r.next < r.files.size()) start(r, paths, slim);
      continue;
    }
    if (status == 'E') {
      on_error(i, std::string(payload.begin(), payload.end()));
    } else {
      on_report(i, nlohmann::json::from_cbor(payload));
    }
    if (r.next == r.files.size()) stop(r, false);
  }
}

}  // namespace sb::results
