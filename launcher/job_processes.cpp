// The processes of a job on this host (job_processes.hpp).
#include "job_processes.hpp"

#include <dirent.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

namespace sb {
namespace {

/// pid, ppid, state and name of /proc/PID/stat ("pid (comm) state ppid ..."; comm may hold
/// spaces and parentheses, so the last ')' ends it).
bool read_stat(pid_t pid, JobProc& p) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return false;
  const std::size_t open = line.find('('), close = line.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close + 4 > line.size())
    return false;
  p.pid = pid;
  p.comm = line.substr(open + 1, close - open - 1);
  p.state = line[close + 2];
  p.ppid = static_cast<pid_t>(std::strtol(line.c_str() + close + 4, nullptr, 10));
  return true;
}

int rank_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  std::string env((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::size_t at = 0;
  std::map<std::string, std::string> vars;
  while (at < env.size()) {
    const std::size_t end = std::min(env.find('\0', at), env.size());
    const std::string kv = env.substr(at, end - at);
    const std::size_t eq = kv.find('=');
    if (eq != std::string::npos) vars[kv.substr(0, eq)] = kv.substr(eq + 1);
    at = end + 1;
  }
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID", "PMI_RANK"}) {
    const auto it = vars.find(name);
    if (it == vars.end() || it->second.empty()) continue;
    char* e = nullptr;
    const long r = std::strtol(it->second.c_str(), &e, 10);
    if (*e == '\0' && r >= 0) return static_cast<int>(r);
  }
  return -1;
}

}  // namespace

std::vector<JobProc> processes_below(pid_t root, bool with_rank) {
  std::multimap<pid_t, JobProc> by_parent;
  if (DIR* d = ::opendir("/proc")) {
    while (const dirent* e = ::readdir(d)) {
      char* end = nullptr;
      const long pid = std::strtol(e->d_name, &end, 10);
      if (end == e->d_name || *end != '\0' || pid <= 0) continue;
      JobProc p;
      if (read_stat(static_cast<pid_t>(pid), p)) by_parent.emplace(p.ppid, p);
    }
    ::closedir(d);
  }
  std::vector<JobProc> out;
  std::vector<pid_t> todo = {root};
  for (std::size_t i = 0; i < todo.size(); ++i) {
    const auto [lo, hi] = by_parent.equal_range(todo[i]);
    for (auto it = lo; it != hi; ++it) {
      JobProc p = it->second;
      if (with_rank) p.rank = rank_of(p.pid);
      todo.push_back(p.pid);
      out.push_back(std::move(p));
    }
  }
  return out;
}

}  // namespace sb
