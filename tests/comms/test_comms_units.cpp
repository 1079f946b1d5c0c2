// comms without MPI ranks: parameters and sweeps, the collectives' counts and bus factors, the
// pair schedules, link kinds and the slow-link rule, the payloads and the value check.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "case_plan.hpp"
#include "comms/collective.hpp"
#include "comms/comms.hpp"
#include "comms/config.hpp"
#include "comms/link.hpp"
#include "comms/link_health.hpp"
#include "comms/pair_partial.hpp"
#include "comms/pair_schedule.hpp"
#include "comms/payload.hpp"
#include "comms/sweep.hpp"
#include "scalebench/error.hpp"
#include "scalebench/philox.hpp"

namespace sb::comms {
namespace {

TEST(CommsConfig, BytesTakeNcclTestsSuffixes) {
  EXPECT_EQ(parse_bytes("8", "x"), 8);
  EXPECT_EQ(parse_bytes("64K", "x"), 65536);
  EXPECT_EQ(parse_bytes("1M", "x"), 1 << 20);
  EXPECT_EQ(parse_bytes("1G", "x"), 1 << 30);
  EXPECT_EQ(parse_bytes("2^30", "x"), 1 << 30);
  EXPECT_THROW((void)parse_bytes("lots", "x"), UsageError);
  EXPECT_THROW((void)parse_bytes("5G", "x"), UsageError);
}

TEST(CommsConfig, PresetsExpandToEveryCollectiveAndThePairMatrix) {
  const Workload w = comms_workload();
  for (const char* preset : {"tiny", "small", "seed", "large"}) {
    const auto variants = w.expand(w.preset(preset));
    ASSERT_EQ(variants.size(), 6u) << preset;
    std::set<std::string> ops;
    for (const auto& v : variants) {
      ops.insert(v.str("op"));
      const bool pairs = v.str("op") == "pairs";
      // Each case keeps only the keys it uses: they are its id.
      EXPECT_EQ(v.has("max_bytes"), !pairs);
      EXPECT_EQ(v.has("pair_bytes"), pairs);
    }
    EXPECT_EQ(ops, (std::set<std::string>{"all-reduce", "all-gather", "reduce-scatter",
                                          "all-to-all", "broadcast", "pairs"}));
  }
  Params large = w.preset("large");
  large.set("op", "all-reduce");
  const Config c = parse(large);
  EXPECT_EQ(c.nominal_sizes().front(), 8);
  EXPECT_EQ(c.nominal_sizes().back(), std::int64_t{1} << 30);
  EXPECT_EQ(c.nominal_sizes().size(), 28u);  // 8 B .. 1 GiB, x2
}

TEST(CommsConfig, BadValuesAreOneLineUsageErrors) {
  const Workload w = comms_workload();
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, std::string>>{{"op", "all-sum"},
                                                        {"factor", "1"},
                                                        {"max_bytes", "0"},
                                                        {"max_bytes", "8G"},
                                                        {"iters", "0"},
                                                        {"pair_bytes", "2"},
                                                        {"schedule", "random"}}) {
    Params p = w.preset("tiny");
    p.set(key, value);
    EXPECT_THROW((void)w.expand(p), UsageError) << key << "=" << value;
  }
  Params p = w.preset("tiny");
  p.set("min_bytes", "1M");
  p.set("max_bytes", "1K");
  EXPECT_THROW((void)w.expand(p), UsageError);
}

TEST(CommsConfig, PlannedOnMultiPathsOnly) {
  RunRequest r;
  r.preset = "tiny";
  r.workloads = {"comms"};
  std::vector<std::string> notes;
  const auto cases = plan_cases(r, &notes);
  ASSERT_EQ(cases.size(), 12u);  // 6 measurements x multi-cpu, multi-gpu
  for (const auto& c : cases)
    EXPECT_TRUE(c.path == ExecPath::multi_cpu || c.path == ExecPath::multi_gpu) << c.id;
  EXPECT_TRUE(notes.empty());  // the default paths: nothing to say
  r.paths = parse_paths("cpu1,cpuN");
  const auto cpu = plan_cases(r, &notes);
  EXPECT_EQ(cpu.size(), 6u);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("comms runs on multi-cpu, multi-gpu, each-node only"), std::string::npos)
      << notes[0];
  r.paths = parse_paths("cpu1,gpu1");
  try {
    (void)plan_cases(r);
    ADD_FAILURE() << "no case to run must be a usage error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("comms runs on"), std::string::npos) << e.what();
  }
  r.params = {"comms.op=broadcast,pairs", "comms.max_bytes=256K"};
  r.paths = parse_paths("cpuN");
  const auto two = plan_cases(r);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_NE(two[0].id.find("op=broadcast"), std::string::npos) << two[0].id;
  EXPECT_NE(two[0].id.find("max_bytes=256K"), std::string::npos) << two[0].id;
  EXPECT_NE(two[1].id.find("op=pairs"), std::string::npos) << two[1].id;
}

