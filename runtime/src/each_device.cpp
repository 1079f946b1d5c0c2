// each-gpu and each-node: every device of the allocation measured on its own, all at once
// (each_device.hpp). The scheduler multiplexes the devices: every message is routed to the
// device its sender belongs to, and each device steps through begin, repeats, validation and
// its record independently of the others.
#include "each_device.hpp"

#include <algorithm>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "case_telemetry.hpp"
#include "message.hpp"
#include "participant_watch.hpp"
#include "repeat_timing.hpp"
#include "scalebench/case_forecast.hpp"
#include "scalebench/clock.hpp"
#include "scalebench/error.hpp"
#include "scalebench/utc_time.hpp"
#include "scalebench/workload.hpp"
#include "task_dispatch.hpp"

namespace sb::detail {
namespace {

using json = nlohmann::json;

/// One device while its case runs.
struct DeviceRun {
  std::string name;  ///< "node1:gpu0" or "node1"
  std::vector<WorkerInfo> parts;
  std::map<int, int> case_rank;  ///< world rank -> rank within the device
  CaseSpec spec;
  std::unique_ptr<SchedulerCase> sc;
  json rec;
  int ready = 0;
  int repeat = -1;  ///< repeat running (warm-up ones first), -1 before the first
  std::size_t done_workers = 0;
  std::int64_t next_task = 0;
  RepeatTiming timing;
  double cpu0 = 0;
  double timed_t0 = 0;  ///< when its first timed repeat began (`--repeats auto`'s time limit)
  double warm_t0 = 0;   ///< when its first warm-up repeat ended (spec.warmup grows: warm_up_more)
  RepeatStop stop;
  std::vector<double> totals, computes, scheduler_cpu;
  json repeats = json::array();
  json results = json::array();
  TaskEvents events;
  std::vector<std::vector<double>> vparts;
  std::size_t vgot = 0;
  std::vector<WorkerTelemetry> telemetry;
  bool repeats_done = false;  ///< its repeat rule said stop
  bool validating = false;    ///< VALIDATE sent
  bool finished = false;
};

/// The devices of an each-* case: every GPU worker, or every node's workers.
std::vector<DeviceRun> plan_devices(const CaseSpec& spec, const std::vector<WorkerInfo>& workers) {
  std::vector<DeviceRun> out;
  if (spec.path == ExecPath::each_gpu) {
    for (const auto& w : workers) {
      if (!w.gpu) continue;
      DeviceRun d;
      d.name = fmt::format("{}:gpu{}", w.host, w.node_gpu);
      d.parts = {w};
      out.push_back(std::move(d));
    }
  } else {
    std::map<std::string, std::size_t> by_host;
    for (const auto& w : workers) {
      const auto [it, fresh] = by_host.emplace(w.host, out.size());
      if (fresh) {
        DeviceRun d;
        d.name = w.host;
        out.push_back(std::move(d));
      }
      out[it->second].parts.push_back(w);
    }
  }
  for (auto& d : out) {
    d.spec = spec;
    d.spec.id = spec.id + "/" + d.name;
    d.spec.workers = static_cast<int>(d.parts.size());
    for (std::size_t i = 0; i < d.parts.size(); ++i)
      d.case_rank[d.parts[i].rank] = static_cast<int>(i);
    d.vparts.resize(d.parts.size());
  }
  return out;
}

class Sweep {
 public:
  Sweep(const JobPlan& plan, RankContext& ctx, StreamWriter& out, CrossCheckReferences& refs,
        const CaseSpec& spec, int k, int n)
      : plan_(plan),
        ctx_(ctx),
        out_(out),
        refs_(refs),
        spec_(spec),
        k_(k),
        n_(n),
        wl_(find_workload(spec.workload)) {}

  bool run(std::vector<DeviceRun> devices) {
    devices_ = std::move(devices);
    open_ = repeating_ = devices_.size();
    for (const auto& d : devices_) move_repeat(d, -2, d.repeat);  // none has begun: -1
    for (std::size_t i = 0; i < devices_.size(); ++i)
      for (const auto& p : devices_[i].parts) {
        if (static_cast<std::size_t>(p.rank) >= owner_.size())
          owner_.resize(static_cast<std::size_t>(p.rank) + 1, kNoDevice);
        owner_[static_cast<std::size_t>(p.rank)] = i;
      }
    deadline_ = plan_.case_timeout_s > 0 ? now() + plan_.case_timeout_s : 0;
    for (auto& d : devices_) begin(d);
    Backoff backoff(device_of(spec_.path) == Device::gpu ? kGpuPollUs : kCpuPollUs);
    Message m;
    while (open_devices() > 0) {
      if (!try_receive(ctx_.world, MPI_ANY_SOURCE, MPI_ANY_TAG, m)) {
        sync_records();
        if (deadline_ > 0 && now() > deadline_) time_out();
        backoff.pause();
        continue;
      }
      backoff.reset();
      if (m.source < 0 || static_cast<std::size_t>(m.source) >= owner_.size() ||
          owner_[static_cast<std::size_t>(m.source)] == kNoDevice)
        continue;
      watch_.heard(m);
      DeviceRun& d = devices_[owner_[static_cast<std::size_t>(m.source)]];
      if (d.finished) continue;  // a failed device's late messages
      try {
        dispatch(d, m);
      } catch (const std::exception& e) {
        fail(d, "failed", e.what());
      }
      report_progress();
    }
    sync_records();
    return restart_;
  }

