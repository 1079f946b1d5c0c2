#pragma once
/// @file launcher_run.hpp
/// Helpers of the tests that run the `scalebench` program (SB_LAUNCHER_EXE) and check what a
/// fault left: its exit code with stdout and stderr kept in files, the process table, work
/// folders and temporary files beside a report, and a program started as another user.

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "scratch_dir.hpp"

namespace sb::test_support {

/// The exit code of a wait status: 128 + n for a signal.
inline int exit_code_of(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/// `bash -c CMD`'s exit code.
inline int bash(const std::string& cmd) {
  std::string quoted;
  for (const char c : cmd) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return exit_code_of(std::system(("bash -c '" + quoted + "'").c_str()));
}

/// `scalebench ARGS` with `env` (NAME=value words) in front, at most `limit_s` seconds
/// (124: it was still running: a hang), stdout and stderr in DIR/out and DIR/err.
inline int scalebench_in(const std::filesystem::path& dir, const std::string& args,
                         const std::string& env = "", int limit_s = 120) {
  return bash(fmt::format("cd {0} && env {1} timeout -k 5 {2} {3} {4} > {0}/out 2> {0}/err",
                          dir.string(), env, limit_s, SB_LAUNCHER_EXE, args));
}

/// The lines of `text` (a last line without '\n' counts).
inline std::size_t line_count(const std::string& text) {
  const auto n = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
  return n + (!text.empty() && text.back() != '\n' ? 1 : 0);
}

/// Processes whose command line holds `needle` (pgrep -f); the first letter in brackets keeps
/// the shell that runs pgrep from matching itself.
inline int processes_matching(const std::string& needle) {
  const std::string cmd =
      fmt::format("pgrep -f -c -- '[{}]{}' 2>/dev/null", needle.substr(0, 1), needle.substr(1));
  FILE* p = ::popen(cmd.c_str(), "r");
  int n = 0;
  if (p != nullptr) {
    if (std::fscanf(p, "%d", &n) != 1) n = 0;
    ::pclose(p);
  }
  return n;
}

/// Waits up to `seconds` for no process to match `needle`; true when none is left.
inline bool none_left(const std::string& needle, double seconds = 15) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (processes_matching(needle) > 0) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return true;
}

/// The run work folders (.scalebench-*) in `dir`.
inline std::vector<std::filesystem::path> work_folders(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().filename().string().rfind(".scalebench-", 0) == 0) out.push_back(e.path());
  return out;
}

/// Files in `dir` (not below) whose name holds ".tmp" (a writer's temporary file).
inline std::vector<std::string> temp_files(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().filename().string().find(".tmp") != std::string::npos)
      out.push_back(e.path().string());
  return out;
}

/// Waits until a file whose name starts with `prefix`, somewhere under `dir`, holds `text`.
inline bool wait_for_text(const std::filesystem::path& dir, const std::string& prefix,
                          const std::string& text, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    std::error_code ec;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir, ec))
      if (e.path().filename().string().rfind(prefix, 0) == 0 &&
          slurp(e.path()).find(text) != std::string::npos)
        return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

/// Starts `bash -c CMD` in the background with stdout and stderr in DIR/out and DIR/err; `exec`
/// it so that the pid is the command's own.
inline pid_t start_bash(const std::filesystem::path& dir, const std::string& cmd) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const std::string out = (dir / "out").string(), err = (dir / "err").string();
    if (!std::freopen(out.c_str(), "w", stdout) || !std::freopen(err.c_str(), "w", stderr))
      ::_exit(99);
    ::execl("/bin/bash", "bash", "-c", cmd.c_str(), nullptr);
    ::_exit(98);
  }
  return pid;
}

inline int wait_exit(pid_t pid) {
  int st = 0;
  ::waitpid(pid, &st, 0);
  return exit_code_of(st);
}

/// An unprivileged user with no other process on the machine (a uid no account uses), as
/// `setpriv` runs a command under it: permissions and process limits apply to it for real,
/// and other users' processes (other test suites run as nobody) do not count against its
/// limits.
inline int test_uid() {
  return 40000 + static_cast<int>(::getpid() % 20000);
}
inline std::string as_test_user() {
  return fmt::format("setpriv --reuid={0} --regid={0} --clear-groups --", test_uid());
}

}  // namespace sb::test_support
