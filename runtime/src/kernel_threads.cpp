// The node's kernel threads and their CPU time (kernel_threads.hpp).
#include "kernel_threads.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace sb::detail {
namespace {

constexpr unsigned long kPfKthread = 0x00200000;  // include/linux/sched.h

/// The text of /proc/PID/stat after the command's closing parenthesis, or empty.
std::string stat_fields(int pid) {
  char path[48];
  std::snprintf(path, sizeof path, "/proc/%d/stat", pid);
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  char buf[1024];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return {};
  buf[n] = '\0';
  const char* close = std::strrchr(buf, ')');  // a command may hold spaces and parentheses
  return close ? std::string(close + 1) : std::string();
}

/// Whether the task may run on one of `cpus` (a per-CPU kernel thread of another CPU may not).
bool may_run_on(int pid, const std::set<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(pid, sizeof set, &set) != 0) return true;
  return std::any_of(cpus.begin(), cpus.end(),
                     [&](int c) { return c >= 0 && c < CPU_SETSIZE && CPU_ISSET(c, &set); });
}

}  // namespace

KernelThreadTimes read_kernel_threads(const std::set<int>& cpus) {
  KernelThreadTimes out;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return out;
  const double tick = static_cast<double>(std::max(1L, sysconf(_SC_CLK_TCK)));
  while (const dirent* e = ::readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || pid <= 0) continue;
    const std::string f = stat_fields(static_cast<int>(pid));
    if (f.empty()) continue;
    // After ")": state(3) ppid pgrp session tty_nr tpgid flags(9) minflt cminflt majflt
    // cmajflt utime(14) stime(15), in clock ticks
    double field[16] = {};
    const char* p = f.c_str();
    for (int k = 3; k <= 15; ++k) {
      while (*p == ' ') ++p;
      if (*p == '\0') break;
      field[k] = std::strtod(p, nullptr);  // the state letter reads as 0
      while (*p != ' ' && *p != '\0') ++p;
    }
    const auto flags = static_cast<unsigned long>(field[9]);
    const double utime = field[14], stime = field[15];
    if ((flags & kPfKthread) == 0 || !may_run_on(static_cast<int>(pid), cpus)) continue;
    out[static_cast<int>(pid)] = (utime + stime) / tick;
  }
  ::closedir(proc);
  return out;
}

double kernel_threads_cpu_since(const KernelThreadTimes& before, const KernelThreadTimes& after) {
  double sum = 0;
  for (const auto& [pid, t] : after) {
    const auto b = before.find(pid);
    sum += std::max(0.0, t - (b == before.end() ? 0.0 : b->second));
  }
  return sum;
}

}  // namespace sb::detail