TEST(TransportAxis, SvdAndGroupbyTakeCommAndNameItInTheCaseId) {
  RunRequest r;
  r.preset = "tiny";
  r.workloads = {"svd", "groupby"};
  r.paths = parse_paths("gpu1,gpuN");
  r.params = {"svd.comm=nccl,mpi-host", "groupby.comm=nccl,mpi-host", "groupby.query=by-key"};
  const auto cases = plan_cases(r);
  ASSERT_EQ(cases.size(), 8u);  // 2 workloads x 2 transports x 2 paths
  int mpi_host = 0;
  for (const auto& c : cases) mpi_host += c.id.find("comm=mpi-host") != std::string::npos ? 1 : 0;
  EXPECT_EQ(mpi_host, 4);
  // Absent by default: today's case ids are unchanged.
  RunRequest d;
  d.preset = "tiny";
  d.workloads = {"svd", "groupby"};
  for (const auto& c : plan_cases(d)) EXPECT_EQ(c.id.find("comm="), std::string::npos) << c.id;
  for (const char* bad : {"svd.comm=tcp", "groupby.comm=ucx"}) {
    r.params = {bad};
    EXPECT_THROW((void)plan_cases(r), UsageError) << bad;
  }
  // The peer exchange stores into GPU memory: it has no host-staged form.
  r.params = {"groupby.comm=mpi-host", "groupby.gpu_exchange=peer", "groupby.query=by-key"};
  EXPECT_THROW((void)plan_cases(r), UsageError);
}

// A collective is one file of collectives/ and one entry of collective_list.cpp: the file holds
// every part of its descriptor, and the list names each file's descriptor once.
TEST(CommsCollectives, EachFileOfCollectivesIsOneCompleteEntryOfTheList) {
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(SB_SOURCE_DIR) /
                                                           "workloads/comms/collectives"))
    files += e.path().extension() == ".cpp" ? 1 : 0;
  EXPECT_EQ(collectives().size(), files);
  std::set<std::string_view> names;
  for (const Collective* c : collectives()) {
    EXPECT_TRUE(names.insert(c->name).second) << c->name << " twice";
    EXPECT_EQ(find_collective(c->name), c);
    EXPECT_NE(c->layout, nullptr) << c->name;
    EXPECT_NE(c->bus_factor, nullptr) << c->name;
    EXPECT_NE(c->run_mpi, nullptr) << c->name;
#if SCALEBENCH_HAVE_CUDA
    EXPECT_NE(c->run_nccl, nullptr) << c->name;
#endif
  }
  EXPECT_EQ(find_collective("gather"), nullptr);
}