 private:
  // Counts kept as devices move on, not recounted per message: with thousands of devices a
  // scan per message grew with the square of their number (bench/bench_scheduler.cpp).
  [[nodiscard]] std::size_t open_devices() const { return open_; }

  /// Device `d` (still open) moves from repeat `from` to `to` (-2: gone) in the progress count.
  void move_repeat(const DeviceRun& d, int from, int to) {
    if (from != -2) {
      auto it = at_repeat_.find({from, d.spec.warmup});
      if (it != at_repeat_.end() && --it->second == 0) at_repeat_.erase(it);
    }
    if (to != -2) ++at_repeat_[{to, d.spec.warmup}];
  }

  void begin(DeviceRun& d) {
    d.rec = record_head(d.spec);
    d.rec["planned_id"] = spec_.id;
    d.rec["device_id"] = d.name;
    d.rec["host"] = d.parts.front().host;
    d.rec["gpu"] = spec_.path == ExecPath::each_gpu ? d.parts.front().node_gpu : -1;
    d.rec["device_model"] = d.parts.front().model;
    d.rec["devices"] = static_cast<int>(devices_.size());
    d.rec["threads_per_worker"] = d.parts.front().threads;
    d.rec["hosts"] = json::array();
    for (const auto& p : d.parts) d.rec["hosts"].push_back(p.host);
    if (static_cast<int>(d.parts.size()) < wl_.min_workers) {
      // A workload of several workers (comms) on a node with fewer: that node is skipped.
      d.rec["status"] = "skipped";
      d.rec["not_applicable"] = true;  // no verdict: nothing is wrong with the node
      d.rec["message"] = cannot_run_reason(wl_, spec_.path, d.parts.size());
      emit(d);
      return;
    }
    d.sc = wl_.make_scheduler(d.spec);
    watch_.begin(d.parts, ParticipantWatch::Stage::setup);
    for (std::size_t i = 0; i < d.parts.size(); ++i) {
      const json j = {{"spec", case_spec_to_json(d.spec)},
                      {"rank", static_cast<int>(i)},
                      {"size", d.spec.workers},
                      {"threads", d.parts[i].threads},
                      {"series_points", series_points(d.spec.workers)},
                      {"concurrent", true},
                      {"comm", "node"}};
      Writer w;
      w.put_str(j.dump());
      send(ctx_.world, d.parts[i].rank, kTagCaseBegin, w);
    }
  }

  void dispatch(DeviceRun& d, const Message& m) {
    Reader rd(m.data);
    const int crank = d.case_rank.at(m.source);
    switch (m.tag) {
      case kTagError:
        fail(d, "failed", fmt::format("rank {}: {}", m.source, rd.get_str()));
        break;
      case kTagReady:
        if (++d.ready == static_cast<int>(d.parts.size())) start_repeat(d);
        break;
      case kTagRequest:
        on_request(d, m.source, rd);
        break;
      case kTagDone: {
        const RepeatDone done = get_done(rd);
        d.timing.on_done(crank, done);
        d.sc->on_worker_done(crank, done.partial);
        if (++d.done_workers == d.parts.size()) end_repeat(d);
        break;
      }
      case kTagValidation:
        d.vparts[static_cast<std::size_t>(crank)] = rd.get_vec<double>();
        if (++d.vgot == 2 * d.parts.size()) finish(d);
        break;
      case kTagTelemetry:
        d.telemetry.push_back({crank, d.parts[static_cast<std::size_t>(crank)].host,
                               d.parts[static_cast<std::size_t>(crank)].node_gpu,
                               json::parse(rd.get_str())});
        if (++d.vgot == 2 * d.parts.size()) finish(d);
        break;
      default:
        throw Error(fmt::format("internal: unexpected tag {} in an each-device case", m.tag));
    }
  }

