// The CPUs a process may use (cpu_allowance.hpp): CPU lists, and cgroup quotas and cpusets read
// from cgroup trees laid out as v1 and v2 mount them. The real affinity mask, cpuset and quota
// are tests/cli/cli_commands.sh's `affinity` part (taskset and cgroup v1 for real).

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "scalebench/cpu_allowance.hpp"

namespace {

namespace fs = std::filesystem;

struct Tree {
  fs::path root = fs::temp_directory_path() / ("sb-cgroup-" + std::to_string(::getpid()));
  Tree() { fs::create_directories(root); }
  ~Tree() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  void write(const std::string& rel, const std::string& text) const {
    fs::create_directories((root / rel).parent_path());
    std::ofstream(root / rel) << text;
  }
};

TEST(CpuList, ParsesAndFormats) {
  EXPECT_EQ(sb::parse_cpu_list("0-3,8"), (std::vector<int>{0, 1, 2, 3, 8}));
  EXPECT_EQ(sb::parse_cpu_list("4 5 6"), (std::vector<int>{4, 5, 6}));
  EXPECT_EQ(sb::parse_cpu_list("7\n"), (std::vector<int>{7}));
  EXPECT_TRUE(sb::parse_cpu_list("a-b").empty());
  EXPECT_TRUE(sb::parse_cpu_list("3-1").empty());
  EXPECT_EQ(sb::format_cpu_list({8, 0, 1, 2, 3, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(sb::format_cpu_list({}), "");
}

TEST(CgroupQuota, V1TheLowestOnTheWayToTheRoot) {
  Tree t;
  t.write("cpu,cpuacct/job/step/cpu.cfs_quota_us", "250000\n");
  t.write("cpu,cpuacct/job/step/cpu.cfs_period_us", "100000\n");
  t.write("cpu,cpuacct/job/cpu.cfs_quota_us", "-1\n");
  t.write("cpu,cpuacct/job/cpu.cfs_period_us", "100000\n");
  t.write("cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
  t.write("cpu,cpuacct/cpu.cfs_period_us", "100000\n");
  const std::string self = "4:memory:/job/step\n3:cpu,cpuacct:/job/step\n";
  std::string why;
  EXPECT_EQ(sb::cgroup_quota_cpus(self, t.root.string(), &why), 3);  // 2.5 CPUs: ceil
  EXPECT_NE(why.find("quota 250000 us per 100000 us period"), std::string::npos) << why;
  t.write("cpu,cpuacct/job/cpu.cfs_quota_us", "100000\n");
  EXPECT_EQ(sb::cgroup_quota_cpus(self, t.root.string()), 1);
  EXPECT_EQ(sb::cgroup_quota_cpus("3:cpu,cpuacct:/\n", t.root.string()), 0);
}

TEST(CgroupQuota, V2CpuMax) {
  Tree t;
  t.write("app/cpu.max", "150000 100000\n");
  t.write("cpu.max", "max 100000\n");
  EXPECT_EQ(sb::cgroup_quota_cpus("0::/app\n", t.root.string()), 2);
  EXPECT_EQ(sb::cgroup_quota_cpus("0::/\n", t.root.string()), 0);
}

TEST(CgroupCpuset, V1AndV2) {
  Tree t;
  t.write("cpuset/job/cpuset.cpus", "0-1\n");
  EXPECT_EQ(sb::cgroup_cpuset("3:cpuset:/job\n", t.root.string()), (std::vector<int>{0, 1}));
  t.write("app/cpuset.cpus.effective", "2-3\n");
  EXPECT_EQ(sb::cgroup_cpuset("0::/app\n", t.root.string()), (std::vector<int>{2, 3}));
  EXPECT_TRUE(sb::cgroup_cpuset("0::/none\n", t.root.string()).empty());
}

TEST(CpuAllowance, ThisProcessIsDescribedWhole) {
  const sb::CpuAllowance& a = sb::cpu_allowance();
  EXPECT_GE(a.node_cores, 1);
  EXPECT_GE(a.node_cpus, a.node_cores);
  EXPECT_GE(a.usable_cores, 1);
  EXPECT_LE(a.usable_cores, a.node_cores);
  EXPECT_FALSE(sb::parse_cpu_list(a.cpu_list).empty());
  EXPECT_EQ(a.limited(), !a.limits.empty());
  const auto j = a.to_json();
  EXPECT_EQ(j["usable_cores"], a.usable_cores);
}

}  // namespace
