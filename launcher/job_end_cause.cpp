// Why an MPI job ended (job_end_cause.hpp).
#include "job_end_cause.hpp"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "console.hpp"

namespace sb {
namespace {

/// `key value` lines (memory.oom_control, memory.events, /proc/vmstat): the value of `key`.
std::int64_t keyed_value(const std::string& file, const std::string& key) {
  std::ifstream in(file);
  std::string k;
  std::int64_t v = 0;
  while (in >> k >> v)
    if (k == key) return v;
  return -1;
}

/// Where the memory controller is mounted: v1 ".../memory", else the v2 unified mount.
struct Mounts {
  std::string v1, v2;
};
Mounts memory_mounts() {
  Mounts m;
  std::ifstream in("/proc/self/mountinfo");
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    std::vector<std::string> w;
    for (std::string x; f >> x;) w.push_back(x);
    const auto dash = std::find(w.begin(), w.end(), "-");
    if (dash == w.end() || dash + 3 >= w.end() || w.size() < 5) continue;
    const std::string& fstype = *(dash + 1);
    const std::string& opts = *(dash + 3);
    if (fstype == "cgroup" && ("," + opts + ",").find(",memory,") != std::string::npos) m.v1 = w[4];
    if (fstype == "cgroup2" && m.v2.empty()) m.v2 = w[4];
  }
  return m;
}

std::int64_t limit_of(const std::string& dir, bool v1) {
  std::ifstream in(dir + (v1 ? "/memory.limit_in_bytes" : "/memory.max"));
  std::string s;
  in >> s;
  if (s.empty() || s == "max") return -1;
  const long long v = std::atoll(s.c_str());
  return v > 0 && v < (1LL << 60) ? v : -1;
}

}  // namespace

OomWatch::OomWatch() {
  machine_start_ = keyed_value("/proc/vmstat", "oom_kill");
}

void OomWatch::note(pid_t pid) {
  static const Mounts mounts = memory_mounts();
  std::ifstream in(fmt::format("/proc/{}/cgroup", pid));
  for (std::string line; std::getline(in, line);) {
    // "4:memory:/a/b" (v1) or "0::/a/b" (v2)
    const auto c1 = line.find(':'), c2 = line.find(':', c1 + 1);
    if (c1 == std::string::npos || c2 == std::string::npos) continue;
    const std::string controllers = line.substr(c1 + 1, c2 - c1 - 1);
    std::string path = line.substr(c2 + 1);
    const bool v1 = ("," + controllers + ",").find(",memory,") != std::string::npos;
    const bool v2 = controllers.empty() && line.compare(0, c1, "0") == 0;
    if ((v1 && mounts.v1.empty()) || (v2 && mounts.v2.empty()) || (!v1 && !v2)) continue;
    // The cgroup and its ancestors: a limit may be set on any of them.
    while (true) {
      const std::string dir = (v1 ? mounts.v1 : mounts.v2) + (path == "/" ? "" : path);
      const std::string file = dir + (v1 ? "/memory.oom_control" : "/memory.events");
      if (start_.count(file) == 0) {
        const std::int64_t n = keyed_value(file, "oom_kill");
        if (n >= 0) start_[file] = n;
      }
      if (path == "/" || path.empty()) break;
      const auto slash = path.find_last_of('/');
      path = slash == 0 ? "/" : path.substr(0, slash);
    }
  }
}

std::string OomWatch::kills_since() const {
  static const Mounts mounts = memory_mounts();
  std::string deepest;  // the innermost cgroup that counted a kill names it best
  for (const auto& [file, n0] : start_) {
    const std::int64_t n = keyed_value(file, "oom_kill");
    if (n <= n0) continue;
    const bool v1 =
        file.size() > 19 && file.compare(file.size() - 19, 19, "/memory.oom_control") == 0;
    const std::string dir = file.substr(0, file.find_last_of('/'));
    const std::string root = v1 ? mounts.v1 : mounts.v2;
    const std::string shown = dir.size() > root.size() ? dir.substr(root.size()) : "/";
    const std::int64_t limit = limit_of(dir, v1);
    const std::string what = fmt::format(
        "memory cgroup {}{} counted {} OOM kill(s)", one_line(shown),
        limit > 0 ? fmt::format(" (limit {:.0f} MiB)", static_cast<double>(limit) / 1048576.0)
                  : std::string(),
        n - n0);
    if (deepest.empty() || shown.size() > deepest.size()) deepest = what;
  }
  if (!deepest.empty()) return deepest;
  const std::int64_t machine = keyed_value("/proc/vmstat", "oom_kill");
  if (machine_start_ >= 0 && machine > machine_start_)
    return fmt::format("the kernel counted {} OOM kill(s) on this host meanwhile (/proc/vmstat)",
                       machine - machine_start_);
  return {};
}