TEST(CommsCollectives, CountsAndBusFactorsAreNcclTests) {
  const int n = 8;
  const std::int64_t S = 1 << 20;
  const auto& ar = *find_collective("all-reduce");
  EXPECT_EQ(ar.layout(S, n).count, S / 4);
  EXPECT_DOUBLE_EQ(ar.bus_factor(n), 2.0 * 7 / 8);
  const auto& ag = (*find_collective("all-gather"));
  EXPECT_EQ(ag.layout(S, n).count, S / 4 / n);
  EXPECT_EQ(ag.layout(S, n).recv, S / 4);
  EXPECT_DOUBLE_EQ(ag.bus_factor(n), 7.0 / 8);
  const auto& rs = (*find_collective("reduce-scatter"));
  EXPECT_EQ(rs.layout(S, n).send, S / 4);
  EXPECT_EQ(rs.layout(S, n).recv, S / 4 / n);
  EXPECT_DOUBLE_EQ(rs.bus_factor(n), 7.0 / 8);
  const auto& a2a = (*find_collective("all-to-all"));
  EXPECT_EQ(a2a.layout(S, n).send, S / 4);
  EXPECT_DOUBLE_EQ(a2a.bus_factor(n), 7.0 / 8);
  EXPECT_DOUBLE_EQ((*find_collective("broadcast")).bus_factor(n), 1.0);
  // algbw = S / t, busbw = algbw * factor.
  const Bandwidth bw = bandwidth(ar, ar.layout(S, n), 1e-3, n);
  EXPECT_DOUBLE_EQ(bw.algbw, S / 1e-3);
  EXPECT_DOUBLE_EQ(bw.busbw, S / 1e-3 * 1.75);
}

TEST(CommsCollectives, SizesWithoutAnElementPerRankAreLeftOut) {
  Config c;
  c.collective = find_collective("all-gather");
  c.min_bytes = 8;
  c.max_bytes = 1024;
  c.factor = 2;
  const auto sizes = sweep_sizes(c, 4);  // 8 B = 2 floats: none per rank; 16 B: one each
  ASSERT_FALSE(sizes.empty());
  EXPECT_EQ(sizes.front().layout.bytes, 16);
  for (std::size_t i = 1; i < sizes.size(); ++i)
    EXPECT_GT(sizes[i].layout.bytes, sizes[i - 1].layout.bytes);
  c.collective = find_collective("all-reduce");
  EXPECT_EQ(sweep_sizes(c, 4).front().layout.bytes, 8);
}

TEST(CommsPairs, SchedulesVisitEveryOrderedPairOnceAndNoWorkerTwiceInAStep) {
  for (const Schedule s : {Schedule::serial, Schedule::rounds}) {
    for (int n : {2, 3, 4, 7, 8}) {
      std::set<std::pair<int, int>> seen;
      const auto steps = pair_steps(n, s);
      for (const auto& step : steps) {
        std::set<int> busy;
        for (const auto& t : step) {
          EXPECT_NE(t.src, t.dst);
          EXPECT_TRUE(busy.insert(t.src).second);
          EXPECT_TRUE(busy.insert(t.dst).second);
          EXPECT_TRUE(seen.insert({t.src, t.dst}).second) << t.src << "->" << t.dst;
        }
      }
      EXPECT_EQ(seen.size(), static_cast<std::size_t>(n * (n - 1))) << n;
      if (s == Schedule::rounds) EXPECT_LE(steps.size(), static_cast<std::size_t>(2 * n)) << n;
    }
  }
}

TEST(CommsLinks, KindsComeFromTheTopologyAndTheHosts) {
  const std::string topo =
      "      GPU0  GPU1  GPU2  GPU3\n"
      "GPU0  X     NV18  PIX   SYS\n"
      "GPU1  NV18  X     NV4   SYS\n"
      "GPU2  PIX   NV4   X     NODE\n"
      "GPU3  SYS   SYS   NODE  X\n";
  const Topology t = parse_topology(topo);
  ASSERT_EQ(t.size(), 4u);
  const Identity g0{"a", 0}, g1{"a", 1}, g2{"a", 2}, g3{"a", 3}, far{"b", 0};
  EXPECT_EQ(classify(g0, g1, t).kind, LinkKind::nvlink);
  EXPECT_EQ(classify(g0, g1, t).nvlinks, 18);
  EXPECT_EQ(classify(g0, g2, t).kind, LinkKind::pcie);
  EXPECT_EQ(classify(g2, g3, t).kind, LinkKind::pcie);
  EXPECT_EQ(classify(g0, g3, t).kind, LinkKind::pcie_cross_socket);
  EXPECT_EQ(classify(g0, far, t).kind, LinkKind::network);
  EXPECT_EQ(classify(g0, g1, Topology{}).kind, LinkKind::same_node);
  EXPECT_EQ(classify(Identity{"a", -1}, Identity{"a", -1}, t).kind, LinkKind::shared_memory);
  EXPECT_EQ(classify(Identity{"a", -1}, Identity{"b", -1}, t).kind, LinkKind::network);
  EXPECT_DOUBLE_EQ(nvlink_rate_per_link(9), 25e9);
}