  void start_repeat(DeviceRun& d) {
    move_repeat(d, d.repeat, -2);
    ++d.repeat;
    d.sc->begin_repeat();
    d.next_task = 0;
    d.done_workers = 0;
    if (d.repeat == 1) d.warm_t0 = now();
    // This device's warm-up goes on while warm_up_more says (repeat_rule.hpp).
    if (d.repeat == d.spec.warmup &&
        warm_up_more(d.repeat, d.spec.warmup, d.repeat == 0 ? 0.0 : now() - d.warm_t0))
      ++d.spec.warmup;
    const bool measured = d.repeat >= d.spec.warmup;
    move_repeat(d, -2, d.repeat);
    Writer rb;
    rb.put<std::int32_t>(measured ? d.repeat - d.spec.warmup : -1);  // -1: a warm-up repeat
    d.cpu0 = process_cpu();
    d.timing.begin(out_.seconds_writing(), plan_.trace);
    if (d.repeat == d.spec.warmup) d.timed_t0 = now();
    watch_.begin(d.parts, ParticipantWatch::Stage::repeat,
                 measured ? d.repeat - d.spec.warmup : -1);
    for (const auto& p : d.parts) send(ctx_.world, p.rank, kTagRepeatBegin, rb);
  }

  void on_request(DeviceRun& d, int source, Reader& rd) {
    const std::int64_t first = d.next_task;
    answer_request(ctx_.world, source, d.case_rank.at(source), rd, *d.sc, d.events,
                   d.repeat >= d.spec.warmup ? d.repeat - d.spec.warmup : -1, d.next_task);
    watch_.assigned(source, first, d.next_task);
  }

  void end_repeat(DeviceRun& d) {
    const double total = d.timing.end(out_.seconds_writing());
    const double cpu = process_cpu() - d.cpu0;
    json result = d.sc->end_repeat();
    const bool measured = d.repeat >= d.spec.warmup;
    if (plan_.trace)
      std::fputs(
          d.timing
              .trace_lines(d.rec.value("id", spec_.id), measured ? d.repeat - d.spec.warmup : -1)
              .c_str(),
          stderr);
    if (measured) {
      d.totals.push_back(total);
      d.computes.push_back(d.timing.phases().compute);
      d.scheduler_cpu.push_back(cpu);
      d.repeats.push_back(d.timing.record());
      d.results.push_back(std::move(result));
    }
    // Each device takes repeats until its own repeat rule says stop (repeat_rule.hpp).
    if (measured) d.stop = repeat_stop(spec_.repeat_rule(), d.totals, now() - d.timed_t0);
    if (!d.stop.stop) {
      start_repeat(d);
    } else {
      d.repeats_done = true;
      --repeating_;
      d.rec["warmup"] = d.spec.warmup;  // the warm-up repeats run
      validate_when_all_done();
    }
  }

  /// Validation (CPU work: threads, BLAS) and the device's record (a durable write) wait until
  /// every device has finished its repeats, so that none of them runs beside another device's
  /// timed repeats (the first repeats of a case ran 10x slower beside them: --trace of svd and
  /// groupby seed on each-gpu).
  void validate_when_all_done() {
    if (repeating_ > 0 || validating_) return;
    validating_ = true;
    for (auto& d : devices_) {
      if (d.finished || d.validating) continue;
      d.validating = true;
      watch_.begin(d.parts, ParticipantWatch::Stage::validation);
      for (const auto& p : d.parts) send_empty(ctx_.world, p.rank, kTagValidate);
    }
  }

  /// All repeats, validation parts and telemetry are in: the device's record.
  void finish(DeviceRun& d) {
    for (const auto& p : d.parts) send_empty(ctx_.world, p.rank, kTagCaseEnd);
    json& rec = d.rec;
    rec["repeat_stop"] = repeat_stop_record(spec_.repeat_rule(), d.stop, d.totals.size());
    rec["repeats"] = d.repeats;
    rec["results"] = d.results;
    rec["result"] = d.results.empty() ? json::object() : d.results.back();
    rec["task_events"] = d.events.to_json();
    std::vector<Check> checks = d.sc->validate(d.vparts);
    for (Check c : refs_.check(d.spec, wl_, d.sc->fingerprint(),
                               fmt::format("{} {}", to_string(spec_.path), d.name)))
      checks.push_back(std::move(c));
    set_validation(rec, checks);
    const CaseTelemetry t =
        combine_telemetry(d.telemetry, SchedulerCpu{ctx_.host, d.scheduler_cpu}, d.totals.size());
    add_telemetry(rec, t);
    set_work_and_metrics(rec, d.sc->work(), d.totals, d.computes, t.throttled,
                         plan_.keep_throttled);
    // A workload's own figures (SchedulerCase::metrics) over the runtime's, as on other paths.
    if (const json own = d.sc->metrics(); own.is_object())
      for (const auto& [key, value] : own.items()) rec["metrics"][key] = value;
    emit(d);
  }

