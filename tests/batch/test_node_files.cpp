/// @file test_node_files.cpp
/// Node-file readers (PBS_NODEFILE, LSB_DJOB_HOSTFILE, LSB_MCPU_HOSTS, PE_HOSTFILE), one-line
/// error messages whatever an allocation value holds, and allocations of 10^6 hosts parsed in
/// linear time.

#include "batch/allocation.hpp"
#include "batch/hostlist.hpp"
#include "batch/node_files.hpp"
#include "scalebench/printable.hpp"

#include <scalebench/error.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>

#include "../support/scratch_dir.hpp"

namespace sb::batch {
namespace {

using sb::test_support::TempDir;

std::vector<std::pair<std::string, int>> pairs(const std::vector<HostSlots>& v) {
  std::vector<std::pair<std::string, int>> out;
  for (const auto& h : v) out.emplace_back(h.host, h.slots);
  return out;
}

using Pairs = std::vector<std::pair<std::string, int>>;

// ---------------------------------------------------------------- readers

TEST(NodeFiles, SlotLines) {
  EXPECT_EQ(pairs(parse_slot_lines("cn1\ncn1\ncn2\n\n  cn3 \r\ncn1\ncn3", "f")),
            (Pairs{{"cn1", 3}, {"cn2", 1}, {"cn3", 2}}));
  EXPECT_THROW((void)parse_slot_lines("\n \n", "f"), EnvironmentError);
  EXPECT_THROW((void)parse_slot_lines("cn1 4\n", "f"), EnvironmentError);
}

TEST(NodeFiles, HostCounts) {
  EXPECT_EQ(pairs(parse_host_counts("hostA 4 hostB 2", "v")), (Pairs{{"hostA", 4}, {"hostB", 2}}));
  EXPECT_EQ(pairs(parse_host_counts("  a 1  b 2 a 3 ", "v")), (Pairs{{"a", 4}, {"b", 2}}));
  for (const char* bad :
       {"", "hostA", "hostA 4 hostB", "hostA x", "hostA 0", "hostA -1", "hostA 99999999999"})
    EXPECT_THROW((void)parse_host_counts(bad, "v"), EnvironmentError) << bad;
}

TEST(NodeFiles, PeHostfile) {
  const std::string text =
      "node01.cluster 4 all.q@node01.cluster UNDEFINED\n"
      "node02.cluster 4 all.q@node02.cluster UNDEFINED\n"
      "node01.cluster 2 gpu.q@node01.cluster 0,1\n";
  EXPECT_EQ(pairs(parse_pe_hostfile(text, "PE_HOSTFILE")),
            (Pairs{{"node01.cluster", 6}, {"node02.cluster", 4}}));
  EXPECT_EQ(pairs(parse_pe_hostfile("h 2\n", "p")), (Pairs{{"h", 2}}));
  for (const char* bad : {"", "node01\n", "node01 x all.q UNDEFINED\n", "node01 0 q U\n"})
    EXPECT_THROW((void)parse_pe_hostfile(bad, "p"), EnvironmentError) << bad;
}

TEST(NodeFiles, UnreadableFile) {
  EXPECT_THROW((void)read_node_file("/nonexistent/sb_nodefile", "PE_HOSTFILE"), EnvironmentError);
}

// ---------------------------------------------------------------- one-line messages

TEST(Printable, EscapesControlCharacters) {
  EXPECT_EQ(printable("n[1-2]"), "n[1-2]");
  EXPECT_EQ(printable("a\nb\r\tc\x1b[31m\x7f\\"), "a\\nb\\r\\tc\\x1b[31m\\x7f\\\\");
  EXPECT_EQ(printable(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(printable("h\xc3\xa9te"), "h\xc3\xa9te");  // UTF-8 kept
  EXPECT_EQ(printable(std::string(300, 'x'), 10), "xxxxxxxxxx... (300 bytes)");
}

/// Runs `f`, which must throw sb::EnvironmentError; returns its message.
std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const EnvironmentError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no EnvironmentError";
  return {};
}

bool one_visible_line(const std::string& s) {
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return false;
  }
  return !s.empty();
}

TEST(Printable, AllocationErrorsAreOneLine) {
  TempDir d;
  const std::string nodefile = (d.path / "nodes").string();
  std::ofstream(nodefile) << "cn1\ncn1 \x1b[2Jx\n";
  const std::string pe = (d.path / "pe").string();
  std::ofstream(pe) << "node01 4 all.q UNDEFINED\nnode\x07 2 q U\n";
  const std::vector<Environment> envs = {
      {{"SLURM_JOB_ID", "1"}, {"SLURM_JOB_NODELIST", "node1\nnode2"}},
      {{"SLURM_JOB_ID", "1"}, {"SLURM_JOB_NODELIST", "n[1-2]\n"}, {"SLURM_JOB_NUM_NODES", "3"}},
      {{"SLURM_JOB_ID", "1"}, {"SLURM_JOB_NODELIST", "n\x01[1-2]"}},
      {{"SLURM_JOB_ID", "1"}, {"SLURM_JOB_NODELIST", "n1"}, {"SLURM_CPUS_ON_NODE", "4\n5"}},
      {{"SLURM_JOB_ID", "1"}, {"SLURM_JOB_NODELIST", "n1"}, {"SLURM_JOB_CPUS_PER_NODE", "4\r"}},
      {{"SLURM_JOB_ID", "1"}, {"SLURM_JOB_NODELIST", "n1"}, {"SLURM_GPUS_PER_NODE", "a\n100"}},
      {{"SLURM_JOB_ID", "1"}, {"SLURM_JOB_NUM_NODES", "2\n"}},
      {{"PBS_JOBID", "5"}, {"PBS_NODEFILE", nodefile}},
      {{"PBS_JOBID", "5"}, {"PBS_NODEFILE", "/nonexistent/a\nb"}},
      {{"PBS_JOBID", "5"}, {"PBS_NODEFILE", nodefile + "x"}, {"NCPUS", "1"}},
      {{"LSB_JOBID", "7"}, {"LSB_MCPU_HOSTS", "hostA 4\nhostB\t2 x"}},
      {{"LSB_JOBID", "7"}, {"LSB_MCPU_HOSTS", "hostA 4"}, {"LSB_DJOB_NUMPROC", "8\n"}},
      {{"LSB_JOBID", "7"}, {"LSB_DJOB_HOSTFILE", "/nonexistent/\x1b]0;title\x07"}},
      {{"JOB_ID", "9"}, {"PE_HOSTFILE", pe}},
      {{"JOB_ID", "9"}, {"PE_HOSTFILE", pe + "\n"}},
      {{"JOB_ID", "9"}, {"SGE_ROOT", "/sge"}, {"NSLOTS", "2\n2"}},
  };
  for (const auto& env : envs) {
    const std::string m = message_of([&] { (void)detect_allocation(env, 2, 0, "me"); });
    EXPECT_TRUE(one_visible_line(m)) << m;
  }
  EXPECT_NE(message_of([&] { (void)detect_allocation(envs[0], 2, 0, "me"); }).find("node1\\nnode2"),
            std::string::npos);
  // A huge value is cut, not printed whole.
  const std::string big(1 << 20, 'a');
  const std::string m = message_of([&] { (void)expand_hostlist("n[1-" + big + "]"); });
  EXPECT_LT(m.size(), 400u);
  EXPECT_NE(m.find("bytes)"), std::string::npos);
}

// ---------------------------------------------------------------- linear time

/// Seconds `f` takes.
double seconds_of(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

constexpr int kMillion = 1'000'000;

std::string host(int i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "node%07d", i);
  return buf;
}

/// A file of `lines(i)` for i in [0, 10^6), written at once.
void write_lines(const std::filesystem::path& path, const std::function<std::string(int)>& lines) {
  std::string text;
  text.reserve(40u * kMillion);
  for (int i = 0; i < kMillion; ++i) text += lines(i);
  std::ofstream(path, std::ios::binary)
      .write(text.data(), static_cast<std::streamsize>(text.size()));
}

/// A node file of 10^6 distinct hosts parses in well under 5 s (quadratic parsing took 15 s for
/// 10^5 lines). The bound is generous on purpose: this checks the complexity, not the speed.
TEST(NodeFilesAtScale, MillionHostsPbs) {
  TempDir d;
  write_lines(d.path / "nodefile", [](int i) { return host(i) + "\n"; });
  Allocation a;
  const double s = seconds_of([&] {
    a = detect_allocation({{"PBS_JOBID", "1"}, {"PBS_NODEFILE", (d.path / "nodefile").string()}}, 1,
                          0, "x");
  });
  ASSERT_EQ(a.nodes.size(), static_cast<std::size_t>(kMillion));
  EXPECT_EQ(a.nodes.back().host, host(kMillion - 1));
  EXPECT_EQ(a.nodes.back().cpus, 1);
  RecordProperty("parse_seconds", std::to_string(s));
  EXPECT_LT(s, 5.0);
}

TEST(NodeFilesAtScale, MillionHostsLsf) {
  TempDir d;
  write_lines(d.path / "hostfile", [](int i) { return host(i) + "\n" + host(i) + "\n"; });
  Allocation a;
  const double s = seconds_of([&] {
    a = detect_allocation({{"LSB_JOBID", "1"},
                           {"LSB_DJOB_HOSTFILE", (d.path / "hostfile").string()},
                           {"LSB_DJOB_NUMPROC", std::to_string(2 * kMillion)}},
                          1, 0, "x");
  });
  ASSERT_EQ(a.nodes.size(), static_cast<std::size_t>(kMillion));
  EXPECT_EQ(a.nodes[12345].cpus, 2);
  RecordProperty("parse_seconds", std::to_string(s));
  EXPECT_LT(s, 5.0);
}

TEST(NodeFilesAtScale, MillionHostsSge) {
  TempDir d;
  write_lines(d.path / "pe",
              [](int i) { return host(i) + " 4 all.q@" + host(i) + " UNDEFINED\n"; });
  Allocation a;
  const double s = seconds_of([&] {
    a = detect_allocation({{"JOB_ID", "1"},
                           {"PE_HOSTFILE", (d.path / "pe").string()},
                           {"NSLOTS", std::to_string(4 * kMillion)}},
                          1, 0, "x");
  });
  ASSERT_EQ(a.nodes.size(), static_cast<std::size_t>(kMillion));
  EXPECT_EQ(a.nodes.front().cpus, 4);
  RecordProperty("parse_seconds", std::to_string(s));
  EXPECT_LT(s, 5.0);
}

TEST(NodeFilesAtScale, MillionHostsSlurmAndLsfPairs) {
  Allocation a;
  double s = seconds_of([&] {
    a = detect_allocation({{"SLURM_JOB_ID", "1"},
                           {"SLURM_JOB_NODELIST", "node[0000000-0999999]"},
                           {"SLURM_JOB_NUM_NODES", std::to_string(kMillion)},
                           {"SLURM_JOB_CPUS_PER_NODE", "8(x1000000)"}},
                          1, 0, "x");
  });
  ASSERT_EQ(a.nodes.size(), static_cast<std::size_t>(kMillion));
  EXPECT_EQ(a.nodes.back().host, host(kMillion - 1));
  RecordProperty("parse_seconds", std::to_string(s));
  EXPECT_LT(s, 5.0);
  std::string mcpu;
  for (int i = 0; i < kMillion; ++i) mcpu += host(i) + " 2 ";
  s = seconds_of([&] {
    a = detect_allocation({{"LSB_JOBID", "1"}, {"LSB_MCPU_HOSTS", mcpu}}, 1, 0, "x");
  });
  ASSERT_EQ(a.nodes.size(), static_cast<std::size_t>(kMillion));
  RecordProperty("parse_seconds", std::to_string(s));
  EXPECT_LT(s, 5.0);
}

}  // namespace
}  // namespace sb::batch