TEST(CommsLinks, TheSlowLinkIsNamedAgainstItsOwnKind) {
  std::vector<LinkFigure> links;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      if (i != j)
        links.push_back({"GPU " + std::to_string(i), "GPU " + std::to_string(j), LinkKind::nvlink,
                         (i == 3 && j == 1) ? 41e9 : 370e9, 5e-6});
  // PCIe links far slower than NVLink are not held to NVLink's speed.
  for (int k = 0; k < 3; ++k)
    links.push_back({"GPU " + std::to_string(k), "GPU 9", LinkKind::pcie, 25e9, 9e-6});
  const auto notes = slow_link_notes(links);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0],
            "slow link GPU 3 -> GPU 1 (41.0 GB/s): median of its 11 NVLink peers 370 GB/s");
  // Each link's judgement, for the verdict table's link rows.
  const auto health = judge_links(links);
  ASSERT_EQ(health.size(), links.size());
  EXPECT_TRUE(health[10].slow);  // GPU 3 -> GPU 1
  EXPECT_EQ(health[10].peers, 11);
  EXPECT_DOUBLE_EQ(health[10].peer_bandwidth, 370e9);
  EXPECT_EQ(health[10].reason, "41.0 GB/s, median of its 11 NVLink peers 370 GB/s");
  EXPECT_FALSE(health[0].slow);
  EXPECT_EQ(health[0].reason, "370 GB/s, within its 11 NVLink peers (median 370 GB/s)");
  EXPECT_FALSE(health[12].slow) << "PCIe against PCIe";
  EXPECT_EQ(health[12].peers, 2);
  // A latency outlier too, by factor and margin.
  links[0].latency_s = 40e-6;
  EXPECT_EQ(slow_link_notes(links).size(), 2u);
  EXPECT_TRUE(judge_links(links)[0].slow);
  EXPECT_EQ(judge_links(links)[0].reason, "40.0 us latency, median of its 11 NVLink peers 5.0 us");
  // Too few peers of its kind: not judged.
  const std::vector<LinkFigure> two{{"node1", "node2", LinkKind::network, 10e9, 2e-6},
                                    {"node2", "node1", LinkKind::network, 1e9, 2e-6}};
  EXPECT_FALSE(judge_links(two)[1].slow);
  EXPECT_EQ(judge_links(two)[1].reason, "1.00 GB/s, 1 network peer: not judged");
}

TEST(CommsPairs, ReportsRoundTripThroughAPartial) {
  PairReport r;
  r.id = {"node-7", 3};
  r.rows.resize(3);
  r.rows[1] = {1e-3, 2e-6, 3e-3, 0, {LinkKind::nvlink, "NV18", 18}, Transport::copy};
  r.rows[2] = {4e-3, 5e-6, 6e-3, 2, {LinkKind::network, "node-7 - node-8", 0}, Transport::nccl};
  const auto back = decode_pairs(encode_pairs(r), 3);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->id.host, "node-7");
  EXPECT_EQ(back->id.gpu, 3);
  EXPECT_EQ(back->rows[1].link.detail, "NV18");
  EXPECT_EQ(back->rows[1].transport, Transport::copy);
  EXPECT_EQ(back->rows[2].recv_wrong, 2);
  EXPECT_EQ(back->rows[2].link.kind, LinkKind::network);
  EXPECT_FALSE(decode_pairs(encode_pairs(r), 4).has_value());
  EXPECT_FALSE(decode_pairs({1.0}, 3).has_value());
}

