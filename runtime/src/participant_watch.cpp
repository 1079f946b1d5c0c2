// What each participant of a case was last doing (participant_watch.hpp).
#include "participant_watch.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include <fmt/format.h>

#include "scalebench/clock.hpp"

namespace sb::detail {

ParticipantWatch::State& ParticipantWatch::at(int rank) {
  if (rank >= static_cast<int>(by_rank_.size()))
    by_rank_.resize(static_cast<std::size_t>(rank) + 1);
  return by_rank_[static_cast<std::size_t>(rank)];
}

void ParticipantWatch::begin(const std::vector<WorkerInfo>& parts, Stage stage, int repeat) {
  const double t = now();
  for (const auto& p : parts) {
    State& s = at(p.rank);
    s = State{};
    s.stage = stage;
    s.repeat = repeat;
    s.since = t;
  }
}

void ParticipantWatch::heard(const Message& m) {
  if (m.source < 0) return;
  State& s = at(m.source);
  s.heard = now();
  s.last_tag = m.tag;
  switch (m.tag) {
    case kTagReady:
      if (s.stage == Stage::setup) s.done = true;
      break;
    case kTagDone:
      if (s.stage == Stage::repeat) s.done = true;
      break;
    case kTagTelemetry:
      if (s.stage == Stage::validation) s.done = true;
      break;
    case kTagRequest:
      if (m.data.size() >= 2 * sizeof(std::int32_t)) {  // int32 want, int32 outcomes, ...
        std::int32_t want = 0, reported = 0;
        std::memcpy(&want, m.data.data(), sizeof want);
        std::memcpy(&reported, m.data.data() + sizeof(std::int32_t), sizeof reported);
        s.last_want = want;
        s.held = std::max<std::int64_t>(0, s.held - reported);
      }
      break;
    default:
      break;
  }
}

void ParticipantWatch::assigned(int rank, std::int64_t first, std::int64_t end) {
  State& s = at(rank);
  if (end <= first) {
    s.no_more = s.no_more || s.last_want > 0;  // an empty ASSIGN: nothing left this repeat
    return;
  }
  s.held += end - first;
  s.first_held = first;
  s.last_held = end - 1;
}

std::string ParticipantWatch::unfinished(const std::vector<WorkerInfo>& parts) const {
  const double t = now();
  struct Item {
    const WorkerInfo* w;
    double silent;
  };
  std::map<std::string, std::vector<Item>> by_doing;
  for (const auto& p : parts) {
    if (p.rank >= static_cast<int>(by_rank_.size())) continue;
    const State& s = by_rank_[static_cast<std::size_t>(p.rank)];
    if (s.done) continue;
    std::string doing;
    if (s.stage == Stage::setup) {
      doing = "building its part of the case (make_worker: allocation, GPU communicator)";
    } else if (s.stage == Stage::validation) {
      doing = s.last_tag == kTagValidation ? "sending its telemetry" : "validating its part";
    } else if (s.heard == 0) {
      doing = "silent since the repeat began (begin_repeat, its first request)";
    } else if (s.held > 0) {
      doing = s.first_held == s.last_held
                  ? fmt::format("running task {}", s.first_held)
                  : fmt::format("running tasks {}-{}", s.first_held, s.last_held);
    } else if (s.no_more) {
      doing = "in finish_repeat after its last task (the repeat's collectives)";
    } else {
      doing = "waiting for tasks";
    }
    by_doing[doing].push_back({&p, t - (s.heard > 0 ? s.heard : s.since)});
  }
  if (by_doing.empty()) return {};
  std::vector<std::pair<std::string, std::vector<Item>>> groups(by_doing.begin(), by_doing.end());
  // The odd ones out first: a lone rank still computing while the others wait for it.
  std::sort(groups.begin(), groups.end(),
            [](const auto& a, const auto& b) { return a.second.size() < b.second.size(); });
  auto name = [](const WorkerInfo& w) {
    return w.gpu ? fmt::format("rank {} ({}, GPU {})", w.rank, w.host, w.node_gpu)
                 : fmt::format("rank {} ({})", w.rank, w.host);
  };
  std::string out;
  for (auto& [doing, items] : groups) {
    std::sort(items.begin(), items.end(),
              [](const Item& a, const Item& b) { return a.silent > b.silent; });
    out += out.empty() ? "" : "; ";
    if (items.size() <= 3) {
      std::string who;
      for (const auto& i : items) who += (who.empty() ? "" : ", ") + name(*i.w);
      out += fmt::format("{} {}, silent for {:.1f} s", who, doing, items.front().silent);
    } else {
      std::set<std::string> hosts;
      for (const auto& i : items) hosts.insert(i.w->host);
      out +=
          fmt::format("{} ranks on {} host(s) {}, the longest silent {} for {:.1f} s", items.size(),
                      hosts.size(), doing, name(*items.front().w), items.front().silent);
    }
  }
  return out;
}

std::string ParticipantWatch::step(const std::vector<WorkerInfo>& parts) const {
  for (const auto& p : parts) {
    if (p.rank >= static_cast<int>(by_rank_.size())) continue;
    const State& s = by_rank_[static_cast<std::size_t>(p.rank)];
    switch (s.stage) {
      case Stage::setup:
        return "its set-up";
      case Stage::validation:
        return "its validation";
      case Stage::repeat:
        return s.repeat < 0 ? "the warm-up" : fmt::format("repeat {}", s.repeat + 1);
    }
  }
  return "its set-up";
}

}  // namespace sb::detail
