// The CPUs this process may use (cpu_allowance.hpp).
#include "scalebench/cpu_allowance.hpp"

#include <hwloc.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "scalebench/rank_protocol.hpp"
#include "scalebench/settings.hpp"

namespace sb {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
  const auto b = s.find_first_not_of(" \t\n");
  return b == std::string::npos ? std::string() : s.substr(b);
}

/// (controllers, path) of each /proc/self/cgroup line: "" controllers for cgroup v2.
std::vector<std::pair<std::string, std::string>> cgroup_lines(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const auto c1 = line.find(':');
    const auto c2 = c1 == std::string::npos ? c1 : line.find(':', c1 + 1);
    if (c2 == std::string::npos) continue;
    out.emplace_back(line.substr(c1 + 1, c2 - c1 - 1), line.substr(c2 + 1));
  }
  return out;
}

bool has_controller(const std::string& list, const std::string& name) {
  return ("," + list + ",").find("," + name + ",") != std::string::npos;
}

/// `path` and its parents up to the root: "/a/b", "/a", "".
std::vector<std::string> up_to_root(std::string path) {
  std::vector<std::string> out;
  while (!path.empty() && path != "/") {
    out.push_back(path);
    const auto slash = path.rfind('/');
    path = slash == std::string::npos ? std::string() : path.substr(0, slash);
  }
  out.emplace_back();
  return out;
}

/// Folders a v1 controller may be mounted at under `root`.
std::vector<std::string> v1_mounts(const std::string& root, const std::string& controllers,
                                   const std::string& name) {
  return {root + "/" + controllers, root + "/" + name, root + "/cpu,cpuacct"};
}

bool exists(const std::string& path) {
  return ::access(path.c_str(), R_OK) == 0;
}