TEST(CommsPayload, ValuesAreSmallIntegersFromPhilox) {
  std::vector<float> v(1001);
  fill_payload(42, 3, v.data(), static_cast<std::int64_t>(v.size()));
  for (std::size_t e = 0; e < v.size(); ++e) {
    ASSERT_EQ(v[e], payload(42, 3, static_cast<std::int64_t>(e)));
    ASSERT_EQ(v[e], std::floor(v[e]));
    ASSERT_GE(v[e], -128.0f);
    ASSERT_LE(v[e], 127.0f);
  }
  const auto w = data::philox_words(42, 5, 3);
  EXPECT_EQ(payload(42, 3, 22), static_cast<float>(static_cast<int>(w[2] >> 24) - 128));
  EXPECT_NE(payload(42, 3, 0), payload(42, 4, 0) + payload(42, 3, 1) * 1000);  // rank-keyed
}

/// The outputs every collective must produce on `ranks` ranks, built from the payloads alone.
std::vector<std::vector<float>> reference_outputs(const Collective& op, int ranks,
                                                  const Layout& l) {
  std::vector<std::vector<float>> in(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    in[static_cast<std::size_t>(r)].resize(static_cast<std::size_t>(l.send));
    fill_payload(7, r, in[static_cast<std::size_t>(r)].data(), l.send);
  }
  std::vector<std::vector<float>> out(static_cast<std::size_t>(ranks),
                                      std::vector<float>(static_cast<std::size_t>(l.recv), 0.f));
  const auto c = static_cast<std::size_t>(l.count);
  for (int me = 0; me < ranks; ++me) {
    auto& o = out[static_cast<std::size_t>(me)];
    for (int r = 0; r < ranks; ++r) {
      const auto& x = in[static_cast<std::size_t>(r)];
      for (std::size_t k = 0; k < c; ++k) {
        if (op.name == "all-reduce") o[k] += x[k];
        if (op.name == "all-gather") o[r * c + k] = x[k];
        if (op.name == "reduce-scatter") o[k] += x[me * c + k];
        if (op.name == "all-to-all") o[r * c + k] = x[me * c + k];
        if (op.name == "broadcast" && r == kRoot) o[k] = x[k];
      }
    }
  }
  return out;
}

TEST(CommsPayload, TheCheckAcceptsTheTrueOutputAndCountsEveryCorruption) {
  const int ranks = 5;
  for (const Collective* c : collectives()) {
    const Layout l = c->layout(4 * 5 * 37, ranks);  // 37 elements per rank: odd, unaligned
    const auto outs = reference_outputs(*c, ranks, l);
    for (int me = 0; me < ranks; ++me) {
      auto o = outs[static_cast<std::size_t>(me)];
      const Wrong ok = count_wrong(c->expected, 7, me, ranks, l.count, kRoot, o.data(), l.recv);
      EXPECT_EQ(ok.count, 0) << c->name << " rank " << me;
      EXPECT_EQ(ok.first, -1);
      o[static_cast<std::size_t>(l.recv / 2)] += 1.0f;     // one element off by one
      o.back() = std::numeric_limits<float>::quiet_NaN();  // one never written
      const Wrong bad = count_wrong(c->expected, 7, me, ranks, l.count, kRoot, o.data(), l.recv);
      EXPECT_EQ(bad.count, 2) << c->name << " rank " << me;
      EXPECT_EQ(bad.first, l.recv / 2) << c->name;
    }
  }
  // A pair transfer: the receiver's buffer against the sender's payload.
  std::vector<float> got(99);
  fill_payload(7, 2, got.data(), 99);
  EXPECT_EQ(count_wrong(kExpectCopy, 7, 0, 3, 99, 2, got.data(), 99).count, 0);
  EXPECT_EQ(count_wrong(kExpectCopy, 7, 0, 3, 99, 1, got.data(), 99).count > 90, true);
}

}  // namespace
}  // namespace sb::comms
