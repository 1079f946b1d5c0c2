#include "repeat_timing.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "scalebench/clock.hpp"

namespace sb::detail {

void put_done(Writer& w, const RepeatDone& d) {
  w.put<double>(d.phases.generate).put<double>(d.phases.compute).put<double>(d.phases.communicate);
  w.put_vec(d.partial).put<double>(d.wall).put_str(d.trace);
}

RepeatDone get_done(Reader& r) {
  RepeatDone d;
  d.phases.generate = r.get<double>();
  d.phases.compute = r.get<double>();
  d.phases.communicate = r.get<double>();
  d.partial = r.get_vec<double>();
  d.wall = r.get<double>();
  d.trace = r.get_str();
  return d;
}

namespace {

/// This thread's voluntary and forced context switches so far.
std::pair<long, long> context_switches() {
  rusage u{};
  if (getrusage(RUSAGE_THREAD, &u) != 0) return {0, 0};
  return {u.ru_nvcsw, u.ru_nivcsw};
}

}  // namespace

WorkerRepeatTrace::WorkerRepeatTrace(bool on, double t0) : on_(on), t0_(t0) {
  if (on_) std::tie(csw_, icsw_) = context_switches();
}

std::string WorkerRepeatTrace::str() const {
  if (!on_) return {};
  const auto [v, i] = context_switches();
  return fmt::format("{} csw={}/{}", text_, v - csw_, i - icsw_);
}

void WorkerRepeatTrace::mark(const char* what, long long n) {
  if (!on_) return;
  if (!text_.empty()) text_ += ' ';
  text_ += n >= 0 ? fmt::format("{}{}@{:.3f}", what, n, (now() - t0_) * 1e3)
                  : fmt::format("{}@{:.3f}", what, (now() - t0_) * 1e3);
}

void RepeatTiming::begin(double writing) {
  phases_ = {};
  workers_.clear();
  total_ = 0;
  writing_ = writing;
  std::tie(csw_, icsw_) = context_switches();
  t0_ = now();
}

void RepeatTiming::on_done(int case_rank, const RepeatDone& d) {
  phases_.generate = std::max(phases_.generate, d.phases.generate);
  phases_.compute = std::max(phases_.compute, d.phases.compute);
  phases_.communicate = std::max(phases_.communicate, d.phases.communicate);
  workers_.push_back({case_rank, now() - t0_,
                      d.phases.generate + d.phases.compute + d.phases.communicate, d.wall,
                      d.trace});
}

double RepeatTiming::end(double writing) {
  total_ = now() - t0_;
  writing_ = writing - writing_;
  const auto [v, i] = context_switches();
  csw_ = v - csw_;
  icsw_ = i - icsw_;
  return total_;
}

nlohmann::json RepeatTiming::record() const {
  double busy = 0, wall = 0;
  for (const Worker& w : workers_) {
    busy = std::max(busy, w.busy);
    wall = std::max(wall, w.wall);
  }
  return {{"generate", phases_.generate},
          {"compute", phases_.compute},
          {"communicate", phases_.communicate},
          {"total", total_},
          {"runtime", std::max(0.0, total_ - busy)},
          {"messages", std::max(0.0, total_ - wall)}};
}

std::string RepeatTiming::trace_lines(const std::string& id, int repeat) const {
  std::string out;
  std::vector<Worker> ws = workers_;
  std::sort(ws.begin(), ws.end(), [](const Worker& a, const Worker& b) { return a.rank < b.rank; });
  for (const Worker& w : ws)
    out += fmt::format(
        "repeat trace {} {}{}: total {:.3f} ms (scheduler: writing {:.3f} ms, csw={}/{}); "
        "worker {}: phases {:.3f} ms, wall {:.3f} ms, DONE in at {:.3f} ms; events (ms after "
        "REPEAT_BEGIN arrived): {}\n",
        id, repeat < 0 ? "warm-up" : "repeat ", repeat < 0 ? std::string() : std::to_string(repeat),
        total_ * 1e3, writing_ * 1e3, csw_, icsw_, w.rank, w.busy * 1e3, w.wall * 1e3,
        w.done_at * 1e3, w.trace);
  return out;
}

}  // namespace sb::detail