/// hwloc's view of the whole node (disallowed CPUs included): cores and their CPU sets.
struct NodeTopology {
  hwloc_topology_t t = nullptr;
  NodeTopology() {
    if (hwloc_topology_init(&t) != 0) {
      t = nullptr;
      return;
    }
    hwloc_topology_set_flags(t, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
    if (hwloc_topology_load(t) != 0) {
      hwloc_topology_destroy(t);
      t = nullptr;
    }
  }
  ~NodeTopology() {
    if (t != nullptr) hwloc_topology_destroy(t);
  }
  NodeTopology(const NodeTopology&) = delete;
  NodeTopology& operator=(const NodeTopology&) = delete;
  [[nodiscard]] int count(hwloc_obj_type_t type) const {
    return t == nullptr ? 0 : std::max(0, hwloc_get_nbobjs_by_type(t, type));
  }
  /// Cores with at least one of `cpus` (Linux CPU ids); `cpus.size()` without a topology.
  [[nodiscard]] int cores_of(const std::vector<int>& cpus) const {
    if (t == nullptr || count(HWLOC_OBJ_CORE) == 0) return static_cast<int>(cpus.size());
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    for (const int c : cpus) hwloc_bitmap_set(set, static_cast<unsigned>(c));
    int n = 0;
    for (int i = 0; i < count(HWLOC_OBJ_CORE); ++i) {
      const hwloc_obj_t core = hwloc_get_obj_by_type(t, HWLOC_OBJ_CORE, static_cast<unsigned>(i));
      if (core != nullptr && core->cpuset != nullptr && hwloc_bitmap_intersects(core->cpuset, set))
        ++n;
    }
    hwloc_bitmap_free(set);
    return n;
  }
};

std::vector<int> affinity_cpus() {
  std::vector<int> out;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

std::optional<int> positive_int(const std::optional<std::string>& v) {
  if (!v || v->empty()) return std::nullopt;
  try {
    std::size_t used = 0;
    const int n = std::stoi(*v, &used);
    if (used == v->size() && n > 0) return n;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

/// The batch system's CPUs for this process, when it names them. Not in a rank that scalebench
/// started: its srun passes --cpus-per-task=1 (and the job's variables reach every node alike),
/// while the step's cgroup, which the kernel enforces, holds the CPUs the rank may use.
std::vector<CpuLimit> scheduler_limits(const NodeTopology& topo) {
  std::vector<CpuLimit> out;
  using settings::environment_variable;
  if (const auto placed = environment_variable(std::string(protocol::kPlacementVariable).c_str());
      placed && !placed->empty())
    return out;
  // Inside a job step (srun), a task has --cpus-per-task CPUs; the batch script itself, in
  // the batch step, has every CPU of the job on its node.
  const auto step = environment_variable("SLURM_STEP_ID");
  if (step && !step->empty() && *step != "batch" && *step != "4294967294")
    if (const auto n = positive_int(environment_variable("SLURM_CPUS_PER_TASK")))
      out.push_back({"SLURM_CPUS_PER_TASK", *n, std::to_string(*n)});
  for (const char* name : {"LSB_BIND_CPU_LIST", "SGE_BINDING"})
    if (const auto v = environment_variable(name); v && !v->empty()) {
      const std::vector<int> cpus = parse_cpu_list(*v);
      if (!cpus.empty()) out.push_back({name, topo.cores_of(cpus), format_cpu_list(cpus)});
    }
  if (const auto id = environment_variable("PBS_JOBID"); id && !id->empty())
    if (const auto n = positive_int(environment_variable("NCPUS")))
      out.push_back({"NCPUS (PBS)", *n, std::to_string(*n)});
  return out;
}

CpuAllowance find_allowance() {
  CpuAllowance a;
  const NodeTopology topo;
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  a.node_cpus = std::max(
      1, topo.count(HWLOC_OBJ_PU) > 0 ? topo.count(HWLOC_OBJ_PU) : static_cast<int>(online));
  a.node_cores =
      std::max(1, topo.count(HWLOC_OBJ_CORE) > 0 ? topo.count(HWLOC_OBJ_CORE) : a.node_cpus);
  a.usable_cores = a.node_cores;
  const std::vector<int> mask = affinity_cpus();
  a.allowed_cpus = mask.empty() ? a.node_cpus : static_cast<int>(mask.size());
  a.cpu_list = format_cpu_list(mask);
  std::vector<CpuLimit> limits;
  if (!mask.empty()) {
    const int cores = std::max(1, topo.cores_of(mask));
    const std::string cgroups = read_text("/proc/self/cgroup");
    const std::vector<int> cpuset = cgroup_cpuset(cgroups, "/sys/fs/cgroup");
    const bool by_cpuset = !cpuset.empty() && cpuset == mask;
    if (cores < a.node_cores)
      limits.push_back(
          {by_cpuset ? "cgroup cpuset" : "affinity mask", cores, "CPUs " + a.cpu_list});
  }
  std::string quota_detail;
  if (const int q =
          cgroup_quota_cpus(read_text("/proc/self/cgroup"), "/sys/fs/cgroup", &quota_detail);
      q > 0 && q < a.node_cores)
    limits.push_back({"cgroup CPU quota", q, quota_detail});
  for (auto& l : scheduler_limits(topo))
    if (l.cores < a.node_cores) limits.push_back(std::move(l));
  std::stable_sort(limits.begin(), limits.end(),
                   [](const CpuLimit& x, const CpuLimit& y) { return x.cores < y.cores; });
  a.limits = std::move(limits);
  if (!a.limits.empty()) a.usable_cores = std::max(1, a.limits.front().cores);
  return a;
}

}  // namespace

std::vector<int> parse_cpu_list(std::string_view text) {
  std::set<int> cpus;
  std::string item;
  const auto flush = [&]() -> bool {
    if (item.empty()) return true;
    const auto dash = item.find('-');
    try {
      std::size_t used = 0;
      const int lo = std::stoi(item.substr(0, dash), &used);
      if (used != (dash == std::string::npos ? item.size() : dash) || lo < 0) return false;
      int hi = lo;
      if (dash != std::string::npos) {
        const std::string rest = item.substr(dash + 1);
        hi = std::stoi(rest, &used);
        if (used != rest.size() || hi < lo || hi - lo > 1 << 16) return false;
      }
      for (int c = lo; c <= hi; ++c) cpus.insert(c);
    } catch (const std::exception&) {
      return false;
    }
    item.clear();
    return true;
  };
  for (const char ch : text) {
    if (ch == ',' || ch == ' ' || ch == '\n' || ch == '\t') {
      if (!flush()) return {};
    } else {
      item.push_back(ch);
    }
  }
  if (!flush()) return {};
  return {cpus.begin(), cpus.end()};
}

std::string format_cpu_list(std::vector<int> cpus) {
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    out += (out.empty() ? "" : ",") +
           (j == i ? std::to_string(cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]));
    i = j + 1;
  }
  return out;
}

int cgroup_quota_cpus(const std::string& proc_cgroup, const std::string& root,
                      std::string* detail) {
  double best = 0;
  std::string why;
  const auto consider = [&](double quota, double period, const std::string& where) {
    if (!(quota > 0) || !(period > 0)) return;
    const double cpus = quota / period;
    if (best == 0 || cpus < best) {
      best = cpus;
      why = fmt::format("quota {:.0f} us per {:.0f} us period ({})", quota, period, where);
    }
  };
  for (const auto& [controllers, path] : cgroup_lines(proc_cgroup)) {
    if (controllers.empty()) {
      for (const auto& p : up_to_root(path)) {
        std::istringstream in(read_text(root + p + "/cpu.max"));
        std::string quota;
        double period = 0;
        if (in >> quota >> period && quota != "max")
          consider(std::atof(quota.c_str()), period, root + p);
      }
    } else if (has_controller(controllers, "cpu")) {
      for (const auto& mount : v1_mounts(root, controllers, "cpu")) {
        if (!exists(mount + "/cpu.cfs_quota_us")) continue;
        for (const auto& p : up_to_root(path)) {
          const std::string dir = mount + p;
          const std::string q = trimmed(read_text(dir + "/cpu.cfs_quota_us"));
          const std::string per = trimmed(read_text(dir + "/cpu.cfs_period_us"));
          if (!q.empty() && !per.empty())
            consider(std::atof(q.c_str()), std::atof(per.c_str()), dir);
        }
        break;
      }
    }
  }
  if (detail != nullptr) *detail = why;
  // 1e-9: a quota of exactly k periods is k CPUs.
  return best > 0 ? std::max(1, static_cast<int>(std::ceil(best - 1e-9))) : 0;
}

std::vector<int> cgroup_cpuset(const std::string& proc_cgroup, const std::string& root) {
  for (const auto& [controllers, path] : cgroup_lines(proc_cgroup)) {
    std::vector<std::string> files;
    if (controllers.empty()) {
      files = {root + path + "/cpuset.cpus.effective"};
    } else if (has_controller(controllers, "cpuset")) {
      for (const auto& mount : v1_mounts(root, controllers, "cpuset"))
        files.insert(files.end(),
                     {mount + path + "/cpuset.effective_cpus", mount + path + "/cpuset.cpus"});
    } else {
      continue;
    }
    for (const auto& f : files)
      if (exists(f)) {
        const std::vector<int> cpus = parse_cpu_list(trimmed(read_text(f)));
        if (!cpus.empty()) return cpus;
      }
  }
  return {};
}

const CpuAllowance& cpu_allowance() {
  static const CpuAllowance a = find_allowance();
  return a;
}

std::string CpuAllowance::summary() const {
  if (!limited()) return fmt::format("{} core{}", node_cores, node_cores == 1 ? "" : "s");
  const CpuLimit& l = limits.front();
  return fmt::format("{} of {} cores ({}: {})", usable_cores, node_cores, l.source, l.detail);
}

nlohmann::json CpuAllowance::to_json() const {
  nlohmann::json lim = nlohmann::json::array();
  for (const auto& l : limits)
    lim.push_back({{"source", l.source}, {"cores", l.cores}, {"detail", l.detail}});
  return {{"node_cores", node_cores},
          {"node_cpus", node_cpus},
          {"allowed_cpus", allowed_cpus},
          {"usable_cores", usable_cores},
          {"cpu_list", cpu_list},
          {"limited_by", limits.empty() ? "" : limits.front().source},
          {"limits", lim}};
}

}  // namespace sb
