// What a timed-out case's message says about its participants (participant_watch.hpp): the rank
// that stopped answering named first with its host and GPU and what it was doing, the hundreds
// waiting for it in a collective summed up in one clause.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "participant_watch.hpp"

namespace {

using sb::detail::Message;
using sb::detail::ParticipantWatch;
using sb::detail::WorkerInfo;

Message request(int rank, std::int32_t want, std::int32_t reported) {
  Message m;
  m.source = rank;
  m.tag = sb::detail::kTagRequest;
  m.data.resize(2 * sizeof(std::int32_t));
  std::memcpy(m.data.data(), &want, sizeof want);
  std::memcpy(m.data.data() + sizeof want, &reported, sizeof reported);
  return m;
}

Message tagged(int rank, int tag) {
  Message m;
  m.source = rank;
  m.tag = tag;
  return m;
}

/// 64 nodes of 8 GPUs: ranks 1..512, rank r on node (r-1)/8, GPU (r-1)%8.
std::vector<WorkerInfo> gpu_workers(int nodes) {
  std::vector<WorkerInfo> out;
  for (int r = 1; r <= nodes * 8; ++r) {
    WorkerInfo w;
    w.rank = r;
    w.gpu = true;
    w.host = "node" + std::to_string((r - 1) / 8 + 1);
    w.node_gpu = (r - 1) % 8;
    out.push_back(w);
  }
  return out;
}

TEST(ParticipantWatch, NamesTheOneRankThatStoppedAmong512) {
  const auto parts = gpu_workers(64);
  ParticipantWatch w;
  w.begin(parts, ParticipantWatch::Stage::repeat, 2);
  std::int64_t next = 0;
  for (const auto& p : parts) {  // every rank asks for two tasks and gets them
    w.heard(request(p.rank, 2, 0));
    w.assigned(p.rank, next, next + 2);
    next += 2;
  }
  for (const auto& p : parts) {  // all but rank 300 report them and are told there is no more
    if (p.rank == 300) continue;
    w.heard(request(p.rank, 2, 2));
    w.assigned(p.rank, next, next);
  }
  const std::string text = w.unfinished(parts);
  EXPECT_EQ(text.find("rank 300 (node38, GPU 3) running tasks 598-599"), 0u) << text;
  EXPECT_NE(text.find("; 511 ranks on 64 host(s) in finish_repeat after its last task"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find('\n'), std::string::npos);
  EXPECT_LT(text.size(), 400u) << "one clause per state, not one per rank";
  EXPECT_EQ(w.step(parts), "repeat 3");
}

TEST(ParticipantWatch, FinishedRanksAreNotListedAndEachStageSaysWhatItWaitsFor) {
  const auto parts = gpu_workers(1);
  ParticipantWatch w;
  w.begin(parts, ParticipantWatch::Stage::setup);
  for (const auto& p : parts)
    if (p.rank != 5) w.heard(tagged(p.rank, sb::detail::kTagReady));
  std::string text = w.unfinished(parts);
  EXPECT_EQ(text.find("rank 5 (node1, GPU 4) building its part of the case"), 0u) << text;
  EXPECT_EQ(text.find("rank 1 "), std::string::npos) << text;
  EXPECT_EQ(w.step(parts), "its set-up");

  w.begin(parts, ParticipantWatch::Stage::repeat, -1);
  for (const auto& p : parts) w.heard(tagged(p.rank, sb::detail::kTagDone));
  EXPECT_EQ(w.unfinished(parts), "");
  EXPECT_EQ(w.step(parts), "the warm-up");

  w.begin(parts, ParticipantWatch::Stage::repeat, 0);  // rank 8 never asks for a task
  for (const auto& p : parts)
    if (p.rank != 8) w.heard(tagged(p.rank, sb::detail::kTagDone));
  text = w.unfinished(parts);
  EXPECT_EQ(text.find("rank 8 (node1, GPU 7) silent since the repeat began"), 0u) << text;

  w.begin(parts, ParticipantWatch::Stage::validation);
  for (const auto& p : parts) w.heard(tagged(p.rank, sb::detail::kTagValidation));
  text = w.unfinished(parts);
  EXPECT_NE(text.find("8 ranks on 1 host(s)"), std::string::npos) << text;
  EXPECT_NE(text.find("sending its telemetry"), std::string::npos) << text;
}

TEST(ParticipantWatch, CpuWorkersAreNamedByHostAlone) {
  WorkerInfo cpu;
  cpu.rank = 1;
  cpu.host = "login1";
  ParticipantWatch w;
  w.begin({cpu}, ParticipantWatch::Stage::repeat, 0);
  w.heard(request(1, 3, 0));
  w.assigned(1, 0, 1);
  EXPECT_EQ(w.unfinished({cpu}).find("rank 1 (login1) running task 0, silent for "), 0u)
      << w.unfinished({cpu});
}

}  // namespace
