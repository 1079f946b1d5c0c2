#include "repeat_timing.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "scalebench/clock.hpp"

namespace sb::detail {

void put_done(Writer& w, const RepeatDone& d) {
  w.put<double>(d.phases.generate).put<double>(d.phases.compute).put<double>(d.phases.communicate);
  w.put_vec(d.partial).put<double>(d.wall).put_str(d.trace).put<double>(d.host_stall);
  w.put<double>(d.submit_s).put<std::int32_t>(d.submits).put<double>(d.probe_s);
}

RepeatDone get_done(Reader& r) {
  RepeatDone d;
  d.phases.generate = r.get<double>();
  d.phases.compute = r.get<double>();
  d.phases.communicate = r.get<double>();
  d.partial = r.get_vec<double>();
  d.wall = r.get<double>();
  d.trace = r.get_str();
  d.host_stall = r.get<double>();
  d.submit_s = r.get<double>();
  d.submits = r.get<std::int32_t>();
  d.probe_s = r.get<double>();
  return d;
}

namespace {

/// This thread's usage so far.
ThreadUsage thread_usage() {
  rusage u{};
  if (getrusage(RUSAGE_THREAD, &u) != 0) return {};
  return {u.ru_nvcsw, u.ru_nivcsw, u.ru_minflt + u.ru_majflt,
          static_cast<long long>(u.ru_stime.tv_sec) * 1000000000LL + u.ru_stime.tv_usec * 1000LL};
}

std::pair<long, long> context_switches() {
  const ThreadUsage u = thread_usage();
  return {u.csw, u.icsw};
}

/// This thread's time on a CPU and time runnable but waiting for one so far, nanoseconds
/// (/proc/thread-self/schedstat; zeros where the kernel has none).
std::pair<long long, long long> cpu_times() {
  long long run = 0, queued = 0;
  if (std::FILE* f = std::fopen("/proc/thread-self/schedstat", "r")) {
    if (std::fscanf(f, "%lld %lld", &run, &queued) != 2) run = queued = 0;
    std::fclose(f);
  }
  return {run, queued};
}

}  // namespace

WorkerRepeatTrace::WorkerRepeatTrace(bool on, double t0) : on_(on), t0_(t0) {
  if (!on_) return;
  usage_ = thread_usage();
  std::tie(run_ns_, queued_ns_) = cpu_times();
}

std::string WorkerRepeatTrace::str() const {
  if (!on_) return {};
  const ThreadUsage u = thread_usage();
  const auto [run, queued] = cpu_times();
  return fmt::format(
      "{} csw={}/{} oncpu={:.3f} queued={:.3f} sys={:.3f} faults={}", text_, u.csw - usage_.csw,
      u.icsw - usage_.icsw, static_cast<double>(run - run_ns_) * 1e-6,
      static_cast<double>(queued - queued_ns_) * 1e-6,
      static_cast<double>(u.sys_ns - usage_.sys_ns) * 1e-6, u.faults - usage_.faults);
}

void WorkerRepeatTrace::mark(const char* what, long long n) {
  if (!on_) return;
  if (!text_.empty()) text_ += ' ';
  text_ += n >= 0 ? fmt::format("{}{}@{:.3f}", what, n, (now() - t0_) * 1e3)
                  : fmt::format("{}@{:.3f}", what, (now() - t0_) * 1e3);
}

void WorkerRepeatTrace::mark_task(const char* what, long long task, double end) {
  if (!on_) return;
  if (!text_.empty()) text_ += ' ';
  text_ += fmt::format("{}{}@{:.3f}({:.3f})", what, task, (now() - t0_) * 1e3, end * 1e3);
}

void RepeatTiming::begin(double writing, bool switches) {
  phases_ = {};
  workers_.clear();
  total_ = 0;
  writing_ = writing;
  switches_ = switches;
  csw_ = icsw_ = 0;
  if (switches_) std::tie(csw_, icsw_) = context_switches();
  t0_ = now();
}

void RepeatTiming::on_done(int case_rank, const RepeatDone& d) {
  phases_.generate = std::max(phases_.generate, d.phases.generate);
  phases_.compute = std::max(phases_.compute, d.phases.compute);
  phases_.communicate = std::max(phases_.communicate, d.phases.communicate);
  workers_.push_back({case_rank, now() - t0_,
                      d.phases.generate + d.phases.compute + d.phases.communicate, d.wall,
                      d.host_stall, d.submit_s, d.submits, d.probe_s, d.trace});
}

double RepeatTiming::end(double writing) {
  total_ = now() - t0_;
  writing_ = writing - writing_;
  if (switches_) {
    const auto [v, i] = context_switches();
    csw_ = v - csw_;
    icsw_ = i - icsw_;
  }
  return total_;
}

nlohmann::json RepeatTiming::record() const {
  double busy = 0, wall = 0, stall = 0, per_task = 0, probe = 0;
  int submits = 0;
  for (const Worker& w : workers_) {
    busy = std::max(busy, w.busy);
    probe = std::max(probe, w.probe_s);
    wall = std::max(wall, w.wall);
    stall = std::max(stall, w.host_stall);
    if (w.submits > 0 && w.submit_s / w.submits >= per_task) {
      per_task = w.submit_s / w.submits;
      submits = w.submits;
    }
  }
  nlohmann::json j = {{"generate", phases_.generate},
                      {"compute", phases_.compute},
                      {"communicate", phases_.communicate},
                      {"total", total_},
                      {"runtime", std::max(0.0, total_ - busy)},
                      {"messages", std::max(0.0, total_ - wall)},
                      {"host_stall", stall}};
  if (submits > 0) {
    j["submit_task_s"] = per_task;
    j["submits"] = submits;
  }
  if (probe > 0) j["probe_s"] = probe;
  return j;
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
