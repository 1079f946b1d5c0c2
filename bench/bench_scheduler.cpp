// The scheduler rank at scale: the real scheduler (runtime/src/scheduler.cpp, each_device.cpp,
// startup_gather.cpp) driven by simulated workers through the message seam
// (runtime/src/message.hpp: MessageTransport), so that 4,096 workers fit in one process. A
// simulated worker answers at once and does no work: every second measured is the scheduler's
// own, the part of a repeat that grows with the worker count.
//
//   build/bench/bench_scheduler [--benchmark_filter=multi_cpu]
//
// Per worker count, the scheduler thread's CPU time (the machine may be shared: its wall time is
// a counter) per repeat: REPEAT_BEGIN, 4 tasks per worker handed out one REQUEST at a time,
// every finished task folded, DONE (the benchmark's time); and as counters the start-up
// gathering (one start-up record per worker, `startup_ms`), the case's record after its repeats
// (validation, telemetry, task events, the stream's fsync'ed lines, `record_ms`), the wall time
// per repeat and the messages per repeat. multi_cpu is one case over every worker; each_gpu
// runs every simulated GPU as a device of its own (node acceptance), 8 per node.
#include <benchmark/benchmark.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <ctime>
#include <deque>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "message.hpp"
#include "rank.hpp"
#include "repeat_timing.hpp"
#include "scalebench/clock.hpp"
#include "scalebench/error.hpp"
#include "scalebench/job_plan.hpp"
#include "scalebench/workload.hpp"
#include "scalebench/workload_registration.hpp"

namespace {

using sb::detail::Message;
using sb::detail::Reader;
using sb::detail::Writer;
using json = nlohmann::json;

/// This thread's CPU time, seconds: the scheduler and its simulated workers share the thread,
/// so on a busy machine its CPU time is the scheduler's cost where wall time is not.
double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

constexpr int kTasksPerWorker = 4;
constexpr int kRepeats = 10;
constexpr int kGpusPerNode = 8;

// ---------------------------------------------------------------- a workload of no work

class SimScheduler final : public sb::SchedulerCase {
 public:
  explicit SimScheduler(std::int64_t tasks) : tasks_(tasks) {}
  std::int64_t num_tasks() const override { return tasks_; }
  void begin_repeat() override { sum_ = 0; }
  void on_task(const sb::TaskOutcome& o) override {
    if (!o.partial.empty()) sum_ += o.partial[0];
  }
  void on_worker_done(int, const std::vector<double>&) override {}
  json end_repeat() override { return {{"sum", sum_}}; }
  std::vector<sb::Check> validate(const std::vector<std::vector<double>>&) override {
    return {{"tasks", sum_, static_cast<double>(tasks_), sum_ == static_cast<double>(tasks_),
             "every task folded once"}};
  }
  sb::Fingerprint fingerprint() const override { return {{{"sum", sum_}}, {}}; }
  sb::Work work() const override {
    sb::Work w;
    w.units = static_cast<double>(tasks_);
    w.unit = "tasks";
    return w;
  }

 private:
  std::int64_t tasks_;
  double sum_ = 0;
};

sb::Workload sim_workload() {
  sb::Workload w;
  w.name = "bench-sim";
  w.description = "no work: bench_scheduler's simulated workers";
  w.keys = {{"tasks", "tasks per repeat"}};
  w.preset = [](const std::string&) {
    sb::Params p;
    p.set("tasks", "1");
    return p;
  };
  w.expand = [](const sb::Params& p) { return std::vector<sb::Params>{p}; };
  w.make_scheduler = [](const sb::CaseSpec& spec) -> std::unique_ptr<sb::SchedulerCase> {
    return std::make_unique<SimScheduler>(spec.params.i64("tasks", 1));
  };
  w.make_worker = [](const sb::CaseSpec&, const sb::CaseEnv&) -> std::unique_ptr<sb::WorkerCase> {
    throw sb::Error("bench-sim has no real workers");
  };
  w.cross_check = [](const sb::Fingerprint&, const sb::Fingerprint&) {
    return std::vector<sb::Check>{};
  };
  return w;
}

}  // namespace

SB_REGISTER_WORKLOAD(sim_workload);

