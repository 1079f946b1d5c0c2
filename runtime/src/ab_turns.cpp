#include "ab_turns.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "scalebench/ab_protocol.hpp"
#include "scalebench/error.hpp"

namespace sb::detail {

AbCommand parse_ab_command(const std::string& line) {
  std::istringstream in(line);
  std::string word;
  in >> word;
  AbCommand c;
  if (word == "stop") {
    c.kind = AbCommand::Kind::stop;
  } else if (word == "begin" || word == "end") {
    c.kind = word == "begin" ? AbCommand::Kind::begin : AbCommand::Kind::end;
    in >> c.index;
  } else if (word == "turn") {
    c.kind = AbCommand::Kind::turn;
    in >> c.index >> c.repeats >> c.turn;
  } else {
    in.setstate(std::ios::failbit);
  }
  std::string rest;
  if (in.fail() || (in >> rest) || c.repeats < 0)
    throw Error(fmt::format("A/B: not a command of protocol {}: '{}'", ab::kProtocol, line));
  return c;
}

AbCommand AbTurns::next() {
  while (true) {
    if (const auto nl = buffer_.find('\n'); nl != std::string::npos) {
      const std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      return parse_ab_command(line);
    }
    char chunk[256];
    const ssize_t got = ::read(fd_, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return AbCommand{};  // the launcher closed its end (or is gone): stop
    buffer_.append(chunk, static_cast<std::size_t>(got));
  }
}

bool AbTurns::wait_begin(int index) {
  if (stopping_) return false;
  const AbCommand c = next();
  if (c.kind == AbCommand::Kind::stop) {
    stopping_ = true;
    return false;
  }
  if (c.kind != AbCommand::Kind::begin || c.index != index)
    throw Error(
        fmt::format("A/B: the launcher sent a turn or an end while case {} waits to begin", index));
  return true;
}

nlohmann::json AbTurns::run_case(const CaseSpec& spec, double setup_s, const AbCaseSteps& steps) {
  steps.park(true);
  out_.write({{"type", std::string(ab::kRecordReady)},
              {"index", spec.index},
              {"id", spec.id},
              {"setup_s", setup_s}},
             true);
  bool warm = false;
  int turns = 0;
  std::size_t repeats = 0;
  while (true) {
    const AbCommand c = next();
    if (c.kind == AbCommand::Kind::stop) {
      // Only the end of the launcher's commands comes mid-case: it is stopping the run (or
      // gone), and the case did not finish.
      stopping_ = true;
      throw Error(std::string(ab::kInterrupted));
    }
    if (c.index != spec.index || c.kind == AbCommand::Kind::begin)
      throw Error(fmt::format("A/B: the launcher named case {} while case {} ({}) is set up",
                              c.index, spec.index, spec.id));
    if (c.kind == AbCommand::Kind::end) break;
    steps.park(false);
    double warmup_last_s = 0;
    if (!warm) {
      warmup_last_s = steps.warm_up();
      warm = true;
    }
    nlohmann::json totals = nlohmann::json::array();
    for (int i = 0; i < c.repeats; ++i) totals.push_back(steps.timed_repeat(c.turn));
    steps.park(true);
    ++turns;
    repeats += static_cast<std::size_t>(c.repeats);
    out_.write({{"type", std::string(ab::kRecordTurn)},
                {"index", spec.index},
                {"turn", c.turn},
                {"totals", std::move(totals)},
                {"warmup", spec.warmup},
                {"warmup_last_s", warmup_last_s}},
               true);
  }
  return {{"reason", "turns"}, {"repeats", repeats}, {"turns", turns}};
}

}  // namespace sb::detail