std::string process_limit_hint() {
  rlimit rl{};
  if (::geteuid() == 0 || ::getrlimit(RLIMIT_NPROC, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
      rl.rlim_cur >= 4096)
    return {};
  return fmt::format("; the limit on processes and threads, ulimit -u, is {}", rl.rlim_cur);
}

std::string signal_abbrev(int sig) {
  const char* a = sigabbrev_np(sig);
  return a != nullptr ? std::string("SIG") + a : fmt::format("signal {}", sig);
}

std::string describe_job_end(int status, const std::deque<std::string>& log_tail,
                             const OomWatch& oom) {
  std::string d;
  if (WIFEXITED(status)) {
    d = fmt::format("MPI job exited with status {}", WEXITSTATUS(status));
  } else if (WIFSIGNALED(status)) {
    d = fmt::format("MPI job killed by {}", signal_abbrev(WTERMSIG(status)));
  }
  // OpenMPI: "mpiexec noticed that process rank 1 with PID 123 on node n1 exited on signal 9
  // (Killed)."; srun: "srun: error: n1: task 1: Killed"; SLURM's step: "Detected 1 oom_kill
  // event".
  static const std::regex ompi(
      R"(process rank (\d+) with PID \d+ on node (\S+) exited on signal (\d+))");
  static const std::regex srun(R"(error: (\S+): tasks? ([0-9,-]+): (.+))");
  bool slurm_oom = false;
  bool sigkill = (WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGKILL) ||
                 (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  std::string rank_end, fallback;
  for (const auto& line : log_tail) {
    std::smatch m;
    if (rank_end.empty() && std::regex_search(line, m, ompi)) {
      const int sig = std::stoi(m[3].str());
      sigkill = sigkill || sig == SIGKILL;
      rank_end = fmt::format("rank {} on {} was killed by {} ({})", m[1].str(), m[2].str(),
                             signal_abbrev(sig), strsignal(sig));
    } else if (rank_end.empty() && std::regex_search(line, m, srun)) {
      rank_end = fmt::format("rank {} on {}: {}", m[2].str(), m[1].str(), one_line(m[3].str()));
      sigkill = sigkill || m[3].str().find("Killed") != std::string::npos;
    }
    if (line.find("oom_kill event") != std::string::npos ||
        line.find("oom-kill") != std::string::npos ||
        line.find("OUT_OF_MEMORY") != std::string::npos)
      slurm_oom = true;
    if (fallback.empty() &&
        (line.find("exited on signal") != std::string::npos ||
         line.find("noticed that process rank") != std::string::npos ||
         line.find("scalebench-rank") != std::string::npos ||
         line.find("cannot start") != std::string::npos ||
         line.find("killed") != std::string::npos || line.find("Killed") != std::string::npos ||
         line.find("ERROR") != std::string::npos || line.find("error:") != std::string::npos))
      fallback = one_line(line);
  }
  if (!rank_end.empty()) {
    d += ": " + rank_end;
  } else if (!fallback.empty()) {
    d += ": " + fallback;
  }
  // The OOM killer's only signal is SIGKILL: a rank that ended otherwise was not its victim.
  const std::string kills = sigkill ? oom.kills_since() : std::string();
  if (!kills.empty()) {
    d += fmt::format(": killed by the OOM killer ({})", kills);
  } else if (slurm_oom && sigkill) {
    d += ": killed by the OOM killer (the batch system's job step reported an oom_kill event)";
  }
  return d;
}

}  // namespace sb