namespace {

// ---------------------------------------------------------------- simulated workers

/// Every message the scheduler sends is answered at once by the worker it went to; the answers
/// wait in one queue, in order, for the scheduler's next receive.
class SimWorkers final : public sb::detail::MessageTransport {
 public:
  SimWorkers(int workers, bool gpus) : workers_(workers), outstanding_(workers + 1, 0) {
    // A finished task's REQUEST (want one more, one outcome), made once: the simulated
    // workers' own cost is not the scheduler's.
    sb::TaskOutcome o;
    o.partial = {1.0};
    o.end = 1e-6;
    Writer w;
    w.put<std::int32_t>(1).put<std::int32_t>(1);
    sb::detail::put_outcome(w, o);
    finished_ = w.bytes();
    for (int w = 1; w <= workers; ++w) {
      const int node = gpus ? (w - 1) / kGpusPerNode : w - 1;
      const std::string host = "node" + std::to_string(node);
      json rec = {{"threads", 1},
                  {"gpu", gpus ? (w - 1) % kGpusPerNode : -1},
                  {"host", host},
                  {"node", {{"host", host}, {"cpu_model", "simulated CPU"}, {"cores", 64}}}};
      if (gpus) {
        rec["gpu_description"] = {{"name", "simulated GPU"}, {"index", (w - 1) % kGpusPerNode}};
        rec["gpu_versions"] = json::object();
      }
      Writer wr;
      wr.put_str(rec.dump());
      push(w, sb::detail::kTagStartup, wr.bytes());
    }
  }

  void send(int dest, int tag, const std::vector<char>& data) override {
    using namespace sb::detail;
    ++sent_;
    switch (tag) {
      case kTagCaseBegin:
        if (t_case_begin_ == 0) {
          t_case_begin_ = sb::now();
          cpu_case_begin_ = thread_cpu_s();
        }
        push(dest, kTagReady, {});
        break;
      case kTagRepeatBegin: {
        if (t_repeats_ == 0) {
          t_repeats_ = sb::now();
          cpu_repeats_ = thread_cpu_s();
        }
        outstanding_[static_cast<std::size_t>(dest)] = 1;
        Writer w;
        w.put<std::int32_t>(3).put<std::int32_t>(0);  // prefetch 2 + 1, nothing finished yet
        push(dest, kTagRequest, w.bytes());
        break;
      }
      case kTagAssign: {
        Reader r(data);
        const std::vector<std::int64_t> ids = r.get_vec<std::int64_t>();
        int& out = outstanding_[static_cast<std::size_t>(dest)];
        --out;
        for (const std::int64_t id : ids) {  // each task done at once: its outcome, one more ask
          std::vector<char> msg = finished_;
          std::memcpy(msg.data() + kTaskOffset, &id, sizeof id);
          push(dest, kTagRequest, std::move(msg));
          ++out;
        }
        if (out == 0) {
          RepeatDone d;
          d.partial = {0.0};
          Writer w;
          put_done(w, d);
          push(dest, kTagDone, w.bytes());
        }
        break;
      }
      case kTagValidate: {
        if (t_validate_ == 0) {
          t_validate_ = sb::now();
          cpu_validate_ = thread_cpu_s();
        }
        Writer v;
        v.put_vec(std::vector<double>{1.0});
        push(dest, kTagValidation, v.bytes());
        Writer t;
        t.put_str("{}");
        push(dest, kTagTelemetry, t.bytes());
        break;
      }
      default:
        break;  // CASE_END, SHUTDOWN
    }
  }

  bool try_receive(int source, int tag, Message& out) override {
    for (auto it = inbox_.begin(); it != inbox_.end(); ++it) {
      if ((source >= 0 && it->source != source) || (tag >= 0 && it->tag != tag)) continue;
      out = std::move(*it);
      inbox_.erase(it);
      return true;
    }
    return false;
  }

  double t_case_begin_ = 0, t_repeats_ = 0, t_validate_ = 0;        ///< wall clock
  double cpu_case_begin_ = 0, cpu_repeats_ = 0, cpu_validate_ = 0;  ///< this thread's CPU time
  std::size_t sent_ = 0;

