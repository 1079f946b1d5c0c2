/// @file test_allocation.cpp
/// Allocation detection (local, SLURM, PBS from fake environments and temporary node files),
/// rank placement for 1-64 nodes with 0-8 GPUs, launch plans and the placement encoding.

#include "batch/allocation.hpp"
#include "batch/hostlist.hpp"

#include <scalebench/error.hpp>

#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>

namespace sb::batch {
namespace {

namespace fs = std::filesystem;

/// A temporary file removed at scope end.
struct TempFile {
  fs::path path;
  explicit TempFile(const std::string& content) {
    path = fs::temp_directory_path() /
           ("sb_batch_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter()++));
    std::ofstream(path) << content;
  }
  ~TempFile() {
    std::error_code ec;
    fs::remove(path, ec);
  }
  static int& counter() {
    static int c = 0;
    return c;
  }
};

// ---------------------------------------------------------------- host lists and counts

TEST(Hostlist, ExpandsSlurmSyntax) {
  EXPECT_EQ(expand_hostlist("node[01-03,07]"),
            (std::vector<std::string>{"node01", "node02", "node03", "node07"}));
  EXPECT_EQ(expand_hostlist("a1,b[8-10]"), (std::vector<std::string>{"a1", "b8", "b9", "b10"}));
  EXPECT_EQ(expand_hostlist("r[1-2]-n[0-1]"),
            (std::vector<std::string>{"r1-n0", "r1-n1", "r2-n0", "r2-n1"}));
  EXPECT_EQ(expand_hostlist("gpu[001-002].cluster,login"),
            (std::vector<std::string>{"gpu001.cluster", "gpu002.cluster", "login"}));
  EXPECT_EQ(expand_hostlist("single"), (std::vector<std::string>{"single"}));
  EXPECT_TRUE(expand_hostlist("").empty());
  EXPECT_EQ(expand_hostlist("n[098-101]"),
            (std::vector<std::string>{"n098", "n099", "n100", "n101"}));
}

TEST(Hostlist, RefusesMalformed) {
  for (const char* bad :
       {"n[1-", "n[3-1]", "n[]", "n[a-b]", "n]1", "a,,b", "n[1-2[3]]", "n[0-99999999999]", "a b"})
    EXPECT_THROW((void)expand_hostlist(bad), EnvironmentError) << bad;
}

TEST(Hostlist, Counts) {
  EXPECT_EQ(expand_counts("16(x2),8"), (std::vector<int>{16, 16, 8}));
  EXPECT_EQ(expand_counts("4"), (std::vector<int>{4}));
  EXPECT_THROW((void)expand_counts("16(2)"), EnvironmentError);
  EXPECT_THROW((void)expand_counts("x"), EnvironmentError);
  EXPECT_EQ(count_devices("0,1,2"), 3);
  EXPECT_EQ(count_devices("0-3"), 4);
  EXPECT_EQ(count_devices("GPU-1a2b,GPU-3c4d"), 2);
  EXPECT_EQ(count_devices(""), 0);
  EXPECT_EQ(count_devices("NoDevFiles"), 0);
  EXPECT_EQ(count_gpu_spec("4"), 4);
  EXPECT_EQ(count_gpu_spec("a100:4"), 4);
  EXPECT_EQ(count_gpu_spec("gpu:a100:2,gpu:v100:1"), 3);
  EXPECT_THROW((void)count_gpu_spec("a100"), EnvironmentError);
}

// ---------------------------------------------------------------- detection

TEST(Detect, LocalWhenNoBatchSystem) {
  const Allocation a = detect_allocation({{"HOME", "/root"}}, 8, 2, "laptop");
  EXPECT_EQ(a.scheduler, "local");
  EXPECT_TRUE(a.job_id.empty());
  ASSERT_EQ(a.nodes.size(), 1u);
  EXPECT_EQ(a.nodes[0].host, "laptop");
  EXPECT_EQ(a.nodes[0].cpus, 8);
  EXPECT_EQ(a.nodes[0].gpus, 2);
  EXPECT_EQ(detect_allocation({}, 0, -1, "h").nodes[0].cpus, 1);
  EXPECT_EQ(detect_allocation({}, 0, -1, "h").nodes[0].gpus, 0);
}

TEST(Detect, SlurmMultiNode) {
  const Environment env{{"SLURM_JOB_ID", "4242"},
                        {"SLURM_JOB_NODELIST", "gpu[01-03,07]"},
                        {"SLURM_JOB_NUM_NODES", "4"},
                        {"SLURM_GPUS_ON_NODE", "4"},
                        {"SLURM_JOB_CPUS_PER_NODE", "64(x3),32"},
                        {"CUDA_VISIBLE_DEVICES", "0"}};
  const Allocation a = detect_allocation(env, 2, 1, "gpu01");
  EXPECT_EQ(a.scheduler, "slurm");
  EXPECT_EQ(a.job_id, "4242");
  ASSERT_EQ(a.nodes.size(), 4u);
  EXPECT_EQ(a.nodes[3].host, "gpu07");
  EXPECT_EQ(a.nodes[0].cpus, 64);
  EXPECT_EQ(a.nodes[3].cpus, 32);
  for (const auto& n : a.nodes) EXPECT_EQ(n.gpus, 4);
}

TEST(Detect, SlurmGpuVariablesInOrder) {
  Environment env{
      {"SLURM_JOB_ID", "1"}, {"SLURM_JOB_NODELIST", "n1"}, {"SLURM_CPUS_ON_NODE", "16"}};
  EXPECT_EQ(detect_allocation(env, 4, 3, "n1").nodes[0].gpus, 3);  // no GRES: what we see
  EXPECT_EQ(detect_allocation(env, 4, 3, "n1").nodes[0].cpus, 16);
  env["CUDA_VISIBLE_DEVICES"] = "0,1";
  EXPECT_EQ(detect_allocation(env, 4, 3, "n1").nodes[0].gpus, 2);
  env["SLURM_JOB_GPUS"] = "0";
  EXPECT_EQ(detect_allocation(env, 4, 3, "n1").nodes[0].gpus, 1);
  env["SLURM_GPUS_PER_NODE"] = "h200:8";
  EXPECT_EQ(detect_allocation(env, 4, 3, "n1").nodes[0].gpus, 8);
  env["SLURM_GPUS_ON_NODE"] = "0";
  EXPECT_EQ(detect_allocation(env, 4, 3, "n1").nodes[0].gpus, 0);
}

TEST(Detect, SlurmCpuFallbacks) {
  Environment env{{"SLURM_JOB_ID", "7"},
                  {"SLURM_JOB_NODELIST", "n[1-2]"},
                  {"SLURM_JOB_CPUS_PER_NODE", "16(x3)"}};  // does not match: falls back
  auto a = detect_allocation(env, 6, 0, "n1");
  EXPECT_EQ(a.nodes[1].cpus, 6);
  env["SLURM_CPUS_ON_NODE"] = "12";
  a = detect_allocation(env, 6, 0, "n1");
  EXPECT_EQ(a.nodes[0].cpus, 12);
  EXPECT_EQ(a.nodes[1].cpus, 12);
}

TEST(Detect, SlurmSingleNodeWithoutNodelist) {
  const Allocation a = detect_allocation({{"SLURM_JOBID", "9"}}, 4, 0, "me");
  EXPECT_EQ(a.scheduler, "slurm");
  EXPECT_EQ(a.job_id, "9");
  ASSERT_EQ(a.nodes.size(), 1u);
  EXPECT_EQ(a.nodes[0].host, "me");
}

TEST(Detect, SlurmInconsistentThrows) {
  EXPECT_THROW(
      (void)detect_allocation(
          {{"SLURM_JOB_ID", "1"}, {"SLURM_JOB_NODELIST", "n[1-3]"}, {"SLURM_JOB_NUM_NODES", "2"}},
          1, 0, "n1"),
      EnvironmentError);
  EXPECT_THROW(
      (void)detect_allocation({{"SLURM_JOB_ID", "1"}, {"SLURM_JOB_NUM_NODES", "2"}}, 1, 0, "n1"),
      EnvironmentError);
  EXPECT_THROW(
      (void)detect_allocation({{"SLURM_JOB_ID", "1"}, {"SLURM_JOB_NODELIST", "n[1-"}}, 1, 0, "n1"),
      EnvironmentError);
  EXPECT_THROW(
      (void)detect_allocation({{"SLURM_JOB_ID", "1"}, {"SLURM_GPUS_ON_NODE", "x"}}, 1, 0, "n1"),
      EnvironmentError);
}

TEST(Detect, PbsNodefile) {
  TempFile f("cn1\ncn1\ncn1\ncn1\ncn2\ncn2\ncn2\ncn2\n\ncn3 \ncn3\ncn1\n");
  const Environment env{{"PBS_JOBID", "123.pbs01"},
                        {"PBS_NODEFILE", f.path.string()},
                        {"PBS_NGPUS", "2"},
                        {"CUDA_VISIBLE_DEVICES", "0"}};
  const Allocation a = detect_allocation(env, 99, 0, "cn1");
  EXPECT_EQ(a.scheduler, "pbs");
  EXPECT_EQ(a.job_id, "123.pbs01");
  EXPECT_EQ(a.nodefile, f.path.string());
  ASSERT_EQ(a.nodes.size(), 3u);
  EXPECT_EQ(a.nodes[0].host, "cn1");
  EXPECT_EQ(a.nodes[0].cpus, 5);
  EXPECT_EQ(a.nodes[1].host, "cn2");
  EXPECT_EQ(a.nodes[1].cpus, 4);
  EXPECT_EQ(a.nodes[2].host, "cn3");
  EXPECT_EQ(a.nodes[2].cpus, 2);
  for (const auto& n : a.nodes) EXPECT_EQ(n.gpus, 2);
}

TEST(Detect, PbsGpusFromVisibleDevicesAndNcpus) {
  TempFile f("cn1\ncn2\n");
  Environment env{{"PBS_JOBID", "5"},
                  {"PBS_NODEFILE", f.path.string()},
                  {"CUDA_VISIBLE_DEVICES", "0,1,2"},
                  {"NCPUS", "32"}};
  const Allocation a = detect_allocation(env, 1, 0, "cn1");
  ASSERT_EQ(a.nodes.size(), 2u);
  EXPECT_EQ(a.nodes[1].gpus, 3);
  EXPECT_EQ(a.nodes[1].cpus, 32);
  env.erase("CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(detect_allocation(env, 1, 1, "cn1").nodes[0].gpus, 1);
}

TEST(Detect, PbsErrors) {
  EXPECT_THROW((void)detect_allocation({{"PBS_JOBID", "5"}}, 1, 0, "h"), EnvironmentError);
  EXPECT_THROW((void)detect_allocation(
                   {{"PBS_JOBID", "5"}, {"PBS_NODEFILE", "/nonexistent/sb_nodefile"}}, 1, 0, "h"),
               EnvironmentError);
  TempFile empty("\n\n");
  EXPECT_THROW(
      (void)detect_allocation({{"PBS_JOBID", "5"}, {"PBS_NODEFILE", empty.path}}, 1, 0, "h"),
      EnvironmentError);
}

TEST(Detect, CurrentEnvironmentReadsProcess) {
  ::setenv("SB_BATCH_TEST_VAR", "a=b", 1);
  const Environment env = current_environment();
  ASSERT_TRUE(env.count("SB_BATCH_TEST_VAR"));
  EXPECT_EQ(env.at("SB_BATCH_TEST_VAR"), "a=b");
}

// ---------------------------------------------------------------- placement

bool same(const RankPlacement& a, const RankPlacement& b) {
  return a.rank == b.rank && a.node == b.node && a.scheduler == b.scheduler &&
         a.worker == b.worker && a.local_rank == b.local_rank && a.gpu == b.gpu &&
         a.threads == b.threads && a.first_core == b.first_core;
}

/// encode/decode gives back exactly `p`.
void expect_round_trip(const std::vector<RankPlacement>& p) {
  const std::string text = encode_placement(p);
  const auto back = decode_placement(text);
  ASSERT_EQ(back.size(), p.size()) << text;
  for (std::size_t i = 0; i < p.size(); ++i) EXPECT_TRUE(same(p[i], back[i])) << text << " " << i;
}

/// Checks every placement invariant for `alloc`.
void check_placement(const Allocation& alloc, const std::vector<RankPlacement>& p) {
  int expected_workers = 0;
  for (const auto& n : alloc.nodes) expected_workers += n.gpus > 0 ? n.gpus : 1;
  ASSERT_EQ(p.size(), static_cast<std::size_t>(expected_workers + 1));
  EXPECT_TRUE(p[0].scheduler);
  EXPECT_EQ(p[0].node, 0);
  EXPECT_EQ(p[0].gpu, -1);
  EXPECT_EQ(p[0].worker, -1);
  EXPECT_EQ(p[0].local_rank, 0);
  std::vector<int> local_next(alloc.nodes.size(), 0);
  local_next[0] = 1;
  for (std::size_t r = 1; r < p.size(); ++r) {
    EXPECT_EQ(p[r].rank, static_cast<int>(r));
    EXPECT_FALSE(p[r].scheduler);
    EXPECT_EQ(p[r].worker, static_cast<int>(r) - 1);
    EXPECT_GE(p[r].node, p[r - 1].node);
    const auto node = static_cast<std::size_t>(p[r].node);
    EXPECT_EQ(p[r].local_rank, local_next[node]++);
  }
  for (std::size_t n = 0; n < alloc.nodes.size(); ++n) {
    const auto& node = alloc.nodes[n];
    std::vector<RankPlacement> w;
    for (const auto& q : p)
      if (!q.scheduler && q.node == static_cast<int>(n)) w.push_back(q);
    ASSERT_EQ(w.size(), static_cast<std::size_t>(node.gpus > 0 ? node.gpus : 1));
    // One worker per GPU, ordinals 0..G-1; none on a GPU-less node.
    for (std::size_t k = 0; k < w.size(); ++k)
      EXPECT_EQ(w[k].gpu, node.gpus > 0 ? static_cast<int>(k) : -1);
    // Cores: an even split covering all cores without overlap when there are enough.
    int total = 0;
    int lo = 1 << 30;
    int hi = 0;
    int next = 0;
    for (const auto& q : w) {
      EXPECT_GE(q.threads, 1);
      total += q.threads;
      lo = std::min(lo, q.threads);
      hi = std::max(hi, q.threads);
      if (node.cpus >= static_cast<int>(w.size())) {
        EXPECT_EQ(q.first_core, next);
        next += q.threads;
      } else {
        EXPECT_EQ(q.threads, 1);
        EXPECT_LT(q.first_core, node.cpus);
      }
    }
    if (node.cpus >= static_cast<int>(w.size())) {
      EXPECT_EQ(total, node.cpus);
      EXPECT_LE(hi - lo, 1);
    }
  }
}

TEST(Place, LaptopWithoutGpu) {
  Allocation a;
  a.nodes.push_back({"laptop", 8, 0});
  const auto p = place_ranks(a);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[1].threads, 8);
  EXPECT_EQ(p[1].first_core, 0);
  EXPECT_EQ(p[1].gpu, -1);
  EXPECT_EQ(p[1].local_rank, 1);
  check_placement(a, p);
}

TEST(Place, OneNodeFourGpus) {
  Allocation a;
  a.nodes.push_back({"n", 18, 4});
  const auto p = place_ranks(a);
  ASSERT_EQ(p.size(), 5u);
  EXPECT_EQ(p[1].threads, 5);
  EXPECT_EQ(p[2].threads, 5);
  EXPECT_EQ(p[3].threads, 4);
  EXPECT_EQ(p[4].first_core, 14);
  EXPECT_EQ(p[4].gpu, 3);
  check_placement(a, p);
}

TEST(Place, FewerCoresThanGpus) {
  Allocation a;
  a.nodes.push_back({"n", 2, 8});
  check_placement(a, place_ranks(a));
}

TEST(Place, EmptyAllocationThrows) {
  EXPECT_THROW((void)place_ranks(Allocation{}), EnvironmentError);
}

TEST(Place, SweepNodesAndGpus) {
  std::mt19937 rng(12345);
  for (const int nodes : {1, 2, 3, 4, 7, 8, 16, 31, 64}) {
    for (int g = 0; g <= 8; ++g) {
      Allocation a;
      for (int i = 0; i < nodes; ++i)
        a.nodes.push_back({"n" + std::to_string(i), 1 + static_cast<int>(rng() % 128), g});
      SCOPED_TRACE("nodes=" + std::to_string(nodes) + " gpus=" + std::to_string(g));
      const auto p = place_ranks(a);
      check_placement(a, p);
      expect_round_trip(p);
    }
    // Uneven: every node a different GPU count in 0..8.
    Allocation a;
    for (int i = 0; i < nodes; ++i)
      a.nodes.push_back(
          {"u" + std::to_string(i), 1 + static_cast<int>(rng() % 96), static_cast<int>(rng() % 9)});
    SCOPED_TRACE("uneven nodes=" + std::to_string(nodes));
    check_placement(a, place_ranks(a));
    expect_round_trip(place_ranks(a));
  }
}

// ---------------------------------------------------------------- encoding

bool env_safe(const std::string& text) {
  for (const char c : text)
    if (!((c >= '0' && c <= '9') || c == ',' || c == ';' || c == ':' || c == '-' || c == 'v' ||
          c == '.' || c == '*'))
      return false;
  return true;
}

TEST(Encode, CompactForPlaceRanks) {
  Allocation a;
  for (int i = 0; i < 64; ++i) a.nodes.push_back({"n" + std::to_string(i), 96, 8});
  EXPECT_EQ(encode_placement(place_ranks(a)), "v2:96.8*64");
  a.nodes[63].gpus = 3;
  a.nodes[0].cpus = 5;
  EXPECT_EQ(encode_placement(place_ranks(a)), "v2:5.8;96.8*62;96.3");
  expect_round_trip(place_ranks(a));
  Allocation small;
  small.nodes.push_back({"h", 4, 2});
  EXPECT_EQ(encode_placement(place_ranks(small)), "v2:4.2");
  Allocation few_cores;  // more workers than cores: first_core wraps
  few_cores.nodes = {{"a", 3, 8}, {"b", 8, 8}, {"c", 1, 0}};
  EXPECT_EQ(encode_placement(place_ranks(few_cores)), "v2:3.8;8.8;1.0");
  expect_round_trip(place_ranks(few_cores));
}

TEST(Encode, ExplicitForAnyOtherPlacement) {
  Allocation a;
  a.nodes.push_back({"h", 4, 2});
  auto p = place_ranks(a);
  p[2].first_core = 3;  // not what place_ranks makes
  p[2].threads = 1;
  const std::string text = encode_placement(p);
  EXPECT_EQ(text, "v1:0,-1,0,-1,1,0;0,0,1,0,2,0;0,1,2,1,1,3");
  EXPECT_TRUE(env_safe(text));
  expect_round_trip(p);
  // Large explicit placements stay compact enough for one environment variable.
  Allocation big;
  for (int i = 0; i < 64; ++i) big.nodes.push_back({"n" + std::to_string(i), 96, i % 9});
  auto q = place_ranks(big);
  q.back().first_core += 1;
  const std::string t = encode_placement(q);
  EXPECT_EQ(t.rfind("v1:", 0), 0u);
  EXPECT_TRUE(env_safe(t));
  EXPECT_LT(t.size(), 20u * q.size());
  expect_round_trip(q);
}

TEST(Encode, MalformedThrows) {
  for (const char* bad :
       {"", "v1:", "v3:1.0", "v1:0,-1,0,-1,1", "v1:0,-1,0,-1,1,0;", "v1:0,-1,0,-1,0,0",
        "v1:a,-1,0,-1,1,0", "v1:0,-1,0,-1,1,0,7", "v2:", "v2:4", "v2:4.", "v2:4.2*", "v2:4.2*0",
        "v2:0.2", "v2:4.2;", "v2:4.2*3x", "v2:4,2", "v2:4.2*99999999"})
    EXPECT_THROW((void)decode_placement(bad), EnvironmentError) << bad;
}

// ---------------------------------------------------------------- launch plans

TEST(Plan, Local) {
  Allocation a;
  a.nodes.push_back({"laptop", 8, 2});
  const auto p = place_ranks(a);
  LaunchOptions o;
  o.allow_run_as_root = true;
  const LaunchPlan plan = plan_launch(a, p, "/opt/sb/bin/scalebench-rank", {"--stream", "x"}, o);
  EXPECT_EQ(plan.argv, (std::vector<std::string>{"mpiexec", "-n", "3", "--bind-to", "none",
                                                 "--oversubscribe", "--allow-run-as-root",
                                                 "/opt/sb/bin/scalebench-rank", "--stream", "x"}));
  ASSERT_TRUE(plan.env.count("SCALEBENCH_PLACEMENT"));
  EXPECT_EQ(plan.env.at("SCALEBENCH_PLACEMENT"), encode_placement(p));
  EXPECT_TRUE(plan.files.empty());
  o.oversubscribe = false;
  o.allow_run_as_root = false;
  o.mpiexec = "/usr/bin/mpirun";
  o.extra = {"--mca", "btl", "self,vader"};
  EXPECT_EQ(plan_launch(a, p, "r", {}, o).argv,
            (std::vector<std::string>{"/usr/bin/mpirun", "-n", "3", "--bind-to", "none", "--mca",
                                      "btl", "self,vader", "r"}));
}

TEST(Plan, PbsHostListMatchesPlacement) {
  Allocation a;
  a.scheduler = "pbs";
  a.job_id = "77.server";
  a.nodes = {{"cn1", 4, 4}, {"cn2", 4, 2}, {"cn3", 8, 0}};
  const auto p = place_ranks(a);
  LaunchOptions o;
  o.oversubscribe = false;
  o.work_dir = "/run/sb";
  const LaunchPlan plan = plan_launch(a, p, "rank", {"a"}, o);
  EXPECT_TRUE(plan.files.empty());
  // 5 ranks on cn1 (scheduler + 4 workers) > 4 slots: oversubscribe even when not asked.
  EXPECT_EQ(plan.argv,
            (std::vector<std::string>{"mpiexec", "--host", "cn1:5,cn2:2,cn3:1", "-n", "8",
                                      "--map-by", "slot", "--bind-to", "none", "-x",
                                      "SCALEBENCH_PLACEMENT", "--oversubscribe", "rank", "a"}));
  // Filling slots in order gives every rank the node its placement names.
  std::vector<int> node_of_rank;
  for (std::size_t n = 0; n < a.nodes.size(); ++n) {
    int slots = 0;
    for (const auto& q : p) slots += q.node == static_cast<int>(n) ? 1 : 0;
    node_of_rank.insert(node_of_rank.end(), static_cast<std::size_t>(slots), static_cast<int>(n));
  }
  for (const auto& q : p) EXPECT_EQ(node_of_rank[static_cast<std::size_t>(q.rank)], q.node);
}

TEST(Plan, SlurmNodelistInRankOrder) {
  Allocation a;
  a.scheduler = "slurm";
  a.job_id = "4242";
  a.nodes = {{"g01", 64, 4}, {"g02", 64, 4}};
  const auto p = place_ranks(a);
  LaunchOptions o;
  const LaunchPlan plan = plan_launch(a, p, "/x/scalebench-rank", {}, o);
  EXPECT_TRUE(plan.files.empty());
  EXPECT_EQ(plan.env.count("SLURM_HOSTFILE"), 0u);
  EXPECT_EQ(plan.env.at("SCALEBENCH_PLACEMENT"), "v2:64.4*2");
  EXPECT_EQ(plan.argv, (std::vector<std::string>{
                           "srun", "--mpi=pmix", "-n", "9", "--nodes=2", "--distribution=arbitrary",
                           "--nodelist=g01,g01,g01,g01,g01,g02,g02,g02,g02", "--cpus-per-task=1",
                           "--cpu-bind=none", "--kill-on-bad-exit=1", "--gpu-bind=none",
                           "/x/scalebench-rank"}));
}

TEST(Plan, HugeHostListsGoToFiles) {
  Allocation a;
  a.scheduler = "slurm";
  a.job_id = "5";
  for (int i = 0; i < 3000; ++i)
    a.nodes.push_back({"gpu-node-" + std::to_string(i) + ".cluster.example.org", 64, 8});
  const auto p = place_ranks(a);
  LaunchOptions o;
  o.work_dir = "/scratch/run";
  LaunchPlan plan = plan_launch(a, p, "r", {}, o);
  ASSERT_EQ(plan.files.size(), 1u);
  EXPECT_EQ(plan.files[0].path, "/scratch/run/scalebench-slurm-5.hosts");
  EXPECT_EQ(plan.env.at("SLURM_HOSTFILE"), plan.files[0].path);
  EXPECT_EQ(plan.env.at("SCALEBENCH_PLACEMENT"), "v2:64.8*3000");
  for (const auto& arg : plan.argv) EXPECT_EQ(arg.rfind("--nodelist", 0), std::string::npos);
  std::istringstream lines(plan.files[0].content);
  std::string host;
  std::size_t r = 0;
  while (std::getline(lines, host)) {
    ASSERT_LT(r, p.size());
    EXPECT_EQ(host, a.nodes[static_cast<std::size_t>(p[r].node)].host);
    ++r;
  }
  EXPECT_EQ(r, p.size());
  a.scheduler = "pbs";
  plan = plan_launch(a, p, "r", {}, o);
  ASSERT_EQ(plan.files.size(), 1u);
  EXPECT_EQ(plan.files[0].path, "/scratch/run/scalebench-pbs-5.hostfile");
  EXPECT_EQ(plan.files[0].content.substr(0, 76),
            "gpu-node-0.cluster.example.org slots=9\ngpu-node-1.cluster.example.org slots=");
  EXPECT_EQ(plan.argv.at(1), "--hostfile");
  EXPECT_EQ(plan.argv.at(2), plan.files[0].path);
}

TEST(Plan, SlurmCpuOnlyOvercommit) {
  Allocation a;
  a.scheduler = "slurm";
  a.job_id = "1";
  a.nodes = {{"c1", 1, 0}};
  LaunchOptions o;
  o.slurm_mpi = "pmi2";
  const LaunchPlan plan = plan_launch(a, place_ranks(a), "r", {}, o);
  EXPECT_EQ(plan.argv, (std::vector<std::string>{"srun", "--mpi=pmi2", "-n", "2", "--nodes=1",
                                                 "--distribution=arbitrary", "--nodelist=c1,c1",
                                                 "--cpus-per-task=1", "--cpu-bind=none",
                                                 "--kill-on-bad-exit=1", "--overcommit", "r"}));
}

TEST(Plan, SweepRankOrderMatchesNodelist) {
  for (const int nodes : {1, 2, 5, 16, 64}) {
    for (const int g : {0, 1, 3, 8}) {
      Allocation a;
      a.scheduler = "slurm";
      a.job_id = "3";
      for (int i = 0; i < nodes; ++i)
        a.nodes.push_back({"h" + std::to_string(i), 32, (i % 2) ? g : (g + 1) % 9});
      const auto p = place_ranks(a);
      const auto plan = plan_launch(a, p, "r", {}, {});
      ASSERT_EQ(plan.argv.at(6).rfind("--nodelist=", 0), 0u);
      std::istringstream lines(plan.argv.at(6).substr(11));
      std::string host;
      std::size_t r = 0;
      while (std::getline(lines, host, ',')) {
        ASSERT_LT(r, p.size());
        EXPECT_EQ(host, a.nodes[static_cast<std::size_t>(p[r].node)].host);
        ++r;
      }
      EXPECT_EQ(r, p.size());
    }
  }
}

TEST(Plan, RejectsBadPlacement) {
  Allocation a;
  a.nodes = {{"h", 2, 0}};
  auto p = place_ranks(a);
  p[1].node = 3;
  EXPECT_THROW((void)plan_launch(a, p, "r", {}, {}), EnvironmentError);
  EXPECT_THROW((void)plan_launch(a, {}, "r", {}, {}), EnvironmentError);
}

TEST(Plan, WriteLaunchFiles) {
  const fs::path dir = fs::temp_directory_path() / ("sb_batch_wl_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  LaunchPlan plan;
  plan.files.push_back({(dir / "hosts").string(), "a\nb\n"});
  write_launch_files(plan);
  std::ifstream in(dir / "hosts");
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "a\nb\n");
  // Folders are not created: a launch file goes only into the run's existing work folder.
  LaunchPlan nested;
  nested.files.push_back({(dir / "sub" / "hosts").string(), "x"});
  EXPECT_THROW(write_launch_files(nested), EnvironmentError);
  EXPECT_FALSE(fs::exists(dir / "sub"));
  fs::remove_all(dir);
  LaunchPlan bad;
  bad.files.push_back({"/proc/sb_cannot_write/hosts", "x"});
  EXPECT_THROW(write_launch_files(bad), EnvironmentError);
}

TEST(Plan, HugeHostListNeedsWorkDir) {
  // Without a work folder a host file has nowhere to go: an error, never a file in /tmp.
  Allocation a;
  a.scheduler = "slurm";
  a.job_id = "5";
  for (int i = 0; i < 3000; ++i)
    a.nodes.push_back({"gpu-node-" + std::to_string(i) + ".cluster.example.org", 64, 8});
  const auto p = place_ranks(a);
  for (const char* scheduler : {"slurm", "pbs", "lsf", "sge"}) {
    a.scheduler = scheduler;
    try {
      (void)plan_launch(a, p, "r", {}, LaunchOptions{});
      ADD_FAILURE() << scheduler << ": planned without a work folder";
    } catch (const EnvironmentError& e) {
      EXPECT_NE(std::string(e.what()).find("work folder"), std::string::npos) << e.what();
    }
  }
  // Short lists need no file and no folder.
  a.nodes.resize(4);
  EXPECT_TRUE(plan_launch(a, place_ranks(a), "r", {}, LaunchOptions{}).files.empty());
}

}  // namespace
}  // namespace sb::batch
