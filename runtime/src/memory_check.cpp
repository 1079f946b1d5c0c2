// The worker's pre-allocation memory check of a case.
#include "memory_check.hpp"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "scalebench/case_forecast.hpp"
#include "scalebench/error.hpp"
#include "scalebench/settings.hpp"

namespace sb::detail {
namespace {

/// The first number in a file ("max" and unreadable files give -1).
double read_number(const std::string& path) {
  std::ifstream in(path);
  std::string word;
  if (!(in >> word) || word == "max") return -1;
  char* end = nullptr;
  const double v = std::strtod(word.c_str(), &end);
  return (end != word.c_str() && v >= 0) ? v : -1;
}

/// kB value of a /proc/meminfo line, in bytes, or -1.
double meminfo_bytes(const std::string& key) {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) != 0) continue;
    std::istringstream ss(line.substr(key.size() + 1));
    double kb = -1;
    if (ss >> kb) return kb * 1024.0;
  }
  return -1;
}

/// Room left under this process's cgroup memory limit, or -1 when unlimited or unknown.
double cgroup_room() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  double best = -1;
  auto consider = [&](double limit, double used) {
    // Limits near 2^63 mean "unlimited" on cgroup v1.
    if (limit < 0 || limit > 1e18) return;
    const double room = limit - (used < 0 ? 0 : used);
    if (best < 0 || room < best) best = room < 0 ? 0 : room;
  };
  while (std::getline(in, line)) {
    // v2: "0::/path"; v1: "N:memory:/path" (or a list of controllers containing memory).
    const auto c1 = line.find(':');
    const auto c2 = c1 == std::string::npos ? c1 : line.find(':', c1 + 1);
    if (c2 == std::string::npos) continue;
    const std::string controllers = line.substr(c1 + 1, c2 - c1 - 1);
    const std::string path = line.substr(c2 + 1);
    if (controllers.empty()) {
      for (const std::string& dir : {"/sys/fs/cgroup" + path, std::string("/sys/fs/cgroup")})
        if (const double lim = read_number(dir + "/memory.max"); lim >= 0) {
          consider(lim, read_number(dir + "/memory.current"));
          break;
        }
    } else if (("," + controllers + ",").find(",memory,") != std::string::npos) {
      for (const std::string& dir :
           {"/sys/fs/cgroup/memory" + path, std::string("/sys/fs/cgroup/memory")})
        if (const double lim = read_number(dir + "/memory.limit_in_bytes"); lim >= 0) {
          consider(lim, read_number(dir + "/memory.usage_in_bytes"));
          break;
        }
    }
  }
  return best;
}

}  // namespace

double host_memory_available() {
  if (const double set = settings::host_memory_bytes(); set > 0) return set;
  double avail = meminfo_bytes("MemAvailable");
  if (const double room = cgroup_room(); room >= 0 && (avail < 0 || room < avail)) avail = room;
  return avail;
}

NodeWorkers node_workers(MPI_Comm workers, bool has_gpu) {
  MPI_Comm node = MPI_COMM_NULL;
  SB_MPI_CHECK(MPI_Comm_split_type(workers, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  NodeWorkers n;
  SB_MPI_CHECK(MPI_Comm_size(node, &n.all));
  int mine = has_gpu ? 1 : 0;
  SB_MPI_CHECK(MPI_Allreduce(&mine, &n.gpu, 1, MPI_INT, MPI_SUM, node));
  SB_MPI_CHECK(MPI_Comm_free(&node));
  return n;
}

void check_memory(const std::string& workload, const MemoryNeed& need, const MemoryBudget& budget) {
  // The same line as a forecast's (case_forecast.hpp), so `run --list` says what the run says.
  const std::string why = memory_shortfall(workload, need, budget.host_total, budget.host_sharers,
                                           budget.gpu_free, budget.gpu);
  if (!why.empty()) throw EnvironmentError(why);
}

}  // namespace sb::detail