 private:
  void push(int source, int tag, std::vector<char> data) {
    inbox_.push_back({source, tag, std::move(data)});
  }
  static constexpr std::size_t kTaskOffset = 8;  ///< the outcome's task id, after want and count
  int workers_;
  std::vector<int> outstanding_;
  std::vector<char> finished_;
  std::deque<Message> inbox_;
};

/// "" when the stream holds `expected` case records (one per device of an each-* case), each
/// ok with every repeat run and its check passed; else what is wrong: a benchmark of a scheduler
/// that failed would measure nothing.
std::string records_not_ok(const std::string& stream, int expected) {
  std::ifstream in(stream);
  std::string line;
  int cases = 0;
  while (std::getline(in, line)) {
    const json r = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!r.is_object() || r.value("type", "") != "case") continue;
    ++cases;
    if (r.value("status", "") != "ok")
      return "a case record ended " + r.value("status", "?") + ": " + r.value("message", "");
    if (r.value("repeats", json::array()).size() != static_cast<std::size_t>(kRepeats))
      return "a case record has " + std::to_string(r.value("repeats", json::array()).size()) +
             " repeats, not " + std::to_string(kRepeats);
  }
  if (cases != expected)
    return std::to_string(cases) + " case records, not " + std::to_string(expected);
  return "";
}

void bm_scheduler(benchmark::State& state, sb::ExecPath path) {
  const int workers = static_cast<int>(state.range(0));
  const bool gpus = path == sb::ExecPath::each_gpu;
  const std::string stream =
      (std::filesystem::temp_directory_path() / ("bench_scheduler-" + std::to_string(getpid())))
          .string();
  double startup = 0, per_repeat = 0, record = 0, sent = 0, wall = 0;
  for (auto _ : state) {
    sb::JobPlan plan;
    plan.stream_path = stream;
    sb::CaseSpec spec;
    spec.workload = "bench-sim";
    spec.path = path;
    // Each device of an each-* case takes its own tasks; one case over every worker takes
    // kTasksPerWorker per worker.
    spec.params.set("tasks", std::to_string(gpus ? kTasksPerWorker : kTasksPerWorker * workers));
    spec.id = "bench-sim/" + std::string(sb::to_string(path)) + "/" + spec.params.canonical();
    spec.repeats = kRepeats;
    spec.warmup = 0;
    spec.workers = workers;
    plan.cases = {spec};
    SimWorkers sim(workers, gpus);
    sb::detail::RankContext ctx;
    ctx.size = workers + 1;
    ctx.host = "node0";
    std::remove(stream.c_str());  // the stream appends: one iteration's records each time
    sb::detail::set_message_transport(&sim);
    const double cpu0 = thread_cpu_s();
    sb::detail::run_scheduler(plan, ctx);
    const double cpu1 = thread_cpu_s();
    sb::detail::set_message_transport(nullptr);
    per_repeat = (sim.cpu_validate_ - sim.cpu_repeats_) / kRepeats;
    wall = (sim.t_validate_ - sim.t_repeats_) / kRepeats;
    startup = sim.cpu_case_begin_ - cpu0;
    record = cpu1 - sim.cpu_validate_;
    sent = static_cast<double>(sim.sent_);
    state.SetIterationTime(per_repeat);
    if (const std::string bad = records_not_ok(stream, gpus ? workers : 1); !bad.empty()) {
      state.SkipWithError(bad.c_str());
      break;
    }
  }
  std::remove(stream.c_str());
  // The benchmark's time: the scheduler thread's CPU time per repeat; the counters: its CPU
  // time for the start-up gathering and for the case's record, the wall time per repeat (which
  // a busy machine inflates) and the messages sent per repeat.
  state.counters["startup_ms"] = startup * 1e3;
  state.counters["record_ms"] = record * 1e3;
  state.counters["wall_ms"] = wall * 1e3;
  state.counters["sent_per_repeat"] = sent / kRepeats;
}

}  // namespace

BENCHMARK_CAPTURE(bm_scheduler, multi_cpu, sb::ExecPath::multi_cpu)
    ->RangeMultiplier(4)
    ->Range(16, 4096)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
BENCHMARK_CAPTURE(bm_scheduler, each_gpu, sb::ExecPath::each_gpu)
    ->RangeMultiplier(4)
    ->Range(16, 4096)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

int main(int argc, char** argv) {
  // The scheduler's own MPI calls go through the simulated workers; MPI is initialised only
  // because the runtime's error checks and start-up expect an initialised library.
  MPI_Init(&argc, &argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  MPI_Finalize();
  return 0;
}
