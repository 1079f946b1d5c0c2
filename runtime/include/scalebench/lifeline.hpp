#pragma once
/// @file lifeline.hpp
/// The launcher's lifeline: the job never outlives the `scalebench run` that started it.
///
/// The launcher holds an exclusive flock(2) on a file in its work folder for as long as it lives.
/// The descriptor is close-on-exec, so neither mpiexec/srun nor the ranks inherit it, and the
/// kernel drops the lock when the launcher ends, however it ends (kill -9 included). The
/// scheduler rank watches the file: when the lock can be taken (or the file is gone), the
/// launcher is dead and the scheduler ends the job. The same look tells a second launcher
/// whether the run that owns a work folder is still alive (one writer per report).
/// flock reaches across hosts on file systems that support it (NFSv4, Lustre, GPFS); where it
/// does not, the state is `unknown` and nothing is concluded from it.

#include <atomic>
#include <functional>
#include <string>
#include <thread>

namespace sb {

enum class LifelineState { alive, gone, unknown };

/// One look at the lifeline file `path`: alive while its lock is held elsewhere, gone when the
/// lock can be taken or the file does not exist.
[[nodiscard]] LifelineState probe_lifeline(const std::string& path) noexcept;

/// The launcher's end: creates `path` and holds its lock until destroyed. Throws
/// sb::EnvironmentError when the file cannot be created or locked.
class LifelineHold {
 public:
  explicit LifelineHold(std::string path);
  ~LifelineHold();
  LifelineHold(const LifelineHold&) = delete;
  LifelineHold& operator=(const LifelineHold&) = delete;
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

/// The scheduler's end: looks at `path` every `period_s` seconds on a thread of its own and
/// calls `on_gone` once, on that thread, when the launcher is gone. An empty path watches
/// nothing.
class LifelineWatch {
 public:
  LifelineWatch(std::string path, double period_s, std::function<void()> on_gone);
  ~LifelineWatch();
  LifelineWatch(const LifelineWatch&) = delete;
  LifelineWatch& operator=(const LifelineWatch&) = delete;

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace sb