  void fail(DeviceRun& d, const std::string& status, const std::string& message) {
    d.rec["status"] = status;
    d.rec["message"] = message;
    d.rec["repeats"] = d.repeats;
    // One worker recovers by itself after an error; several may wait in a collective.
    if (d.parts.size() > 1 || status == "timeout") {
      restart_ = true;
    } else {
      for (const auto& p : d.parts) send_empty(ctx_.world, p.rank, kTagCaseEnd);
    }
    emit(d);
    validate_when_all_done();
  }

  void time_out() {
    for (auto& d : devices_)
      if (!d.finished) {
        // Its step and who had not finished it, doing what (participant_watch.hpp).
        const std::string who = watch_.unfinished(d.parts);
        fail(d, "timeout",
             fmt::format("{} exceeded --case-timeout of {} s in {}{}", d.name, plan_.case_timeout_s,
                         watch_.step(d.parts),
                         who.empty() ? std::string() : ": not finished: " + who));
      }
  }

  void emit(DeviceRun& d) {
    if (!d.finished) {
      --open_;
      if (!d.repeats_done) --repeating_;
      move_repeat(d, d.repeat, -2);
    }
    d.finished = true;
    d.rec["ended_utc"] = utc_now();
    // Flushed now, made durable with the others that finish with it (sync_records): the
    // devices finish together, and an fsync each cost thousands of them seconds.
    out_.write(d.rec, /*durable=*/false);
    unsynced_ = true;
  }

  /// This process's CPU time; with more than 64 devices read at most once a millisecond: the
  /// process-wide clock sums every thread (a system call), and thousands of devices start and
  /// end repeats within one.
  double process_cpu() {
    const double t = now();
    if (devices_.size() <= 64 || t - cpu_read_at_ > 1e-3) {
      cpu_ = process_cpu_s();
      cpu_read_at_ = t;
    }
    return cpu_;
  }

  /// fsync's the records written since the last time, once: whenever no message waits, and
  /// before the case's end.
  void sync_records() {
    if (!unsynced_) return;
    out_.sync();
    unsynced_ = false;
  }

  /// A progress record whenever the slowest device still running starts a repeat.
  void report_progress() {
    if (at_repeat_.empty()) return;
    const auto [slowest, warmup] = at_repeat_.begin()->first;
    if (slowest < 0 || slowest == last_progress_) return;
    last_progress_ = slowest;
    out_.write({{"type", "progress"},
                {"case", k_},
                {"cases", n_},
                {"id", spec_.id},
                {"workload", spec_.workload},
                {"path", std::string(to_string(spec_.path))},
                {"repeat", slowest - warmup},
                {"repeats", spec_.repeats},
                {"auto", spec_.repeat_rule().adaptive()},
                {"warmup", slowest < warmup},
                {"devices", open_devices()}},
               false);
  }

  const JobPlan& plan_;
  RankContext& ctx_;
  StreamWriter& out_;
  CrossCheckReferences& refs_;
  const CaseSpec& spec_;
  int k_, n_;
  const Workload& wl_;
  static constexpr std::size_t kNoDevice = static_cast<std::size_t>(-1);
  std::vector<DeviceRun> devices_;
  std::vector<std::size_t> owner_;     ///< world rank -> device (kNoDevice: none)
  std::size_t open_ = 0;               ///< devices without their record yet
  std::size_t repeating_ = 0;          ///< open devices still taking repeats
  bool validating_ = false;            ///< VALIDATE sent to every open device
  bool unsynced_ = false;              ///< records written since the last fsync
  double cpu_ = 0, cpu_read_at_ = -1;  ///< process_cpu()'s last reading and when
  /// Open devices per (repeat, warm-up repeats): the slowest is the first.
  std::map<std::pair<int, int>, std::size_t> at_repeat_;
  double deadline_ = 0;
  int last_progress_ = -1;
  ParticipantWatch watch_;  ///< what each worker was last doing (a timeout names them)
  bool restart_ = false;
};

}  // namespace

bool EachDevice::run(const CaseSpec& spec, int k, int n) {
  std::vector<DeviceRun> devices = plan_devices(spec, workers_);
  if (devices.empty()) {
    json rec = record_head(spec);
    rec["planned_id"] = spec.id;
    rec["workers"] = 0;
    rec["status"] = "skipped";
    rec["message"] = gpu_skip_reason_;
    rec["ended_utc"] = utc_now();
    out_.write(rec, true);
    return false;
  }
  Sweep sweep(plan_, ctx_, out_, references_, spec, k, n);
  return sweep.run(std::move(devices));
}

}  // namespace sb::detail
