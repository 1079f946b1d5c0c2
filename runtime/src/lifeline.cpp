// The launcher's lifeline (lifeline.hpp).
#include "scalebench/lifeline.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "scalebench/error.hpp"

namespace sb {

LifelineState probe_lifeline(const std::string& path) noexcept {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? LifelineState::gone : LifelineState::unknown;
  LifelineState state = LifelineState::unknown;
  if (::flock(fd, LOCK_SH | LOCK_NB) == 0) {
    state = LifelineState::gone;  // nobody holds it exclusively any more
  } else if (errno == EWOULDBLOCK) {
    state = LifelineState::alive;
  }
  ::close(fd);  // drops our shared lock, if we took it
  return state;
}

LifelineHold::LifelineHold(std::string path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw EnvironmentError(
        fmt::format("cannot create the run's lifeline {}: {}", path_, std::strerror(errno)));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    throw EnvironmentError(
        fmt::format("cannot lock the run's lifeline {}: {}", path_, std::strerror(err)));
  }
}

LifelineHold::~LifelineHold() {
  if (fd_ >= 0) ::close(fd_);
}

LifelineWatch::LifelineWatch(std::string path, double period_s, std::function<void()> on_gone) {
  if (path.empty()) return;
  thread_ = std::thread([this, path = std::move(path), period_s, on_gone = std::move(on_gone)] {
    const auto period = std::chrono::duration<double>(period_s);
    while (!stop_.load()) {
      if (probe_lifeline(path) == LifelineState::gone) {
        on_gone();
        return;
      }
      const auto until = std::chrono::steady_clock::now() + period;
      while (!stop_.load() && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
}

LifelineWatch::~LifelineWatch() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

}  // namespace sb
